"""``obelize-bench summarize [--check]``: every block of the results document, its figures and the
results pages, rendered afresh from the published data and written, or compared.

Without ``--check`` it first finishes any publication a killed process left half-done (a round's,
a measurement's), then rewrites every round's block (from the records that pass the checks), the
error-analysis summaries, the decisions, measurement and history blocks, the figures and, when the
project has them, the results pages. With ``--check`` it writes nothing and fails on every problem
of the round folders and on any output that differs from a fresh render.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from pytest_obelize_bench._util.charts import Chart
from pytest_obelize_bench._util.locks import LockBusy, holder_lock
from pytest_obelize_bench._util.safe_io import write_atomically
from pytest_obelize_bench.casefile.cases import CaseFile, CaseFileError, load_case_file
from pytest_obelize_bench.casefile.reviews import ReviewFileError
from pytest_obelize_bench.error_analysis.commands import summary_json_problem
from pytest_obelize_bench.grading.record import RecordError
from pytest_obelize_bench.measure.measure_publication import recover_measurements
from pytest_obelize_bench.promotion.decision_list import check_decisions, render_decisions, with_decisions
from pytest_obelize_bench.promotion.gate_chart import decision_charts
from pytest_obelize_bench.promotion.history_report import history_blocks
from pytest_obelize_bench.records.evidence import EvidenceError, read_decision_documents
from pytest_obelize_bench.records.published import LOCK_NAME
from pytest_obelize_bench.records.results_document import (
    DOCUMENT_LOCK,
    DOCUMENT_NAME,
    apply_blocks,
    check_document,
    place_first,
    render_document,
    stale_block,
)
from pytest_obelize_bench.records.review_drift import drifted_reviews
from pytest_obelize_bench.report.chart_files import check_figures, write_figures
from pytest_obelize_bench.report.glance import GLANCE_BLOCK
from pytest_obelize_bench.report.glance_sources import rendered_glance
from pytest_obelize_bench.report.measurement_blocks import (
    MeasurementError,
    apply_measurements,
    check_measurements,
    measurement_charts,
    measurement_problems,
)
from pytest_obelize_bench.report.round.case_entries import RoundData
from pytest_obelize_bench.report.round.publish_round import recover_round
from pytest_obelize_bench.report.round.round_files import (
    RoundOutputs,
    read_round_folder,
    round_case_files,
    round_outputs,
    rounds_on_disk,
)
from pytest_obelize_bench.report.site.pages import check_site_beside, write_site_beside


def _rendered(
    results_dir: Path, case_files: Mapping[int, CaseFile], rounds: Mapping[int, RoundData]
) -> dict[int, RoundOutputs]:
    """Each round's outputs; a round whose error analysis cannot be read fails the whole summarize."""
    rendered = {n: round_outputs(results_dir, case_files[n], data) for n, data in rounds.items()}
    for outputs in rendered.values():
        if outputs.errors_problem is not None:
            raise ValueError(outputs.errors_problem)
    return rendered


def _errors_summaries(results_dir: Path, outputs: Mapping[int, RoundOutputs], *, write: bool) -> str | None:
    for n, rendered in outputs.items():
        problem = summary_json_problem(results_dir, n, rendered.summary.get("error_analysis"), write=write)
        if problem is not None:
            return problem
    return None


def _stale_derived(document: Path, histories: Mapping[str, str], results_dir: Path, cases: Path) -> str | None:
    """None when every round's history block is as its history.json renders it and the project's
    results pages (``docs/results/``, when it has them) as ``results/`` renders them."""
    try:
        stale = stale_block(Path(document).read_text(encoding="utf-8"), histories) if histories else None
        site = check_site_beside(results_dir, cases)
    except OSError as exc:
        return f"{document} cannot be read: {exc.strerror or exc}"
    except (ValueError, ReviewFileError) as exc:
        return f"the results pages cannot be rendered: {str(exc).splitlines()[0]}"
    return stale or (f"the results pages differ ({site[0]}; {len(site)} in all)" if site else None)


def _glance(
    results_dir: Path,
    case_file_path: Path,
    rendered: Mapping[int, RoundOutputs],
    documents: Sequence[tuple[str, Mapping[str, Any]]],
) -> tuple[str | None, list[Chart]]:
    """The glance block and its figure; none when a measurement cannot be read (its own check names it)."""
    summaries = {n: outputs.summary for n, outputs in rendered.items()}
    glance = rendered_glance(results_dir, case_file_path.parent, summaries, documents)
    if glance is None:
        return None, []
    text, chart = glance
    return text, [chart] if chart is not None else []


def _place_glance(text: str, glance: str | None) -> str:
    return text if glance is None else place_first(text, GLANCE_BLOCK, glance)


def _stale_glance(document: Path, glance: str | None) -> str | None:
    """None when the glance is in the document as rendered (or cannot be rendered, which another check names)."""
    if glance is None:
        return None
    try:
        return stale_block(Path(document).read_text(encoding="utf-8"), {GLANCE_BLOCK: glance})
    except OSError as exc:
        return f"{document} cannot be read: {exc.strerror or exc}"


