"""``obelize-bench errors collect`` and ``errors check``, and the error-analysis inputs on disk.

The I/O edge of the error analysis: where the files live, reading them, writing the collected
file once, and printing. Every decision is made by the pure modules (``errors_collected``,
``errors_states``, ``errors_check``, ``errors_block``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TextIO

from pytest_obelize_bench._util.safe_io import read_untrusted, write_atomically
from pytest_obelize_bench._util.strict_model import committed_json
from pytest_obelize_bench.casefile.cases import Case, CaseFileError, load_case_file
from pytest_obelize_bench.casefile.reviews import ReviewFileError
from pytest_obelize_bench.error_analysis.block import (
    ErrorFigures,
    error_figures,
    figures_dict,
    render_errors_block,
)
from pytest_obelize_bench.error_analysis.check import check_review, reference_problems
from pytest_obelize_bench.error_analysis.collected import (
    CollectedCase,
    CollectedFileError,
    CollectedRound,
    collect_case,
    collected_round,
    read_collected,
)
from pytest_obelize_bench.error_analysis.review import (
    ReviewFile,
    read_review,
    review_path,
)
from pytest_obelize_bench.error_analysis.states import Analysis, MissKey, analyse
from pytest_obelize_bench.grading.graded_facts import artefacts_from_json
from pytest_obelize_bench.grading.record import Record, RecordError, read_round
from pytest_obelize_bench.records.runref import round_case_path
from pytest_obelize_bench.tool.run_documents import MAX_DOCUMENT_BYTES

ERRORS_FOLDER = "errors"
_RUN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_REVIEW_NAME = re.compile(r"errors-round-([1-9][0-9]*)\.yaml")
#: Where a source checkout of obelize keeps its scan coverage list (numbered gaps).
COVERAGE_LIST = Path("tests/fixtures/scan/COVERAGE.md")
_ADR_NAME = re.compile(r"(ADR-\d{3})(?!\d)", re.IGNORECASE)
_GAP_LINE = re.compile(r"^\s*(?:[-*+]\s+|\|\s*|#+\s+)?(?:~~\s*)?(?:gap\s+)?(\d{1,2})\s*[.):|]", re.IGNORECASE)
_MAX_WALK = 50_000


class ErrorsInputError(ValueError):
    """An error-analysis input that cannot be read; one line naming the file."""


def collected_path(results_dir: Path, number: int) -> Path:
    return Path(results_dir) / ERRORS_FOLDER / f"round-{number}.json"


# -- collect ----------------------------------------------------------------------------------------


def _round_source(results_dir: Path, number: int, run: str | None) -> Path:
    folder = Path(results_dir) / f"round-{number}"
    if run is None:
        return folder
    if not _RUN.fullmatch(run) or run in {".", ".."}:
        raise ErrorsInputError(f"--run {run[:80]!r} is not a run id (one plain path component)")
    return folder / "runs" / run


def gather_cases(source: Path) -> tuple[dict[str, CollectedCase], list[str], list[str], list[Record]]:
    """Each record's collected entry from its graded facts; the left-out cases; the problems."""
    try:
        records = read_round(source)
    except RecordError as exc:
        raise ErrorsInputError(str(exc)) from None
    cases: dict[str, CollectedCase] = {}
    left_out: list[str] = []
    problems: list[str] = []
    used: list[Record] = []
    for case_id, record in sorted(records.items()):
        facts = source / "artefacts" / f"{case_id}.json"
        if not os.path.lexists(facts):
            if record.error is not None:
                left_out.append(
                    f"{case_id}: left out, it errored at {record.error.step} ({record.error.reason}) "
                    "before obelize left a run folder"
                )
            else:
                problems.append(
                    f"{facts}: missing; {case_id} has a record without an error, so its graded facts should be here"
                )
            continue
        try:
            text = read_untrusted(facts, MAX_DOCUMENT_BYTES).decode("utf-8")
            cases[case_id] = collect_case(artefacts_from_json(text, str(facts)), str(facts))
        except UnicodeDecodeError:
            problems.append(f"{facts}: not UTF-8")
            continue
        except ValueError as exc:
            problems.append(str(exc).splitlines()[0])
            continue
        used.append(record)
    return cases, left_out, problems, used


def collect(results_dir: Path, number: int, *, run: str | None, force: bool, out: TextIO) -> int:
    """Write ``results/errors/round-N.json`` from the round's records and graded facts, once."""
    try:
        source = _round_source(results_dir, number, run)
        cases, left_out, problems, used = gather_cases(source)
    except ErrorsInputError as exc:
        print(f"obelize-bench errors collect: {exc}", file=out)
        return 2
    for line in left_out:
        print(line, file=out)
    if problems:
        for line in problems:
            print(line, file=out)
        print(f"round {number}: nothing written ({len(problems)} problem{'s' if len(problems) != 1 else ''})", file=out)
        return 1
    if not cases:
        print(f"{source}: holds no record with graded facts; run the round before collecting it", file=out)
        return 1
    collected = collected_round(
        number,
        cases,
        (r.provenance.obelize_version for r in used),
        (r.provenance.pack_sha256 for r in used),
    )
    target = collected_path(results_dir, number)
    if os.path.lexists(target):
        try:
            existing: CollectedRound | None = read_collected(target)
        except CollectedFileError as exc:
            existing = None
            reason = str(exc)
        else:
            reason = "it holds different rows"
        if existing == collected:
            print(f"{target}: unchanged ({len(cases)} cases)", file=out)
            return 0
        if not force:
            print(
                f"{target}: already written and a new collect would change it ({reason}); "
                "refused (--force replaces it)",
                file=out,
            )
            return 1
        if os.path.islink(target):
            os.unlink(target)
    write_atomically(target, collected.to_json())
    withheld = sum(len(case.withheld) for case in cases.values())
    print(f"{target}: {len(cases)} cases, {withheld} withheld rows", file=out)
    return 0


