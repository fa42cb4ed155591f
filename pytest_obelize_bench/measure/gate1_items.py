"""Gate 1 as pytest items: scan one repository of the frame, match it against its key, publish.

The worker side (``measure``) produces one ``ScannedRepository`` record per repository and, for a
labelled one, its match; the controller side (``publish``) writes ``results/gate1/scan.json`` in
the upstream shape and the Gate 1 block, and only for a run that covered the whole frame.
"""

from __future__ import annotations

import json
import platform
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench._util.validation import problem_text
from pytest_obelize_bench.measure.frame import Frame, FrameRepository
from pytest_obelize_bench.measure.labels import AnswerKey
from pytest_obelize_bench.measure.matching import KeyMatch, match_key
from pytest_obelize_bench.measure.outcome import MEASURE_OUTCOME_KEY, MeasureOutcome
from pytest_obelize_bench.measure.scanrecord import (
    Runtime,
    ScanCounts,
    ScanDocument,
    ScanFinding,
    ScannedRepository,
    dump_row,
)
from pytest_obelize_bench.measure.staging import (
    MeasureContext,
    RepoRun,
    declared_python,
    prepare,
    run_scan,
)

#: Gate 1 was defined for the Gemini pack only (the protocol).
GATE1_PACK = "gemini/google-generativeai-to-google-genai"


def _unreadable(detail: str) -> CaseError:
    return CaseError("scan", "run_folder_unreadable", detail[:500])


def read_findings(folder: Path) -> tuple[ScanCounts, list[ScanFinding]]:
    """findings.json of a scan run folder, as untrusted input: every row checked, no evidence kept."""
    from pytest_obelize_bench.tool.run_documents import path_problem
    from pytest_obelize_bench.tool.runfolder import read_run_document

    data = read_run_document(folder, "findings.json", "scan")
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("findings"), list)
        or not isinstance(data.get("counts"), dict)
    ):
        raise _unreadable("findings.json: expected an object with findings[] and counts")
    try:
        counts = ScanCounts.model_validate({key: data["counts"].get(key) for key in ScanCounts.model_fields})
    except ValidationError as exc:
        raise _unreadable(f"findings.json: counts.{problem_text(exc.errors()[0])}") from None
    rows = []
    for index, row in enumerate(data["findings"]):
        if not isinstance(row, dict):
            raise _unreadable(f"findings.json: findings[{index}]: expected an object")
        try:
            finding = ScanFinding.model_validate(dump_row(row))
        except ValidationError as exc:
            raise _unreadable(f"findings.json: findings[{index}].{problem_text(exc.errors()[0])}") from None
        bad_path = path_problem(finding.path)
        if bad_path is not None:
            raise _unreadable(f"findings.json: findings[{index}].path {finding.path[:100]!r} {bad_path}")
        rows.append(finding)
    return counts, rows


def _error_text(run: RepoRun, error: CaseError) -> str:
    detail = run.elider.text(error.detail) if run.elider is not None else error.detail
    return f"{error.step}: {error.reason}: {detail}"


def measure(repo: FrameRepository, context: MeasureContext, frame_dir: Path) -> tuple[ScannedRepository, RepoRun]:
    """Check out, scan and ask for the declared Python; a failure becomes the record's error."""
    run = prepare(repo, context, frame_dir=frame_dir)
    counts: ScanCounts | None = None
    findings: list[ScanFinding] = []
    runtime: dict[str, Any] | None = None
    seconds: float | None = None
    if run.error is None:
        try:
            folder, seconds = run_scan(run, context)
            counts, findings = read_findings(folder)
            runtime = declared_python(run, context)
        except CaseError as exc:
            run.error = exc
            counts, findings = None, []
    record = ScannedRepository(
        full_name=repo.full_name,
        sha=repo.sha,
        band=repo.band,
        counts=counts,
        runtime=Runtime(**runtime) if runtime is not None else None,
        findings=findings,
        seconds=round(seconds, 2) if seconds is not None else None,
        error=_error_text(run, run.error) if run.error is not None else None,
    )
    return record, run


def status(record: ScannedRepository, match: KeyMatch | None) -> tuple[str, str, str]:
    """The item's (category, letter, word): recall for a labelled repository, e.g. ``R=88.9%``."""
    if record.error is not None:
        return "scan-error", "!", "ERROR"
    if match is None:
        return "scanned", "s", f"SCANNED {len(record.findings)} findings"
    rate = match.recall.rate
    shown = "--" if rate is None else f"{rate * 100:.1f}%"
    return "labelled", "R", f"R={shown}"


