"""A round's files on disk: finding rounds, loading their published records, writing the outputs.

Loading goes through ``published.read_published`` (only ``<id>.json`` for ids in the case file,
each checked), so no stray or forged file can reach a figure. ``summarize --check`` fails on
every problem found on the way: a refused record, a stored tier that disagrees with ``tier()``,
an unknown file in a round folder, published records that are not one complete run's, or a
document that differs from a fresh render.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from pytest_obelize_bench._util.caps import COLLECTED_ERRORS_BYTES
from pytest_obelize_bench._util.charts import Chart, figures_section
from pytest_obelize_bench._util.locks import LockBusy, holder_lock
from pytest_obelize_bench._util.safe_io import UntrustedFileError, read_untrusted_json, write_atomically
from pytest_obelize_bench.casefile.cases import CaseFile, CaseFileError, load_case_file
from pytest_obelize_bench.grading.record import Record, RecordError
from pytest_obelize_bench.records.published import JOURNAL_NAME, LOCK_NAME, SUMMARY_NAME, read_published
from pytest_obelize_bench.report.document import DOCUMENT_LOCK, DOCUMENT_NAME, check_document, render_document
from pytest_obelize_bench.report.round_block import render_round_block
from pytest_obelize_bench.report.round_cases import RoundData
from pytest_obelize_bench.report.round_charts import round_charts
from pytest_obelize_bench.report.round_figures import round_figures
from pytest_obelize_bench.report.summary_json import round_summary
from pytest_obelize_bench.summary.figures import check_figures, write_figures

_ROUND_FOLDER = re.compile(r"round-([1-9][0-9]*)")


# -- the error analysis (pytest_obelize_bench.error_analysis.commands renders and loads it) ---------------

# The reviewer files (errors-round-N.yaml) sit beside the case file.


def _errors_text(results_dir: Path, case_file: CaseFile, data: RoundData, block: str) -> str:
    """The round's block followed by its error-analysis section, when it has one."""
    from pytest_obelize_bench.error_analysis.commands import error_section

    section = error_section(results_dir, case_file.path.parent, data.round, data.cases)
    return block.rstrip("\n") + section if section else block


def _errors_figures(results_dir: Path, case_file: CaseFile, data: RoundData) -> dict[str, Any]:
    from pytest_obelize_bench.error_analysis.commands import error_summary

    figures = error_summary(results_dir, case_file.path.parent, data.round, data.cases)
    return {} if figures is None else {"error_analysis": figures}


def _errors_summaries(
    results_dir: Path, case_file: CaseFile, loaded: Sequence[RoundData], *, write: bool
) -> str | None:
    from pytest_obelize_bench.error_analysis.commands import error_summary, summary_json_problem

    for data in loaded:
        figures = error_summary(results_dir, case_file.path.parent, data.round, data.cases)
        problem = summary_json_problem(results_dir, data.round, figures, write=write)
        if problem is not None:
            return problem
    return None


def _with_pin_counts(records: dict[str, Record], collected: Path) -> dict[str, Record]:
    """Fill ``manifest_reported`` of records that predate it from the round's collected scan rows.

    Round 1's records do not count manifest findings, but its collected file
    (``results/errors/round-1.json``) lists every finding of every case, so a control's
    "no pin" can still be shown rather than assumed.  Records on disk are not changed.
    """
    missing = [case for case, record in records.items() if record.measurements.manifest_reported is None]
    if not missing:
        return records
    try:
        rows = read_untrusted_json(collected, COLLECTED_ERRORS_BYTES).get("cases", {})
    except UntrustedFileError:
        return records
    filled = dict(records)
    for case in missing:
        row = rows.get(case) if isinstance(rows, dict) else None
        findings = row.get("findings") if isinstance(row, dict) else None
        if not isinstance(findings, list) or records[case].error is not None:
            continue
        pins = sum(1 for finding in findings if isinstance(finding, dict) and finding.get("kind") == "manifest")
        record = records[case]
        measurements = record.measurements.model_copy(update={"manifest_reported": pins})
        filled[case] = record.model_copy(update={"measurements": measurements})
    return filled


def round_block_with_figures(data: RoundData) -> tuple[str, list[Chart]]:
    """The round's block with its figures section (before any error analysis), and those figures' charts."""
    charts = round_charts(round_figures(data))
    section = figures_section(charts)
    block = render_round_block(data)
    return (block.rstrip("\n") + "\n" + "\n".join(section) + "\n" if section else block), charts


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
    from pytest_obelize_bench.records.publication_note import (
        expected_cases,
        publication_problems,
        read_publication,
    )

    folder = Path(results_dir) / f"round-{n}"
    published = read_published(folder, [case.id for case in case_file.cases])
    records = _with_pin_counts(published.records, Path(results_dir) / "errors" / f"round-{n}.json")
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
    expected = expected_cases(case_file, n) if n >= case_file.round else sorted(records)
    if (folder / JOURNAL_NAME).exists():
        problems.append(
            f"round {n} is half-published ({folder / JOURNAL_NAME} is there): "
            "run `obelize-bench summarize` or `obelize-bench publish` to finish it"
        )
    problems.extend(publication_problems(Path(results_dir), n, published, expected))
    # Repeats and their graded facts, read as untrusted evidence (evidence.py).
    from pytest_obelize_bench.grading.grade import expected_rows
    from pytest_obelize_bench.records.evidence import read_round_facts

    rows = {case.id: 0 if case.control else len(expected_rows(case)) for case in case_file.cases}
    # Hostile evidence (a symlinked or malformed graded-facts file) stops the render in one line.
    attempts = read_round_facts(folder, rows)
    data = RoundData(round=n, cases=cases, records=records, publication=note, attempts=attempts)
    return LoadedRound(data, problems, [str(folder / name) for name in published.unknown])