# -- the analysis of one round from disk -----------------------------------------------------------


def _misses(review: ReviewFile | None) -> dict[MissKey, str]:
    if review is None:
        return {}
    return {(m.case, m.path, m.line, m.symbol): m.cause for m in review.misses}


def round_cases(results_dir: Path, number: int, cases: Iterable[Case], collected: CollectedRound) -> list[Case]:
    """The case file's rows for the cases the round ran (its records, else its collected entries)."""
    try:
        ran = set(read_round(Path(results_dir) / f"round-{number}")) or set(collected.cases)
    except RecordError as exc:
        raise ErrorsInputError(str(exc)) from None
    return [case for case in cases if case.id in ran]


def load_analysis(
    results_dir: Path, cases_dir: Path, number: int, cases: Iterable[Case]
) -> tuple[Analysis, ReviewFile | None] | None:
    """The round's analysis and its reviewer file, or None when the round has no collected file."""
    path = collected_path(results_dir, number)
    reviewer = review_path(cases_dir, number)
    try:
        review = read_review(reviewer) if os.path.lexists(reviewer) else None
        if not os.path.lexists(path):
            return None
        collected = read_collected(path)
    except (CollectedFileError, ReviewFileError) as exc:
        raise ErrorsInputError(str(exc)) from None
    if collected.round != number:
        raise ErrorsInputError(f"{path}: round: is {collected.round}, but the file is round {number}'s")
    chosen = round_cases(results_dir, number, cases, collected)
    unexpected = review.unexpected if review is not None else {}
    return analyse(number, chosen, collected, _misses(review), unexpected), review


def round_error_figures(results_dir: Path, cases_dir: Path, number: int, cases: Sequence[Case]) -> ErrorFigures | None:
    """Round ``number``'s error-analysis figures, analysed once for its block and its summary.json;
    None when the round has no collected file (``errors check`` is what insists on one)."""
    loaded = load_analysis(results_dir, cases_dir, number, cases)
    return None if loaded is None else error_figures(*loaded)


def error_section(number: int, figures: ErrorFigures | None) -> str:
    """The error-analysis text of round ``number``'s block, starting with a blank line; empty without figures."""
    return "" if figures is None else "\n\n" + render_errors_block(number, figures)


def error_summary(figures: ErrorFigures | None) -> dict[str, Any] | None:
    """The figures summary.json carries under ``error_analysis``; None without a collected file."""
    return None if figures is None else figures_dict(figures)


def summary_json_problem(results_dir: Path, number: int, figures: dict[str, Any] | None, *, write: bool) -> str | None:
    """Keep ``results/round-N/summary.json``'s ``error_analysis`` equal to ``figures``.

    A round with no summary.json is left alone. With ``write`` the key is rewritten (the rest of
    the file kept); without it, a one-line reason is returned when the key differs.
    """
    path = Path(results_dir) / f"round-{number}" / "summary.json"
    if not path.is_file():
        return None
    try:
        data = json.loads(read_untrusted(path, MAX_DOCUMENT_BYTES).decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        return f"{path}: cannot be read: {str(exc).splitlines()[0]}"
    if not isinstance(data, dict):
        return f"{path}: expected a JSON object"
    if data.get("error_analysis") == figures:
        return None
    if not write:
        return f"{path}: error_analysis differs from a fresh analysis"
    data["error_analysis"] = figures
    write_atomically(path, committed_json(data))
    return None


# -- check ------------------------------------------------------------------------------------------


def reviewed_rounds(cases_dir: Path) -> list[int]:
    """Every round with a reviewer file ``cases/errors-round-N.yaml``."""
    if not Path(cases_dir).is_dir():
        return []
    return sorted(int(m.group(1)) for p in Path(cases_dir).iterdir() if (m := _REVIEW_NAME.fullmatch(p.name)))


def adrs_in(checkout: Path) -> set[str]:
    """The ``ADR-NNN`` ids of every file or folder named for one under the checkout (no symlink followed)."""
    found: set[str] = set()
    seen = 0
    for _folder, dirs, files in os.walk(checkout, followlinks=False):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in {"node_modules", "__pycache__"}]
        for name in (*dirs, *files):
            seen += 1
            match = _ADR_NAME.match(name)
            if match:
                found.add(match.group(1).upper())
        if seen > _MAX_WALK:
            break
    return found


