"""The fix dry run on one repository of a pack's frame: its outcome as status, and publication.

The worker side plans one repository and reads the run folder (untrusted, bounded); the controller
publishes ``results/dryrun/<pack slug>/dryrun.json`` and the pack's block only when every
repository of the frame produced a record, and never for a fixture frame.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench.dryrun.outcomes import (
    DOCUMENT_NAME,
    DryRunDocument,
    DryRunRecord,
    WithheldRow,
    outcome,
    pack_slug,
    usage_count,
)
from pytest_obelize_bench.dryrun.pack_block import render_dryrun_block
from pytest_obelize_bench.isolation.machine import this_machine
from pytest_obelize_bench.isolation.public_text import public_text
from pytest_obelize_bench.measure.frame import Frame, FrameRepository
from pytest_obelize_bench.measure.measure_publication import write_measurement
from pytest_obelize_bench.measure.repository_run import (
    MeasureContext,
    RepoRun,
    prepare,
    run_dry_fix,
)
from pytest_obelize_bench.tool.run_documents import path_problem
from pytest_obelize_bench.tool.runfolder import read_artefacts, read_run_document

#: Letter and word of each outcome in the terminal.
OUTCOME_DISPLAY: dict[str, tuple[str, str]] = {
    "blocked": ("B", "BLOCKED"),
    "none": ("0", "NONE"),
    "held": ("H", "HELD"),
    "partial": ("P", "PARTIAL"),
    "complete": ("C", "COMPLETE"),
}
_BLOCKED = re.compile(r"[a-z][a-z0-9_]{0,80}")


def _unreadable(detail: str) -> CaseError:
    return CaseError("fix", "run_folder_unreadable", detail[:500])


def _planned_files(folder: Path) -> int:
    plan = read_run_document(folder, "plan.json", "fix")
    if not isinstance(plan, dict) or not isinstance(plan.get("files"), list):
        raise _unreadable("plan.json: expected an object with files[]")
    for index, row in enumerate(plan["files"]):
        path = row.get("path") if isinstance(row, dict) else None
        if not isinstance(path, str) or path_problem(path) is not None:
            raise _unreadable(f"plan.json: files[{index}].path is not a path inside the repository")
    return len(plan["files"])


def _blocked(folder: Path, pack: str) -> str | None:
    run = read_run_document(folder, "run.json", "fix")
    packs = run.get("packs") if isinstance(run, dict) else None
    if not isinstance(packs, list):
        raise _unreadable("run.json: expected an object with packs[]")
    for row in packs:
        if isinstance(row, dict) and row.get("id") == pack:
            value = row.get("blocked")
            if value is None:
                return None
            if not isinstance(value, str) or not _BLOCKED.fullmatch(value):
                raise _unreadable("run.json: packs[].blocked is not a reason code")
            return value
    raise _unreadable(f"run.json: packs[] does not name {pack}")


def measure(repo: FrameRepository, context: MeasureContext, frame_dir: Path) -> tuple[DryRunRecord, RepoRun]:
    run = prepare(repo, context, frame_dir=frame_dir)
    facts: dict[str, Any] = {}
    if run.error is None:
        try:
            folder, seconds = run_dry_fix(run, context)
            artefacts = read_artefacts(folder, run.checkout)
            if artefacts.written:
                raise _unreadable("run.json: file_edits[] is not empty, but a dry run writes nothing")
            files = _planned_files(folder)
            blocked = _blocked(folder, context.pack)
            usages = usage_count(finding.kind for finding in artefacts.findings)
            facts = {
                "outcome": outcome(
                    blocked=blocked, usages=usages, files_planned=files, withheld=len(artefacts.withheld)
                ),
                "files_planned": files,
                "blocked": blocked,
                "usages": usages,
                "withheld": [
                    WithheldRow(path=w.path, line=w.line, symbol=w.symbol, bail=w.bail) for w in artefacts.withheld
                ],
                "exit_code": artefacts.exit_code,
                "seconds": round(seconds, 2),
            }
        except CaseError as exc:
            run.error = exc
    error = None
    if run.error is not None:
        detail = public_text(run.error.detail, run.elider, os.environ.items(), this_machine())  # quotes a step
        error = f"{run.error.reason}: {run.error.step}: {detail}"
    record = DryRunRecord(
        full_name=repo.full_name, sha=repo.sha, band=repo.band, outcome=facts.pop("outcome", None), error=error, **facts
    )
    return record, run


def status(record: DryRunRecord) -> tuple[str, str, str]:
    if record.outcome is None:
        return "dryrun-error", "!", "ERROR"
    letter, word = OUTCOME_DISPLAY[record.outcome]
    return record.outcome, letter, word


def plan_unit(
    repo: FrameRepository, context: MeasureContext, frame_dir: Path
) -> tuple[str, tuple[str, str, str], str | None]:
    """One repository's dry run: its record as JSON, its terminal status, and the failure a fixture
    repository gets when it does not give its committed outcome."""
    record, run = measure(repo, context, frame_dir)
    if run.workspace is not None:
        (Path(run.workspace.logs) / "record.json").write_text(record.model_dump_json(indent=2), encoding="utf-8")
    failure = None
    if repo.expected is not None and record.outcome != repo.expected:
        got = record.outcome or f"an error ({record.error})"
        failure = f"{repo.full_name}: the dry run gave {got}, the fixture expects {repo.expected}"
    return record.model_dump_json(), status(record), failure


def publish(
    context: MeasureContext,
    frame: Frame,
    records: Mapping[str, DryRunRecord],
    *,
    frame_label: str,
    write_block: bool,
    session: str,
    infrastructure: int,
) -> list[str]:
    """Write the pack's dryrun.json, its note and (unless told not to) its block; the lines saying so."""
    document = DryRunDocument(
        pack=context.pack,
        frame=frame_label,
        term=frame.term,
        obelize_version=None if context.tool is None else context.tool.version,
        pack_sha256=None if context.pack_provenance is None else context.pack_provenance.pack_sha256,
        harness_commit=context.harness.commit,
        run_at=context.run_at,
        draw_rule=frame.draw_rule,
        biases=list(frame.biases),
        records=[records[repo.full_name] for repo in frame.repositories],
    )
    results = Path(context.results_dir)
    target = results / "dryrun" / pack_slug(context.pack) / DOCUMENT_NAME
    name = f"dryrun-{pack_slug(context.pack)}"
    return write_measurement(
        results,
        target,
        document.to_json(),
        measurement="dryrun",
        pack=context.pack,
        session=session,
        run_at=context.run_at,
        repositories=len(document.records),
        infrastructure=infrastructure,
        block=(name, render_dryrun_block(document), f"{name} block") if write_block else None,
    )


def outcome_line(records: Mapping[str, DryRunRecord]) -> str:
    counts: Counter[str] = Counter(record.outcome or "error" for record in records.values())
    order = [*OUTCOME_DISPLAY, "error"]
    return "dry run: " + ", ".join(f"{counts[name]} {name}" for name in order if counts[name])


def parse_record(text: str) -> DryRunRecord:
    return DryRunRecord.model_validate_json(text)


__all__ = ["OUTCOME_DISPLAY", "measure", "outcome_line", "parse_record", "plan_unit", "publish", "status"]