def load_round(results_dir: Path, case_file: CaseFile, n: int) -> RoundData:
    """Round n's inputs for rendering (problems are ``summarize --check``'s to report)."""
    return read_round_folder(results_dir, case_file, n).data


def _dump(data: Mapping[str, Any]) -> str:
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def write_round_outputs(results_dir: Path, case_file: CaseFile, n: int) -> tuple[Path, Path]:
    """Rewrite round n's block of the results document and ``results/round-N/summary.json``."""
    results_dir = Path(results_dir)
    data = load_round(results_dir, case_file, n)
    document = results_dir / DOCUMENT_NAME
    existing = document.read_text(encoding="utf-8") if document.exists() else None
    (block, charts), errors = round_block_with_figures(data), {}
    # An unreadable error-analysis file never costs the round its block; --check names it.
    with contextlib.suppress(ValueError):
        block, errors = _errors_text(results_dir, case_file, data, block), _errors_figures(results_dir, case_file, data)
    write_figures(results_dir, charts, prune=False)
    write_atomically(document, render_document(existing, {n: block}))
    summary_path = results_dir / f"round-{n}" / SUMMARY_NAME
    write_atomically(summary_path, _dump({**round_summary(data), **errors}))
    return document, summary_path


def _stale_derived(document: Path, histories: Mapping[str, str], results_dir: Path, cases: Path) -> str | None:
    """None when every round's history block is as its history.json renders it and the project's
    results pages (``docs/results/``, when it has them) as ``results/`` renders them."""
    from pytest_obelize_bench.casefile.reviews import ReviewFileError
    from pytest_obelize_bench.measure.document import stale_block
    from pytest_obelize_bench.summary.site.pages import check_site_beside

    try:
        stale = stale_block(Path(document).read_text(encoding="utf-8"), histories) if histories else None
        site = check_site_beside(results_dir, cases)
    except OSError as exc:
        return f"{document} cannot be read: {exc.strerror or exc}"
    except (ValueError, ReviewFileError) as exc:
        return f"the results pages cannot be rendered: {str(exc).splitlines()[0]}"
    return stale or (f"the results pages differ ({site[0]}; {len(site)} in all)" if site else None)


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
    # The decisions list (decision_list.py) and the Gate 1 and dry-run blocks (measure_document.py)
    # are blocks of their own, with their own checks.
    from pytest_obelize_bench.casefile.reviews import ReviewFileError
    from pytest_obelize_bench.measure.document import (
        MeasurementError,
        apply_blocks,
        apply_measurements,
        check_measurements,
        measurement_charts,
        measurement_problems,
    )
    from pytest_obelize_bench.measure.publication import recover_measurements
    from pytest_obelize_bench.promotion.decision_chart import decision_charts
    from pytest_obelize_bench.promotion.decision_list import (
        check_decisions,
        render_decisions,
        with_decisions,
    )
    from pytest_obelize_bench.promotion.history_report import history_blocks
    from pytest_obelize_bench.records.evidence import EvidenceError, read_decision_documents
    from pytest_obelize_bench.records.review_drift import drifted_reviews
    from pytest_obelize_bench.summary.round_publication import recover_round
    from pytest_obelize_bench.summary.site.pages import write_site_beside

    try:
        case_file = load_case_file(case_file_path)
        rounds = rounds_on_disk(results_dir, case_file)
        if not check:
            for n in [n for n in rounds if (results_dir / f"round-{n}").is_dir()]:
                with holder_lock(results_dir / f"round-{n}" / LOCK_NAME, f"round {n}"):
                    for line in recover_round(results_dir, case_file, n):
                        print(f"obelize-bench summarize: {line}", file=stream)
            for line in recover_measurements(results_dir):
                print(f"obelize-bench summarize: {line}", file=stream)
        loaded = {n: read_round_folder(results_dir, case_file, n) for n in rounds}
        rendered = {n: round_block_with_figures(round_.data) for n, round_ in loaded.items()}
        blocks = {n: _errors_text(results_dir, case_file, loaded[n].data, block) for n, (block, _) in rendered.items()}
        stale = _errors_summaries(results_dir, case_file, [round_.data for round_ in loaded.values()], write=not check)
        documents = [(path.name, data) for path, data in read_decision_documents(results_dir / "decisions")]
        decisions = render_decisions(documents)
        charts: list[Chart] = [chart for _, round_charts_ in rendered.values() for chart in round_charts_]
        charts.extend(decision_charts(documents))
        histories, history_charts = history_blocks(results_dir, list(rounds))
        charts.extend(history_charts)
        drifted = drifted_reviews(Path(case_file_path), {n: round_.data.records for n, round_ in loaded.items()})
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
        text = apply_blocks(text, histories)
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


__all__ = [
    "LoadedRound",
    "load_round",
    "read_round_folder",
    "round_block_with_figures",
    "rounds_on_disk",
    "summarize",
    "write_round_outputs",
]