def counts_line(name: str, match: KeyMatch) -> str:
    return (
        f"{name}: {match.labelled} labelled, {match.findings} findings, TP {match.true_positive} "
        f"FP {match.false_positive} missed {match.missed}, forbidden {len(match.forbidden)}; "
        f"precision {match.precision.format()}, recall {match.recall.format()}"
    )


def run_item(
    item: pytest.Item, repo: FrameRepository, context: MeasureContext, frame_dir: Path, key: AnswerKey | None
) -> None:
    """The body of a Gate 1 item: the record and status go into the item's stash for the report."""
    record, run = measure(repo, context, frame_dir)
    match = match_key(key, record.findings) if key is not None and record.error is None else None
    counts = None if match is None else counts_line(record.full_name, match)
    if counts is not None:
        item.add_report_section("call", "gate1", counts)
    item.stash[MEASURE_OUTCOME_KEY] = MeasureOutcome(record.model_dump_json(), status(record, match), counts)
    if run.workspace is not None:
        (Path(run.workspace.logs) / "record.json").write_text(record.model_dump_json(indent=2), encoding="utf-8")


def document_of(context: MeasureContext, frame: Frame, records: Mapping[str, ScannedRepository]) -> ScanDocument:
    """The scan document in the upstream shape, repositories in frame order."""
    pack = context.pack_provenance
    return ScanDocument(
        obelize_version=None if context.tool is None else context.tool.version,
        pack=context.pack,
        pack_sha256=None if pack is None else pack.pack_sha256,
        spec_sha256=None if pack is None else pack.spec_sha256,
        python=platform.python_version(),
        machine=platform.machine(),
        os=platform.system(),
        scanned=[records[repo.full_name] for repo in frame.repositories],
    )


def publish(
    context: MeasureContext,
    frame: Frame,
    keys: Mapping[str, AnswerKey],
    records: Mapping[str, ScannedRepository],
    *,
    frame_label: str,
    write_block: bool,
    session: str,
    infrastructure: int,
) -> list[str]:
    """Write scan.json, its note and (unless told not to) the Gate 1 block; the lines saying so."""
    from pytest_obelize_bench.measure.gate1_render import render_gate1_block
    from pytest_obelize_bench.measure.publication import write_measurement

    results = Path(context.results_dir)
    document = document_of(context, frame, records)
    block = ("gate1", render_gate1_block(document, frame, keys, frame_label), "Gate 1 block") if write_block else None
    return write_measurement(
        results,
        results / "gate1" / "scan.json",
        document.to_json(),
        measurement="gate1",
        pack=context.pack,
        session=session,
        run_at=context.run_at,
        repositories=len(document.scanned),
        infrastructure=infrastructure,
        block=block,
    )


def pooled_lines(keys: Mapping[str, AnswerKey], records: Mapping[str, ScannedRepository]) -> list[str]:
    """The terminal's Gate 1 figures over the labelled repositories that ran."""
    from pytest_obelize_bench.measure.gate1_figures import sample_figures
    from pytest_obelize_bench.measure.matching import pooled

    matches = [
        match_key(keys[name], record.findings)
        for name, record in records.items()
        if name in keys and record.error is None
    ]
    precision, recall = pooled(matches)
    figures = sample_figures(list(records.values()))
    bail, unresolved = figures.zero_bail, figures.unresolved_share
    return [
        f"gate 1: {len(records)} repositories scanned, {len(matches)} labelled",
        f"  precision {precision.format()} (n={precision.n} findings), "
        f"recall {recall.format()} (n={recall.n} labelled rows)",
        f"  repositories with a zero-bail file: {bail.k} of {bail.n}, {bail.format()}",
        f"  unresolved share: {unresolved.k} of {unresolved.n} usages, {unresolved.format()}",
    ]


def parse_record(text: str) -> ScannedRepository:
    return ScannedRepository.model_validate(json.loads(text))


__all__ = [
    "GATE1_PACK",
    "document_of",
    "measure",
    "parse_record",
    "pooled_lines",
    "publish",
    "read_findings",
    "run_item",
    "status",
]
