"""``obelize-bench show CASE``: one record explained, from the record, its key and its facts.

The explanation is built as data first (``explain_case``, pure but for the paths it resolves),
then printed as text or JSON, so both say the same. The record is the published one unless a run
is named; the logs are looked up under the work root, where the round left them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from pytest_obelize_bench.casefile.cases import Case
from pytest_obelize_bench.grading.error_classes import error_class
from pytest_obelize_bench.grading.grade import expected_rows, landed_positions
from pytest_obelize_bench.grading.graded_facts import Artefacts
from pytest_obelize_bench.grading.record import Record, RecordError
from pytest_obelize_bench.grading.tiers import explain_tier
from pytest_obelize_bench.records.published import read_bounded_text
from pytest_obelize_bench.tool.evidence_copy import kept_patch, patch_publishable

PATCH_SHOWN_BYTES = 64 * 1024


def unmigrated_rows(case: Case, artefacts: Artefacts) -> list[dict[str, Any]]:
    """Each key row the run left as it was, with what withheld it (a bail code, or no edit)."""
    if case.control:
        return []
    landed = landed_positions(artefacts)
    withheld: dict[tuple[str, int, str], str] = {}
    for row in artefacts.withheld:
        withheld.setdefault((row.path, row.line, row.symbol or ""), row.bail)
    rows = []
    for path, line, symbol in expected_rows(case):
        bail = withheld.get((path, line, symbol))
        if bail is None and landed[(path, line)] > 0:
            continue
        rows.append(
            {"path": path, "line": line, "symbol": symbol, "withheld_by": bail or "no applied edit landed on its line"}
        )
    return rows


def forbidden_reports(case: Case, artefacts: Artefacts) -> list[dict[str, Any]]:
    """Findings at positions the key says nothing may be reported, with the key's reason."""
    why = {(row.path, row.line): row.why for row in case.ground_truth.must_not_report}
    return [
        {"path": f.path, "line": f.line, "kind": f.kind, "symbol": f.symbol, "why_forbidden": why[(f.path, f.line)]}
        for f in artefacts.findings
        if (f.path, f.line) in why
    ]


def explain_case(
    record: Record,
    case: Case | None,
    artefacts: Artefacts | None,
    *,
    source: str,
    logs: Path | None,
) -> dict[str, Any]:
    """Everything ``show`` prints about one record, as JSON-ready data."""
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
    patch_note = "no patch.diff in the logs"
    if case is not None and not patch_publishable(case.license):
        patch_note = f"not shown: the licence ({case.license}) does not allow publishing the patch"
    elif logs is not None:
        diff = kept_patch(logs)
        if diff.is_file() and not diff.is_symlink():
            try:
                patch = read_bounded_text(diff, PATCH_SHOWN_BYTES)
                patch_note = str(diff)
            except RecordError as exc:
                patch_note = str(exc)
    return {
        "case": record.case,
        "source": source,
        "tier": record.tier,
        "explanation": explain_tier(record.error, record.measurements),
        "error": error,
        "steps": steps,
        "logs": None if logs is None else str(logs),
        "unmigrated": None if case is None or artefacts is None else unmigrated_rows(case, artefacts),
        "forbidden_reported": None if case is None or artefacts is None else forbidden_reports(case, artefacts),
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
        print("unmigrated rows: -- (no graded facts)", file=out)
    else:
        print(f"unmigrated rows ({len(data['unmigrated'])}):", file=out)
        for row in data["unmigrated"]:
            print(f"  {row['path']}:{row['line']}:{row['symbol']}  withheld by {row['withheld_by']}", file=out)
    if data["forbidden_reported"] is None:
        print("forbidden reports: -- (no graded facts)", file=out)
    else:
        print(f"forbidden reports ({len(data['forbidden_reported'])}):", file=out)
        for row in data["forbidden_reported"]:
            print(f"  {row['path']}:{row['line']} {row['kind']} {row['symbol']}  ({row['why_forbidden']})", file=out)
    if data["patch"] is not None:
        print(f"patch ({data['patch_note']}):", file=out)
        out.write(data["patch"] if data["patch"].endswith("\n") else data["patch"] + "\n")
    else:
        print(f"patch: {data['patch_note']}", file=out)


__all__ = ["explain_case", "forbidden_reports", "print_explanation", "unmigrated_rows"]
