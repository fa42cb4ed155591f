"""A round's files on disk: finding rounds, loading their published records, writing the outputs.

Loading goes through ``published.read_published`` (only ``<id>.json`` for ids in the case file,
each checked), so no stray or forged file can reach a figure; every problem found on the way (a
refused record, a stored tier that disagrees with ``tier()``, an unknown file in a round folder,
published records that are not one complete run's) is ``LoadedRound.problems``, for
``summarize --check`` (``summarize.py``) to fail on.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_obelize_bench._util.charts import Chart, figures_section
from pytest_obelize_bench._util.safe_io import write_atomically
from pytest_obelize_bench._util.strict_model import committed_json
from pytest_obelize_bench.casefile.cases import CaseFile, load_case_file
from pytest_obelize_bench.error_analysis.commands import error_section, error_summary, round_error_figures
from pytest_obelize_bench.grading.grade import expected_rows
from pytest_obelize_bench.grading.record import RecordError
from pytest_obelize_bench.records.evidence import read_round_facts
from pytest_obelize_bench.records.publication_note import expected_cases, publication_problems, read_publication
from pytest_obelize_bench.records.published import JOURNAL_NAME, SUMMARY_NAME, read_published
from pytest_obelize_bench.records.results_document import DOCUMENT_NAME, render_document
from pytest_obelize_bench.records.runref import round_case_path
from pytest_obelize_bench.report.case_reading import attempt_facts, published_evidence
from pytest_obelize_bench.report.chart_files import write_figures
from pytest_obelize_bench.report.round.block_markdown import render_sections
from pytest_obelize_bench.report.round.case_entries import RoundData
from pytest_obelize_bench.report.round.figures import RoundFigures, round_figures
from pytest_obelize_bench.report.round.tier_charts import round_charts
from pytest_obelize_bench.report.summary_json import figures_summary

_ROUND_FOLDER = re.compile(r"round-([1-9][0-9]*)")


# -- the error analysis (pytest_obelize_bench.error_analysis.commands renders and loads it) ---------------

# The reviewer files (errors-round-N.yaml) sit beside the case file.


@dataclass(frozen=True)
class RoundOutputs:
    """Everything a round's figures give, computed once: its block, its charts and summary.json."""

    block: str
    charts: list[Chart]
    summary: dict[str, Any]
    #: why the round's error analysis could not be read (its block and summary then lack it)
    errors_problem: str | None = None


def round_outputs(results_dir: Path, case_file: CaseFile, data: RoundData) -> RoundOutputs:
    """The round's figures and its error analysis, each computed once, rendered every way they are shown."""
    figures = round_figures(data)
    block, charts = round_block_with_figures(figures)
    summary = figures_summary(figures)
    try:
        errors = round_error_figures(results_dir, case_file.path.parent, data.round, data.cases)
    except ValueError as exc:
        return RoundOutputs(block, charts, summary, str(exc).splitlines()[0])
    section = error_section(data.round, errors)
    found = error_summary(errors)
    return RoundOutputs(
        block.rstrip("\n") + section if section else block,
        charts,
        summary if found is None else {**summary, "error_analysis": found},
    )


def round_block_with_figures(figures: RoundFigures) -> tuple[str, list[Chart]]:
    """The round's block with its figures section (before any error analysis), and those figures' charts."""
    charts = round_charts(figures)
    section = figures_section(charts)
    block = render_sections(figures)
    return (block.rstrip("\n") + "\n" + "\n".join(section) + "\n" if section else block), charts


def round_case_files(results_dir: Path, case_file: CaseFile, rounds: Sequence[int]) -> dict[int, CaseFile]:
    """Each round with the case file it was run from (``records.runref.round_case_path``), each file loaded once."""
    loaded = {Path(case_file.path).resolve(): case_file}
    files = {}
    for n in rounds:
        path = round_case_path(results_dir, n, Path(case_file.path)).resolve()
        if path not in loaded:
            loaded[path] = load_case_file(path)
        files[n] = loaded[path]
    return files


