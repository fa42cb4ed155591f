"""``obelize-bench show CASE``: one record explained, from its facts (``report/case_facts.py``).

The explanation is built as data first (``explain_case``, pure but for the paths it resolves),
then printed as text or JSON, so both say the same. Its rows come from the case's facts, the same
the results document and pages state: the graded facts beside the record or, for a published round
that has none (upstream's round 1), the round's error analysis, and it says which. The record is the
published one unless a run is named; the logs are looked up under the work root, where the round
left them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from pytest_obelize_bench.grading.error_classes import error_class
from pytest_obelize_bench.grading.record import RecordError
from pytest_obelize_bench.grading.tiers import explain_tier
from pytest_obelize_bench.records.published import read_bounded_text
from pytest_obelize_bench.report.case_facts import CaseFacts
from pytest_obelize_bench.tool.evidence_copy import kept_patch, patch_publishable

PATCH_SHOWN_BYTES = 64 * 1024
_NO_LANDING = "no applied edit landed on its line"
#: What ``show`` says of a patch that is neither in the logs nor beside the record, by the facts' reason.
_NO_PATCH = {
    "nothing_written": "none: obelize wrote nothing",
    "errored": "none: the case errored before anything was written",
    "imported": "no patch.diff in the logs, and the round was imported from another harness, which published none",
}


def unmigrated_rows(facts: CaseFacts) -> list[dict[str, Any]] | None:
    """Each key row the run left as it was, with what withheld it (a bail code, or no edit); None
    when the facts hold no rows (no key, or no evidence)."""
    if facts.rows is None:
        return None
    return [
        {"path": row.path, "line": row.line, "symbol": row.symbol,
         "withheld_by": row.cause if row.state != "missed" and row.cause else _NO_LANDING}
        for row in facts.rows
        if row.state != "migrated"
    ]  # fmt: skip


def _rows_from(facts: CaseFacts) -> str | None:
    if facts.rows_source == "error_analysis":
        return f"the round's error analysis, {facts.collected_name} (the records carry no graded facts)"
    return "the graded facts beside the record" if facts.rows_source == "graded_facts" else None


def _forbidden(facts: CaseFacts) -> list[dict[str, Any]] | None:
    if facts.forbidden is None:
        return None
    return [{"path": f.path, "line": f.line, "kind": f.kind, "symbol": f.symbol, "why_forbidden": f.why}
            for f in facts.forbidden]  # fmt: skip


def explain_case(facts: CaseFacts, *, source: str, logs: Path | None) -> dict[str, Any]:
    """Everything ``show`` prints about one record, as JSON-ready data."""
    record, case = facts.record, facts.key
    steps = []
    for index, step in enumerate(record.steps, start=1):
        log = None if logs is None else logs / f"{index:02d}-{step.name}.log"
        steps.append(
            {
                "number": step.number,
                "name": step.name,
                "exit_code": step.exit_code,
                "duration_s": step.duration_s,
                "timed_out": step.timed_out,
                "log": None if log is None else str(log),
                "log_exists": bool(log is not None and log.is_file()),
            }
        )
    error = None
    if record.error is not None:
        error = {**record.error.model_dump(), "class": error_class(record.error.reason, record.error.step)}
    patch: str | None = None
    patch_note = _NO_PATCH.get(facts.patch_absent or "", "no patch.diff in the logs")
    written = facts.patch_absent not in ("nothing_written", "errored")
    if written and case is not None and not patch_publishable(case.license):
        patch_note = f"not shown: the licence ({case.license}) does not allow publishing the patch"
    elif written and logs is not None:
        diff = kept_patch(logs)
        if diff.is_file() and not diff.is_symlink():
            try:
                patch = read_bounded_text(diff, PATCH_SHOWN_BYTES)
                patch_note = str(diff)
            except RecordError as exc:
                patch_note = str(exc)
    if patch is None and facts.patch is not None:
        patch, patch_note = facts.patch, "published beside the record"
    return {
        "case": record.case,
        "source": source,
        "tier": record.tier,
        "explanation": explain_tier(record.error, record.measurements),
        "error": error,
        "steps": steps,
        "logs": None if logs is None else str(logs),
        "rows_from": _rows_from(facts),
        "unmigrated": unmigrated_rows(facts),
        "forbidden_reported": _forbidden(facts),
        "patch": patch,
        "patch_note": patch_note,
    }


def print_explanation(data: Mapping[str, Any], out: TextIO, *, as_json: bool) -> None:
    if as_json:
        print(json.dumps(data, indent=2, sort_keys=True), file=out)
        return
    print(f"{data['case']}  ({data['source']})", file=out)
    print(f"tier: {data['explanation']}", file=out)
    if data["error"]:
        e = data["error"]
        print(f"error: {e['class']}: {e['step']}: {e['reason']}: {e['detail']}", file=out)
    print("steps:", file=out)
    if not data["steps"]:
        print("  (none ran)", file=out)
    for step in data["steps"]:
        flag = " TIMED OUT" if step["timed_out"] else ""
        where = step["log"] if step["log_exists"] else f"{step['log']} (gone)" if step["log"] else "--"
        print(
            f"  {step['number']:>2} {step['name']:<20} exit {step['exit_code']:>3}  "
            f"{step['duration_s']:>8.2f}s{flag}  {where}",
            file=out,
        )
    if data["unmigrated"] is None:
        print("unmigrated rows: -- (no graded facts, and no error analysis lists the case)", file=out)
    else:
        print(f"unmigrated rows ({len(data['unmigrated'])}): from {data['rows_from']}", file=out)
        for row in data["unmigrated"]:
            print(f"  {row['path']}:{row['line']}:{row['symbol']}  withheld by {row['withheld_by']}", file=out)
    if data["forbidden_reported"] is None:
        print("forbidden reports: -- (no graded facts, and no error analysis lists the case)", file=out)
    else:
        print(f"forbidden reports ({len(data['forbidden_reported'])}):", file=out)
        for row in data["forbidden_reported"]:
            print(f"  {row['path']}:{row['line']} {row['kind']} {row['symbol']}  ({row['why_forbidden']})", file=out)
    if data["patch"] is not None:
        print(f"patch ({data['patch_note']}):", file=out)
        out.write(data["patch"] if data["patch"].endswith("\n") else data["patch"] + "\n")
    else:
        print(f"patch: {data['patch_note']}", file=out)


__all__ = ["explain_case", "print_explanation", "unmigrated_rows"]
