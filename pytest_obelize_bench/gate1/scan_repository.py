"""Gate 1 on one repository: scan one repository of the frame, match it against its key, publish.

The worker side (``measure``) produces one ``ScannedRepository`` record per repository and, for a
labelled one, its match; the controller side (``publish``) writes ``results/gate1/scan.json`` in
the upstream shape and the Gate 1 block, and only for a run that covered the whole frame.
"""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench.gate1.labels import AnswerKey, LabelError
from pytest_obelize_bench.gate1.matching import KeyMatch, match_key, pooled
from pytest_obelize_bench.gate1.recall_figures import sample_figures
from pytest_obelize_bench.gate1.scan_document import (
    gate1_block_name,
    gate1_name,
    gate1_scan_path,
    load_gate1_inputs,
    render_gate1_block,
)
from pytest_obelize_bench.isolation.machine import this_machine
from pytest_obelize_bench.isolation.public_text import public_text
from pytest_obelize_bench.measure.frame import Frame, FrameError, FrameRepository
from pytest_obelize_bench.measure.measure_publication import write_measurement
from pytest_obelize_bench.measure.repository_run import (
    MeasureContext,
    RepoRun,
    declared_python,
    prepare,
    run_scan,
)
from pytest_obelize_bench.measure.scan_findings import read_findings
from pytest_obelize_bench.measure.scanrecord import (
    Runtime,
    ScanCounts,
    ScanDocument,
    ScanFinding,
    ScannedRepository,
    ScanRecordError,
)

#: Gate 1 was defined for the Gemini pack only (the protocol).
GATE1_PACK = "gemini/google-generativeai-to-google-genai"


def _error_text(run: RepoRun, error: CaseError) -> str:
    """The published error: its detail quotes a step's output, so it names nothing of the machine."""
    detail = public_text(error.detail, run.elider, os.environ.items(), this_machine())
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


def scan_unit(
    repo: FrameRepository, context: MeasureContext, frame_dir: Path, key: AnswerKey | None
) -> tuple[str, tuple[str, str, str], str | None]:
    """One Gate 1 repository measured: its record as JSON, its terminal status, its counts line."""
    record, run = measure(repo, context, frame_dir)
    match = match_key(key, record.findings) if key is not None and record.error is None else None
    counts = None if match is None else counts_line(record.full_name, match)
    if run.workspace is not None:
        (Path(run.workspace.logs) / "record.json").write_text(record.model_dump_json(indent=2), encoding="utf-8")
    return record.model_dump_json(), status(record, match), counts


def document_of(
    context: MeasureContext,
    frame: Frame,
    records: Mapping[str, ScannedRepository],
    source: tuple[str, Literal["frame", "cases"]] | None = None,
    unreachable: Mapping[str, str] | None = None,
) -> ScanDocument:
    """The scan document in the upstream shape, repositories in frame order; a Gate 1 measured beside the
    sample's also names its source and what was out of reach."""
    pack = context.pack_provenance
    return ScanDocument(
        source=None if source is None else source[0],
        source_kind=None if source is None else source[1],
        unreachable=dict(unreachable or {}),
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
    unreachable: Mapping[str, str] | None = None,
    from_cases: bool = False,
) -> list[str]:
    """Write scan.json, its note and (unless told not to) the Gate 1 block; the lines saying so.

    A frame named like the sample's is published as Gate 1 (``results/gate1/``); any other frame, or a
    case file's cases, beside it under its own name, with the sample's published figures beside its own.
    """
    results = Path(context.results_dir)
    name = gate1_name(frame_label)
    kind: Literal["frame", "cases"] = "cases" if from_cases else "frame"
    document = document_of(context, frame, records, None if name is None else (frame_label, kind), unreachable)
    block = None
    if write_block:
        baseline = None if name is None else _published_sample(results, Path(context.project_root))
        text = render_gate1_block(document, frame, keys, frame_label, baseline)
        block = (gate1_block_name(name), text, "Gate 1 block")
    return write_measurement(
        results,
        gate1_scan_path(results, name),
        document.to_json(),
        measurement="gate1",
        pack=context.pack,
        session=session,
        run_at=context.run_at,
        repositories=len(document.scanned),
        infrastructure=infrastructure,
        block=block,
    )


def _published_sample(results: Path, project_root: Path) -> tuple[ScanDocument, dict[str, AnswerKey]] | None:
    """The sample's published Gate 1 and its keys, to set a named measurement beside; None when there is none."""
    scan = gate1_scan_path(results, None)
    if not scan.is_file():
        return None
    try:
        document, _, keys, _ = load_gate1_inputs(scan, project_root / "cases" / "gate1")
    except (FrameError, LabelError, ScanRecordError):  # a sample that cannot be read is the render check's to name
        return None
    return document, keys


def pooled_lines(keys: Mapping[str, AnswerKey], records: Mapping[str, ScannedRepository]) -> list[str]:
    """The terminal's Gate 1 figures over the labelled repositories that ran."""
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
    "scan_unit",
    "status",
]