def rounds_on_disk(results_dir: Path, case_file: CaseFile) -> list[int]:
    """Every ``results/round-N/`` folder's N, plus the case file's round (which may not have run)."""
    found = {case_file.round}
    if Path(results_dir).is_dir():
        for path in Path(results_dir).iterdir():
            match = _ROUND_FOLDER.fullmatch(path.name)
            if match and path.is_dir():
                found.add(int(match.group(1)))
    return sorted(found)


@dataclass
class LoadedRound:
    """A round's inputs for rendering, and everything ``--check`` must fail on."""

    data: RoundData
    problems: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)


def read_round_folder(results_dir: Path, case_file: CaseFile, n: int) -> LoadedRound:
    """Round n's published records (checked), its publication note, and the problems found.

    The case file's own round (or a later one) is every row of the file: a case with no record
    shows as not run. An earlier round is the cases it has records for, so a case added since
    does not appear in a round it was never part of.
    """
    folder = Path(results_dir) / f"round-{n}"
    published = read_published(folder, [case.id for case in case_file.cases])
    # Each record as the pages and ``show`` state it: round 1's records predate ``manifest_reported``,
    # and its collected file counts the pins, so a control's "no pin" is shown rather than assumed.
    shared = published_evidence(results_dir, case_file, n, lenient=True)
    facts = {case_id: attempt_facts(folder, shared, record) for case_id, record in published.records.items()}
    records = {case_id: one.completed for case_id, one in facts.items()}
    earlier = n < case_file.round
    cases = [case for case in case_file.cases if case.id in records] if earlier else list(case_file.cases)
    problems = list(published.problems)
    note: dict[str, Any] | None = None
    try:
        publication = read_publication(folder)
    except RecordError:
        publication = None
    if publication is not None:
        note = {
            "run": publication.run,
            "infrastructure_errors": publication.infrastructure_errors,
            "with_infrastructure_errors": publication.with_infrastructure_errors,
        }
        if publication.reruns:  # only then: a round never rerun keeps its summary as it was
            note["reruns"] = publication.reruns
        if publication.unreachable:  # likewise for a round whose run reached every row
            note["unreachable"] = dict(publication.unreachable)
    left_out = () if publication is None else publication.unreachable
    expected = expected_cases(case_file, n, left_out) if n >= case_file.round else sorted(records)
    if (folder / JOURNAL_NAME).exists():
        problems.append(
            f"round {n} is half-published ({folder / JOURNAL_NAME} is there): "
            "run `obelize-bench summarize` or `obelize-bench publish` to finish it"
        )
    problems.extend(publication_problems(Path(results_dir), n, published, expected))
    # Repeats and their graded facts, read as untrusted evidence (evidence.py).

    rows = {case.id: 0 if case.control else len(expected_rows(case)) for case in case_file.cases}
    # Hostile evidence (a symlinked or malformed graded-facts file) stops the render in one line.
    attempts = read_round_facts(folder, rows)
    data = RoundData(round=n, cases=cases, records=records, publication=note, attempts=attempts, facts=facts)
    return LoadedRound(data, problems, [str(folder / name) for name in published.unknown])


def load_round(results_dir: Path, case_file: CaseFile, n: int) -> RoundData:
    """Round n's inputs for rendering (problems are ``summarize --check``'s to report)."""
    return read_round_folder(results_dir, case_file, n).data


def write_round_outputs(results_dir: Path, case_file: CaseFile, n: int) -> tuple[Path, Path]:
    """Rewrite round n's block of the results document and ``results/round-N/summary.json``."""
    results_dir = Path(results_dir)
    data = load_round(results_dir, case_file, n)
    document = results_dir / DOCUMENT_NAME
    existing = document.read_text(encoding="utf-8") if document.exists() else None
    # An unreadable error-analysis file never costs the round its block; --check names it.
    outputs = round_outputs(results_dir, case_file, data)
    write_figures(results_dir, outputs.charts, prune=False)
    write_atomically(document, render_document(existing, {n: outputs.block}))
    summary_path = results_dir / f"round-{n}" / SUMMARY_NAME
    write_atomically(summary_path, committed_json(outputs.summary))
    return document, summary_path


__all__ = [
    "LoadedRound",
    "RoundOutputs",
    "load_round",
    "read_round_folder",
    "round_block_with_figures",
    "round_case_files",
    "round_outputs",
    "rounds_on_disk",
    "write_round_outputs",
]
