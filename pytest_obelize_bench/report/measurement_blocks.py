"""The measurement blocks of the results document: Gate 1 and one fix dry run per pack.

Each block sits between its own markers (``<!-- gate1:begin ... -->`` / ``<!-- gate1:end -->``,
``<!-- dryrun-<pack slug>:begin ... -->``), apart from the round blocks, and is rendered from the
published records alone.  ``measurement_blocks`` renders every block whose records exist;
``blocks.apply_blocks`` puts them into the document text and ``blocks.stale_block`` says which one
differs.
"""

from __future__ import annotations

from pathlib import Path

from pytest_obelize_bench._util.charts import Chart, RateChart
from pytest_obelize_bench.casefile.cases import CaseFileError
from pytest_obelize_bench.comparison.block_text import comparison_blocks, comparison_charts
from pytest_obelize_bench.dryrun.history_block import (
    frame_history_block,
    frame_history_block_name,
    frame_history_chart,
)
from pytest_obelize_bench.dryrun.outcomes import DOCUMENT_NAME, DryRunDocument, DryRunRecordError, load_dryrun_document
from pytest_obelize_bench.dryrun.pack_block import render_dryrun_block
from pytest_obelize_bench.dryrun.release_files import frame_histories, release_documents
from pytest_obelize_bench.gate1.labels import LabelError
from pytest_obelize_bench.gate1.scan_document import (
    gate1_block_name,
    gate1_charts,
    load_gate1_inputs,
    load_named_gate1_inputs,
    named_gate1_scans,
    render_gate1_block,
)
from pytest_obelize_bench.measure.frame import FrameError
from pytest_obelize_bench.measure.measure_publication import (
    RELEASES,
    dryrun_error_parts,
    half_published,
    infrastructure_repositories,
    note_problems,
    scan_error_parts,
)
from pytest_obelize_bench.measure.scanrecord import ScanRecordError, load_scan_document
from pytest_obelize_bench.records.results_document import apply_blocks, stale_block


class MeasurementError(ValueError):
    """Published measurement records that cannot be rendered (one line per problem)."""


def measurement_blocks(results_dir: Path, cases_dir: Path) -> dict[str, str]:
    """Every measurement block whose records are published under ``results_dir``.

    Gate 1 needs ``results/gate1/scan.json`` and the frame and keys in ``cases/gate1/``; a dry run
    needs ``results/dryrun/<slug>/dryrun.json``.  Unreadable inputs raise ``MeasurementError``.
    """
    blocks: dict[str, str] = {}
    results_dir, cases_dir = Path(results_dir), Path(cases_dir)
    scan = results_dir / "gate1" / "scan.json"
    try:
        if scan.exists() or scan.is_symlink():
            inputs = load_gate1_inputs(scan, cases_dir / "gate1")
            if not any(repo.error is None for repo in inputs[0].scanned):
                raise MeasurementError(f"{scan}: no repository of the frame was scanned; there is no Gate 1 to report")
            blocks["gate1"] = render_gate1_block(*inputs)
        for named in named_gate1_scans(results_dir):
            beside, frame, keys, label = load_named_gate1_inputs(named, cases_dir.parent)
            baseline = (inputs[0], inputs[2]) if scan.is_file() else None
            blocks[gate1_block_name(beside.name)] = render_gate1_block(beside, frame, keys, label, baseline)
        dryruns = results_dir / "dryrun"
        if dryruns.is_dir():
            for folder in sorted(dryruns.iterdir()):
                document = folder / DOCUMENT_NAME
                if document.exists() or document.is_symlink():
                    blocks[f"dryrun-{folder.name}"] = render_dryrun_block(load_dryrun_document(document))
        for history in frame_histories(results_dir, cases_dir)[0]:
            blocks[frame_history_block_name(history.pack)] = frame_history_block(history)
    except (FrameError, LabelError, ScanRecordError, DryRunRecordError, CaseFileError, ValueError) as exc:
        raise MeasurementError(str(exc).splitlines()[0]) from None
    return blocks


def measurement_charts(results_dir: Path, case_file_path: Path) -> list[Chart]:
    """The charts of every measurement block whose records are published: Gate 1's and each comparison's."""
    charts: list[Chart] = [*_gate1_charts(results_dir, _cases_dir(case_file_path))]
    try:
        charts.extend(comparison_charts(results_dir, case_file_path))
        for history in frame_histories(results_dir, _cases_dir(case_file_path))[0]:
            chart = frame_history_chart(history)
            if chart is not None:
                charts.append(chart)
    except (ValueError, DryRunRecordError) as exc:
        raise MeasurementError(str(exc).splitlines()[0]) from None
    return charts


