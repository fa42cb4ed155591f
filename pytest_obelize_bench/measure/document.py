"""The measurement blocks of the results document: Gate 1 and one fix dry run per pack.

Each block sits between its own markers (``<!-- gate1:begin ... -->`` / ``<!-- gate1:end -->``,
``<!-- dryrun-<pack slug>:begin ... -->``), apart from the round blocks, and is rendered from the
published records alone.  ``measurement_blocks`` renders every block whose records exist;
``apply_blocks`` puts them into the document text and ``stale_block`` says which one differs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from pytest_obelize_bench._util.charts import Chart, RateChart
from pytest_obelize_bench.report.document import begin_line, enclose, end_line

_NAME = re.compile(r"gate1|dryrun-[A-Za-z0-9_.-]+|(?:comparison|history)-round-[1-9][0-9]*")


def _span(text: str, name: str) -> tuple[int, int] | None:
    """The block's span (begin start, end end), None when absent; ValueError when malformed."""
    begin = re.compile(begin_line(re.escape(name)), re.MULTILINE)
    end = re.compile(end_line(re.escape(name)), re.MULTILINE)
    starts, ends = list(begin.finditer(text)), list(end.finditer(text))
    if not starts and not ends:
        return None
    if len(starts) != 1 or len(ends) != 1 or ends[0].start() < starts[0].start():
        raise ValueError(f"the {name} block needs exactly one begin marker followed by one end marker")
    return starts[0].start(), ends[0].end()


def _order(name: str) -> tuple[int, str, int]:
    """Gate 1 first, then the dry runs by pack, then the comparisons and the histories by round."""
    if name.startswith("comparison-round-"):
        return (2, "", int(name.rsplit("-", 1)[1]))
    if name.startswith("history-round-"):
        return (3, "", int(name.rsplit("-", 1)[1]))
    return (0 if name == "gate1" else 1, name, 0)


def apply_blocks(text: str, blocks: Mapping[str, str]) -> str:
    """``text`` with each block replaced in place, or appended (Gate 1, dry runs, comparisons, histories)."""
    for name in sorted(blocks, key=_order):
        if not _NAME.fullmatch(name):
            raise ValueError(f"{name!r} is not a measurement block name")
        section = enclose(name, blocks[name])
        span = _span(text, name)
        if span is None:
            text = text.rstrip("\n") + "\n\n" + section + "\n"
        else:
            text = text[: span[0]] + section + text[span[1] :]
    return text if text.endswith("\n") else text + "\n"


def stale_block(text: str, blocks: Mapping[str, str]) -> str | None:
    """None when every block is present as rendered, else a one-line reason."""
    for name in sorted(blocks):
        try:
            span = _span(text, name)
        except ValueError as exc:
            return str(exc)
        if span is None:
            return f"the {name} block is missing"
        if text[span[0] : span[1]] != enclose(name, blocks[name]):
            return f"the {name} block differs from a fresh render"
    return None


class MeasurementError(ValueError):
    """Published measurement records that cannot be rendered (one line per problem)."""


def measurement_blocks(results_dir: Path, cases_dir: Path) -> dict[str, str]:
    """Every measurement block whose records are published under ``results_dir``.

    Gate 1 needs ``results/gate1/scan.json`` and the frame and keys in ``cases/gate1/``; a dry run
    needs ``results/dryrun/<slug>/dryrun.json``.  Unreadable inputs raise ``MeasurementError``.
    """
    from pytest_obelize_bench.measure.dryrun import (
        DOCUMENT_NAME,
        DryRunRecordError,
        load_dryrun_document,
    )
    from pytest_obelize_bench.measure.dryrun_render import render_dryrun_block
    from pytest_obelize_bench.measure.frame import FrameError
    from pytest_obelize_bench.measure.gate1_render import load_gate1_inputs, render_gate1_block
    from pytest_obelize_bench.measure.labels import LabelError
    from pytest_obelize_bench.measure.scanrecord import ScanRecordError

    blocks: dict[str, str] = {}
    results_dir, cases_dir = Path(results_dir), Path(cases_dir)
    scan = results_dir / "gate1" / "scan.json"
    try:
        if scan.exists() or scan.is_symlink():
            inputs = load_gate1_inputs(scan, cases_dir / "gate1")
            if not any(repo.error is None for repo in inputs[0].scanned):
                raise MeasurementError(f"{scan}: no repository of the frame was scanned; there is no Gate 1 to report")
            blocks["gate1"] = render_gate1_block(*inputs)
        dryruns = results_dir / "dryrun"
        if dryruns.is_dir():
            for folder in sorted(dryruns.iterdir()):
                document = folder / DOCUMENT_NAME
                if document.exists() or document.is_symlink():
                    blocks[f"dryrun-{folder.name}"] = render_dryrun_block(load_dryrun_document(document))
    except (FrameError, LabelError, ScanRecordError, DryRunRecordError) as exc:
        raise MeasurementError(str(exc).splitlines()[0]) from None
    return blocks


