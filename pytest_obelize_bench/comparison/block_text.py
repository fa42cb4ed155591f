"""The comparison's files on disk: every published comparison's block, and ``comparison check``.

A comparison record is ``results/comparison/round-N.json``; its review is
``cases/comparison-round-N.yaml`` beside the case file; the keys are the case file's rows; the
round's published records (``results/round-N/<id>.json``) fill in what round 1's record does not
carry.  Unreadable inputs raise ``ValueError`` in one line.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any, TextIO

from pytest_obelize_bench._util.charts import PointChart, figures_section
from pytest_obelize_bench.casefile.cases import CaseFileError, load_case_file
from pytest_obelize_bench.casefile.promotion_policy import policy_beside
from pytest_obelize_bench.comparison.assemble import ComparisonScore, RoundFacts, assemble
from pytest_obelize_bench.comparison.drawing import comparison_chart
from pytest_obelize_bench.comparison.review_file import (
    ReviewFile,
    ReviewFileError,
    read_review,
    review_path,
    review_problems,
)
from pytest_obelize_bench.comparison.rows import ComparisonRecord, ComparisonRecordError, read_comparison
from pytest_obelize_bench.comparison.side_by_side import block_name, render_comparison_block
from pytest_obelize_bench.grading.grade import expected_rows
from pytest_obelize_bench.records.published import read_published

_RECORD = re.compile(r"round-([1-9][0-9]*)\.json")


def comparison_path(results_dir: Path, n: int) -> Path:
    return Path(results_dir) / "comparison" / f"round-{n}.json"


def comparison_rounds(results_dir: Path) -> list[int]:
    """Every N with a ``results/comparison/round-N.json``."""
    folder = Path(results_dir) / "comparison"
    if not folder.is_dir():
        return []
    return sorted(int(m.group(1)) for p in folder.iterdir() if (m := _RECORD.fullmatch(p.name)))


def round_facts(results_dir: Path, n: int, cases: dict[str, Any]) -> dict[str, RoundFacts]:
    """What each case's published round-n record says of the baseline and of obelize's own run."""
    published = read_published(Path(results_dir) / f"round-{n}", list(cases))
    facts: dict[str, RoundFacts] = {}
    for case_id, record in published.records.items():
        m = record.measurements
        migrated = None if m.unmigrated is None else len(expected_rows(cases[case_id])) - m.unmigrated
        facts[case_id] = RoundFacts(
            baseline=m.tests_baseline,
            obelize_after=m.tests_after,
            obelize_runtime=m.runtime_seconds,
            obelize_compiles=m.patch_compiles,
            obelize_migrated=None if record.error is not None else migrated,
        )
    return facts


def _review_or_none(cases_dir: Path, n: int) -> ReviewFile | None:
    path = review_path(cases_dir, n)
    if not path.exists() and not path.is_symlink():
        return None
    return read_review(path)


def load_comparison(results_dir: Path, case_file_path: Path, n: int) -> tuple[ComparisonRecord, ReviewFile | None]:
    try:
        record = read_comparison(comparison_path(results_dir, n))
        review = _review_or_none(Path(case_file_path).parent, n)
    except (ComparisonRecordError, ReviewFileError) as exc:
        raise ValueError(str(exc)) from None
    if record.round != n:
        raise ValueError(f"{comparison_path(results_dir, n)}: round: says {record.round}, the file name {n}")
    return record, review


def scored_comparisons(results_dir: Path, case_file_path: Path) -> dict[int, ComparisonScore]:
    """Every published comparison, scored against the case file, by round."""
    rounds = comparison_rounds(results_dir)
    if not rounds:
        return {}
    try:
        case_file = load_case_file(case_file_path)
    except CaseFileError as exc:
        raise ValueError(exc.problems[0] if exc.problems else str(exc)) from None
    cases = {case.id: case for case in case_file.cases}
    scored = {}
    for n in rounds:
        record, review = load_comparison(results_dir, case_file_path, n)
        scored[n] = assemble(record, review, cases, round_facts(results_dir, n, cases))
    return scored


def comparison_charts(results_dir: Path, case_file_path: Path) -> list[PointChart]:
    """Each published comparison's chart: key rows cleared against runtime, per case and arm."""
    return [comparison_chart(n, score.scores) for n, score in scored_comparisons(results_dir, case_file_path).items()]


def comparison_blocks(results_dir: Path, case_file_path: Path) -> dict[str, str]:
    """Every published comparison's block, by block name, its figure linked at its end."""
    blocks: dict[str, str] = {}
    policy = policy_beside(case_file_path)
    for n, score in scored_comparisons(results_dir, case_file_path).items():
        block = render_comparison_block(score, policy)
        section = figures_section([comparison_chart(n, score.scores)])
        blocks[block_name(n)] = block.rstrip("\n") + "\n" + "\n".join(section) + "\n"
    return blocks


def check(results_dir: Path, case_file_path: Path, n: int, out: TextIO) -> int:
    """``obelize-bench comparison check --round N``: one line per problem, 0 when there is none."""
    try:
        record = read_comparison(comparison_path(results_dir, n))
        review = read_review(review_path(Path(case_file_path).parent, n))
    except (ComparisonRecordError, ReviewFileError) as exc:
        print(f"obelize-bench comparison check: {exc}", file=out)
        return 1
    problems = review_problems(record, review)
    for problem in problems:
        print(f"obelize-bench comparison check: round {n}: {problem}", file=out)
    if problems:
        return 1
    arms = " and ".join(sorted(record.arms))
    print(f"comparison round {n}: {len(record.cases)} cases reviewed for {arms}", file=out)
    return 0


def add_comparison_commands(sub: Any, default_cases: Path, default_results: Path) -> None:
    """Register ``comparison check`` under the console script's subcommands, with its handler."""
    group = sub.add_parser("comparison", help="the comparison arm's review file against its record")
    group.set_defaults(handler=run_comparison_command)
    commands = group.add_subparsers(dest="comparison_command", required=True, help="what to do with the comparison")
    p = commands.add_parser(
        "check", help="cases lacking a review; `wrong` entries naming a file the arm did not change"
    )
    p.add_argument("--round", type=int, required=True, dest="round_number", help="the comparison's round")
    p.add_argument("--cases", type=Path, default=default_cases, help="the case file; the review sits beside it")
    p.add_argument("--results", type=Path, default=default_results, help="the results folder")


def run_comparison_command(args: argparse.Namespace, out: TextIO) -> int:
    return check(args.results, args.cases, args.round_number, out)


__all__ = [
    "add_comparison_commands",
    "check",
    "comparison_blocks",
    "comparison_path",
    "comparison_rounds",
    "load_comparison",
    "round_facts",
    "run_comparison_command",
    "scored_comparisons",
]