def _gate1_charts(results_dir: Path, cases_dir: Path) -> list[RateChart]:
    scan = Path(results_dir) / "gate1" / "scan.json"
    charts: list[RateChart] = []
    try:
        if scan.exists() or scan.is_symlink():
            charts += gate1_charts(*load_gate1_inputs(scan, Path(cases_dir) / "gate1"))
        for named in named_gate1_scans(results_dir):
            charts += gate1_charts(*load_named_gate1_inputs(named, Path(cases_dir).parent))
    except (FrameError, LabelError, ScanRecordError, CaseFileError) as exc:
        raise MeasurementError(str(exc).splitlines()[0]) from None
    return charts


def _dryrun_note_problems(folder: Path, document: DryRunDocument) -> list[str]:
    """The note beside a dry run (a pack's, or one release's kept for its history) against its records."""
    errors = {r.full_name: parts for r in document.records if (parts := dryrun_error_parts(r.error))}
    return note_problems(folder, DOCUMENT_NAME, len(infrastructure_repositories(errors)))


def measurement_problems(results_dir: Path) -> list[str]:
    """Why a published measurement is not what a guarded session wrote (``measure_publication.py``)."""
    problems: list[str] = half_published(results_dir)
    scan = Path(results_dir) / "gate1" / "scan.json"
    try:
        for published in [scan, *named_gate1_scans(Path(results_dir))]:
            if not (published.exists() or published.is_symlink()):
                continue
            scanned = load_scan_document(published).scanned
            errors = {r.full_name: parts for r in scanned if (parts := scan_error_parts(r.error))}
            problems += note_problems(published.parent, published.name, len(infrastructure_repositories(errors)))
        dryruns = Path(results_dir) / "dryrun"
        for folder in sorted(dryruns.iterdir()) if dryruns.is_dir() else []:
            document = folder / DOCUMENT_NAME
            if document.exists() or document.is_symlink():
                problems += _dryrun_note_problems(folder, load_dryrun_document(document))
            for name, kept in release_documents(folder):  # each release's dry run kept for the history
                problems += _dryrun_note_problems(folder / RELEASES / name, kept)
    except (ScanRecordError, DryRunRecordError):
        pass  # an unreadable document is the render check's to name, in one line
    return problems


# -- the hook ``obelize-bench summarize`` calls -------------------------------------------------


def _cases_dir(case_file_path: Path) -> Path:
    """The measurement inputs live beside the case file (``cases/gate1/``)."""
    return Path(case_file_path).parent


def _all_blocks(results_dir: Path, case_file_path: Path) -> dict[str, str]:
    """Gate 1, the dry runs and every published comparison (``comparison_block``)."""
    blocks = measurement_blocks(results_dir, _cases_dir(case_file_path))
    try:
        blocks.update(comparison_blocks(results_dir, case_file_path))
    except ValueError as exc:
        raise MeasurementError(str(exc).splitlines()[0]) from None
    return blocks


def check_measurements(document: Path, results_dir: Path, case_file_path: Path) -> str | None:
    """None when every published measurement's block is current, else a one-line reason."""
    try:
        blocks = _all_blocks(results_dir, case_file_path)
        text = Path(document).read_text(encoding="utf-8") if blocks else ""
        stale_histories = frame_histories(results_dir, _cases_dir(case_file_path), recheck=True)[1]
    except (MeasurementError, DryRunRecordError) as exc:
        return f"a measurement cannot be rendered: {exc}"
    except ValueError as exc:
        return f"a measurement cannot be rendered: {str(exc).splitlines()[0]}"
    except OSError as exc:
        return f"{document} cannot be read: {exc.strerror or exc}"
    return stale_histories[0] if stale_histories else stale_block(text, blocks)


def apply_measurements(text: str, results_dir: Path, case_file_path: Path) -> str:
    """``text`` with every published measurement's block rendered in; ValueError when one cannot be."""
    return apply_blocks(text, _all_blocks(results_dir, case_file_path))


__all__ = [
    "MeasurementError",
    "apply_measurements",
    "check_measurements",
    "measurement_blocks",
    "measurement_charts",
    "measurement_problems",
]
