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

from packaging.version import InvalidVersion, Version

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench.dryrun.outcomes import (
    DOCUMENT_NAME,
    DryRunDocument,
    DryRunRecord,
    DryRunRecordError,
    WithheldRow,
    load_dryrun_document,
    outcome,
    pack_slug,
    usage_count,
)
from pytest_obelize_bench.dryrun.pack_block import render_dryrun_block
from pytest_obelize_bench.dryrun.release_files import RELEASES, pack_folder
from pytest_obelize_bench.dryrun.release_history import ABSENT, release_folder_name, result
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
    """The pack's blocked reason: ``packs[].blocked``, or in obelize 0.1.0's run.json (one pack per run)
    the top-level ``blocked`` beside ``pack.id``."""
    run = read_run_document(folder, "run.json", "fix")
    packs = run.get("packs") if isinstance(run, dict) else None
    single = run.get("pack") if isinstance(run, dict) else None
    if packs is None and isinstance(single, dict) and "blocked" in run:
        packs = [{"id": single.get("id"), "blocked": run["blocked"]}]
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


def pack_absent_error(context: MeasureContext) -> str | None:
    """The record's error when the release under test ships no such pack (nothing is run then)."""
    if context.pack_provenance is None or context.pack_provenance.bundled is not False:
        return None
    version = "?" if context.tool is None else context.tool.version
    return f"{ABSENT}: fix: obelize {version} does not ship the pack {context.pack}"


def measure(repo: FrameRepository, context: MeasureContext, frame_dir: Path) -> tuple[DryRunRecord, RepoRun | None]:
    absent = pack_absent_error(context)
    if absent is not None:
        return DryRunRecord(full_name=repo.full_name, sha=repo.sha, band=repo.band, outcome=None, error=absent), None
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
    if run is not None and run.workspace is not None:
        (Path(run.workspace.logs) / "record.json").write_text(record.model_dump_json(indent=2), encoding="utf-8")
    failure = None
    if repo.expected is not None and record.outcome != repo.expected:
        got = record.outcome or f"an error ({record.error})"
        failure = f"{repo.full_name}: the dry run gave {got}, the fixture expects {repo.expected}"
    return record.model_dump_json(), status(record), failure


def _older_than_published(folder: Path, version: str | None) -> str | None:
    """The published dry run's release when it is newer than ``version`` (it then stays); else None."""
    published = folder / DOCUMENT_NAME
    if not (published.exists() or published.is_symlink()):
        return None
    try:
        have = load_dryrun_document(published).obelize_version
        return have if have and version and Version(have) > Version(version) else None
    except (DryRunRecordError, InvalidVersion):
        return None  # an unreadable or unordered one is replaced: summarize --check names what it was


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
    """Keep the release's dry run (``releases/<release>/dryrun.json``) and, unless a newer release's is
    published or the release does not ship the pack, publish it as the pack's dryrun.json with its
    block (unless told not to); the lines saying so."""
    tool = context.tool
    document = DryRunDocument(
        pack=context.pack,
        frame=frame_label,
        term=frame.term,
        obelize_version=None if tool is None else tool.version,
        obelize_commit=None if tool is None else tool.commit,
        pack_sha256=None if context.pack_provenance is None else context.pack_provenance.pack_sha256,
        harness_commit=context.harness.commit,
        run_at=context.run_at,
        draw_rule=frame.draw_rule,
        biases=list(frame.biases),
        records=[records[repo.full_name] for repo in frame.repositories],
    )
    results = Path(context.results_dir)
    folder = pack_folder(results, context.pack)
    text = document.to_json()
    common: dict[str, Any] = {
        "measurement": "dryrun",
        "pack": context.pack,
        "session": session,
        "run_at": context.run_at,
        "repositories": len(document.records),
        "infrastructure": infrastructure,
    }
    lines: list[str] = []
    release = release_folder_name(document.obelize_version, document.obelize_commit)
    if release is not None:
        target = folder / RELEASES / release / DOCUMENT_NAME
        lines += write_measurement(results, target, text, block=None, **common)
    absent = pack_absent_error(context)
    newer = _older_than_published(folder, document.obelize_version)
    if absent is not None or newer is not None:
        why = "the release does not ship the pack" if absent is not None else f"obelize {newer} is newer"
        lines.append(f"{folder / DOCUMENT_NAME} stays as published ({why}); `obelize-bench history --frame "
                     f"{context.pack}` reads this release's dry run")  # fmt: skip
        return lines
    name = f"dryrun-{pack_slug(context.pack)}"
    block = (name, render_dryrun_block(document), f"{name} block") if write_block else None
    return lines + write_measurement(results, folder / DOCUMENT_NAME, text, block=block, **common)


def outcome_line(records: Mapping[str, DryRunRecord]) -> str:
    counts: Counter[str] = Counter(result(record) for record in records.values())
    order = [*OUTCOME_DISPLAY, "error", ABSENT]
    return "dry run: " + ", ".join(f"{counts[name]} {name.replace('_', ' ')}" for name in order if counts[name])


def parse_record(text: str) -> DryRunRecord:
    return DryRunRecord.model_validate_json(text)


__all__ = [
    "OUTCOME_DISPLAY",
    "measure",
    "outcome_line",
    "pack_absent_error",
    "parse_record",
    "plan_unit",
    "publish",
    "status",
]