def _rounds_text(rounds: Sequence[int]) -> str:
    return ("round " if len(rounds) == 1 else "rounds ") + ", ".join(str(n) for n in rounds)


def summarize(results_dir: Path, case_file_path: Path, *, check: bool, out: TextIO | None = None) -> int:
    """``obelize-bench summarize [--check]``: 0 on success, 1 with a one-line reason otherwise.

    With ``check``, compare the document with a fresh render of every round on disk, report every
    problem of the round folders, and write nothing; without it, rewrite every round's block (from
    the records that pass the checks) and say which file was written.
    """
    stream = out if out is not None else sys.stdout
    results_dir = Path(results_dir)
    document = results_dir / DOCUMENT_NAME
    # The decisions list (decision_list.py) and the Gate 1 and dry-run blocks (report/measurement_blocks.py)
    # are blocks of their own, with their own checks.

    try:
        case_file = load_case_file(case_file_path)
        rounds = rounds_on_disk(results_dir, case_file)
        files = round_case_files(results_dir, case_file, rounds)
        if not check:
            for n in [n for n in rounds if (results_dir / f"round-{n}").is_dir()]:
                with holder_lock(results_dir / f"round-{n}" / LOCK_NAME, f"round {n}"):
                    for line in recover_round(results_dir, files[n], n):
                        print(f"obelize-bench summarize: {line}", file=stream)
            for line in recover_measurements(results_dir):
                print(f"obelize-bench summarize: {line}", file=stream)
        loaded = {n: read_round_folder(results_dir, files[n], n) for n in rounds}
        rendered = _rendered(results_dir, files, {n: round_.data for n, round_ in loaded.items()})
        blocks = {n: outputs.block for n, outputs in rendered.items()}
        stale = _errors_summaries(results_dir, rendered, write=not check)
        documents = [(path.name, data) for path, data in read_decision_documents(results_dir / "decisions")]
        decisions = render_decisions(documents)
        charts: list[Chart] = [chart for outputs in rendered.values() for chart in outputs.charts]
        charts.extend(decision_charts(documents))
        histories, history_charts = history_blocks(results_dir, list(rounds))
        charts.extend(history_charts)
        glance_text, glance_charts = _glance(results_dir, Path(case_file_path), rendered, documents)
        charts.extend(glance_charts)
        drifted = [
            problem
            for n, round_ in loaded.items()
            for problem in drifted_reviews(Path(files[n].path), {n: round_.data.records})
        ]
        # A measurement that cannot be rendered has no chart; check_measurements names the problem.
        with contextlib.suppress(MeasurementError):
            charts.extend(measurement_charts(results_dir, Path(case_file_path)))
    except (CaseFileError, RecordError, EvidenceError, ValueError, LockBusy, ReviewFileError) as exc:
        for line in str(exc).splitlines() or [type(exc).__name__]:
            print(f"obelize-bench summarize: {line}", file=stream)
        return 1
    problems = [problem for round_ in loaded.values() for problem in round_.problems]
    problems += measurement_problems(results_dir)
    problems += drifted  # a review filed, changed or withdrawn since its round was graded
    unknown = [path for round_ in loaded.values() for path in round_.unknown]
    if check:
        for problem in problems:
            print(f"obelize-bench summarize --check: {problem}", file=stream)
        for path in unknown:
            print(f"obelize-bench summarize --check: unknown file in a round folder: {path}", file=stream)
        reason = (
            check_document(document, blocks)
            or stale
            or check_decisions(document, decisions)
            or check_measurements(document, results_dir, case_file_path)
            or _stale_derived(document, histories, results_dir, Path(case_file_path))
            or _stale_glance(document, glance_text)
            or check_figures(results_dir, charts)
        )
        if reason is not None:
            print(f"{document} is stale: {reason}; run `obelize-bench summarize` to regenerate it", file=stream)
            return 1
        if problems or unknown:
            return 1
        print(f"{document} is up to date ({_rounds_text(rounds)})", file=stream)
        return 0
    for problem in problems:
        print(f"obelize-bench summarize: warning: {problem}", file=stream)
    try:
        existing = document.read_text(encoding="utf-8") if document.exists() else None
        text = apply_measurements(
            with_decisions(render_document(existing, blocks), decisions), results_dir, case_file_path
        )
        text = _place_glance(apply_blocks(text, histories), glance_text)
    except (OSError, ValueError) as exc:
        print(f"obelize-bench summarize: {document}: {exc}", file=stream)
        return 1
    try:
        with holder_lock(results_dir / DOCUMENT_LOCK, "the results document"):
            write_figures(results_dir, charts, prune=True)
            write_atomically(document, text)
            pages = write_site_beside(results_dir, Path(case_file_path))
    except LockBusy as exc:
        print(f"obelize-bench summarize: {exc}", file=stream)
        return 1
    stream.write("".join(f"obelize-bench summarize: {line}\n" for line in pages))
    print(f"wrote {document} and {len(charts)} figures ({_rounds_text(rounds)})", file=stream)
    return 0


__all__ = ["summarize"]