def gaps_in(text: str) -> dict[int, bool]:
    """Each numbered gap of a coverage list and whether it is open: a gap is a line that starts
    with its number (after a list marker, table bar or heading marks); it is closed when the line
    is struck through (``~~``) or says closed."""
    gaps: dict[int, bool] = {}
    for line in text.splitlines():
        match = _GAP_LINE.match(line)
        if match:
            number = int(match.group(1))
            closed = "~~" in line or re.search(r"\bclosed\b", line, re.IGNORECASE) is not None
            gaps[number] = gaps.get(number, True) and not closed
    return gaps


def _checkout_references(checkout: Path) -> tuple[set[str], dict[int, bool]]:
    if not checkout.is_dir():
        raise ErrorsInputError(f"--obelize {checkout}: not a directory")
    coverage = checkout / COVERAGE_LIST
    try:
        text = read_untrusted(coverage, MAX_DOCUMENT_BYTES).decode("utf-8")
    except (ValueError, UnicodeDecodeError) as exc:
        raise ErrorsInputError(f"--obelize: {str(exc).splitlines()[0]}") from None
    return adrs_in(checkout), gaps_in(text)


def check(results_dir: Path, cases_path: Path, rounds: Sequence[int] | None, obelize: Path | None, out: TextIO) -> int:
    """``errors check``: 0 when every reviewer file agrees with its round, 1 with one line per problem."""
    cases_dir = Path(cases_path).parent
    numbers = list(rounds) if rounds else reviewed_rounds(cases_dir)
    if not numbers:
        print(f"{cases_dir}: no reviewer file (errors-round-N.yaml); nothing to check", file=out)
        return 0
    try:
        # each round against the case file it was run from (round 3's carries round 2's rows and adds its own)
        case_files = {number: load_case_file(round_case_path(results_dir, number, cases_path)) for number in numbers}
        references = _checkout_references(Path(obelize)) if obelize is not None else None
    except CaseFileError as exc:
        for line in exc.problems:
            print(line, file=out)
        return 2
    except ErrorsInputError as exc:
        print(f"obelize-bench errors check: {exc}", file=out)
        return 2
    failed = False
    for number in numbers:
        reviewer = review_path(cases_dir, number)
        try:
            if not os.path.lexists(reviewer):
                raise ErrorsInputError(f"{reviewer}: does not exist; round {number} has no reviewer file")
            loaded = load_analysis(results_dir, cases_dir, number, case_files[number].cases)
            if loaded is None:
                raise ErrorsInputError(
                    f"{collected_path(results_dir, number)}: does not exist; "
                    f"run `obelize-bench errors collect --round {number}`"
                )
        except ErrorsInputError as exc:
            print(str(exc), file=out)
            failed = True
            continue
        analysis, review = loaded
        assert review is not None
        problems = check_review(review, analysis, str(reviewer))
        if references is not None:
            problems += reference_problems(review, str(reviewer), references[0], references[1], str(obelize))
        for line in problems:
            print(line, file=out)
        counts = analysis.counts
        if problems:
            failed = True
            print(f"round {number}: {len(problems)} problem{'s' if len(problems) != 1 else ''}", file=out)
        else:
            print(
                f"round {number}: {collected_path(results_dir, number)} and {reviewer} agree: "
                f"{len(analysis.states)} key rows ({', '.join(f'{counts[s]} {s}' for s in counts)}), "
                f"{len(review.causes)} causes, {len(review.misses)} misses, {len(review.unexpected)} unexpected"
                + (f"; every reference exists in {obelize}" if references is not None else ""),
                file=out,
            )
    return 1 if failed else 0


# -- the command line -------------------------------------------------------------------------------


def add_errors_commands(sub: Any, default_cases: Path, default_results: Path) -> None:
    """Register ``errors collect`` and ``errors check`` under the console script's subcommands."""
    group = sub.add_parser("errors", help="the round's unmigrated rows by cause, disposition and lever")
    commands = group.add_subparsers(dest="errors_command", required=True, help="what to do with the error analysis")
    p = commands.add_parser("collect", help="write results/errors/round-N.json from the round's graded facts (once)")
    p.add_argument("--round", type=int, required=True, dest="round_number")
    p.add_argument("--run", default=None, help="collect results/round-N/runs/RUN/ instead of the published round")
    p.add_argument("--results", type=Path, default=default_results)
    p.add_argument("--force", action="store_true", help="replace a collected file this collect would change")
    p = commands.add_parser("check", help="check each reviewer file cases/errors-round-N.yaml against its round")
    p.add_argument("--round", type=int, action="append", dest="rounds", help="only this round (repeatable)")
    p.add_argument(
        "--obelize", type=Path, default=None, help="an obelize source checkout: its ADRs must exist and gaps be open"
    )
    p.add_argument("--cases", type=Path, default=default_cases)
    p.add_argument("--results", type=Path, default=default_results)


def run_errors_command(args: argparse.Namespace, out: TextIO) -> int:
    if args.errors_command == "collect":
        return collect(args.results, args.round_number, run=args.run, force=args.force, out=out)
    return check(args.results, args.cases, args.rounds, args.obelize, out)