def measurement_charts(results_dir: Path, case_file_path: Path) -> list[Chart]:
    """The charts of every measurement block whose records are published: Gate 1's and each comparison's."""
    from pytest_obelize_bench.measure.comparison_block import comparison_charts

    charts: list[Chart] = [*_gate1_charts(results_dir, _cases_dir(case_file_path))]
    try:
        charts.extend(comparison_charts(results_dir, case_file_path))
    except ValueError as exc:
        raise MeasurementError(str(exc).splitlines()[0]) from None
    return charts


def _gate1_charts(results_dir: Path, cases_dir: Path) -> list[RateChart]:
    from pytest_obelize_bench.measure.frame import FrameError
    from pytest_obelize_bench.measure.gate1_render import gate1_charts, load_gate1_inputs
    from pytest_obelize_bench.measure.labels import LabelError
    from pytest_obelize_bench.measure.scanrecord import ScanRecordError

    scan = Path(results_dir) / "gate1" / "scan.json"
    if not (scan.exists() or scan.is_symlink()):
        return []
    try:
        return gate1_charts(*load_gate1_inputs(scan, Path(cases_dir) / "gate1"))
    except (FrameError, LabelError, ScanRecordError) as exc:
        raise MeasurementError(str(exc).splitlines()[0]) from None


def measurement_problems(results_dir: Path) -> list[str]:
    """Why a published measurement is not what a guarded session wrote (``publication.py``)."""
    from pytest_obelize_bench.measure.dryrun import DOCUMENT_NAME, DryRunRecordError, load_dryrun_document
    from pytest_obelize_bench.measure.publication import (
        dryrun_error_parts,
        half_published,
        infrastructure_repositories,
        note_problems,
        scan_error_parts,
    )
    from pytest_obelize_bench.measure.scanrecord import ScanRecordError, load_scan_document

    problems: list[str] = half_published(results_dir)
    scan = Path(results_dir) / "gate1" / "scan.json"
    try:
        if scan.exists() or scan.is_symlink():
            scanned = load_scan_document(scan).scanned
            errors = {r.full_name: parts for r in scanned if (parts := scan_error_parts(r.error))}
            problems += note_problems(scan.parent, scan.name, len(infrastructure_repositories(errors)))
        dryruns = Path(results_dir) / "dryrun"
        for folder in sorted(dryruns.iterdir()) if dryruns.is_dir() else []:
            document = folder / DOCUMENT_NAME
            if document.exists() or document.is_symlink():
                records = load_dryrun_document(document).records
                errors = {r.full_name: parts for r in records if (parts := dryrun_error_parts(r.error))}
                problems += note_problems(folder, DOCUMENT_NAME, len(infrastructure_repositories(errors)))
    except (ScanRecordError, DryRunRecordError):
        pass  # an unreadable document is the render check's to name, in one line
    return problems


# -- the hook ``obelize-bench summarize`` calls -------------------------------------------------


def _cases_dir(case_file_path: Path) -> Path:
    """The measurement inputs live beside the case file (``cases/gate1/``)."""
    return Path(case_file_path).parent


def _all_blocks(results_dir: Path, case_file_path: Path) -> dict[str, str]:
    """Gate 1, the dry runs and every published comparison (``comparison_block``)."""
    from pytest_obelize_bench.measure.comparison_block import comparison_blocks

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
    except MeasurementError as exc:
        return f"a measurement cannot be rendered: {exc}"
    except OSError as exc:
        return f"{document} cannot be read: {exc.strerror or exc}"
    return stale_block(text, blocks)


def apply_measurements(text: str, results_dir: Path, case_file_path: Path) -> str:
    """``text`` with every published measurement's block rendered in; ValueError when one cannot be."""
    return apply_blocks(text, _all_blocks(results_dir, case_file_path))


__all__ = [
    "MeasurementError",
    "apply_blocks",
    "apply_measurements",
    "check_measurements",
    "measurement_blocks",
    "measurement_charts",
    "measurement_problems",
    "stale_block",
]
