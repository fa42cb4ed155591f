"""Round 1's error analysis as the project publishes it, for the tests that check states and files."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from pytest_obelize_bench.casefile.cases import load_case_file
from pytest_obelize_bench.error_analysis.collected import read_collected
from pytest_obelize_bench.error_analysis.review import read_review
from pytest_obelize_bench.error_analysis.states import analyse
from tests.helpers.project import PROJECT

ROUND_1 = PROJECT / "results" / "errors" / "round-1.json"
REVIEW_1 = PROJECT / "cases" / "errors-round-1.yaml"


def round_1(path: Path = ROUND_1) -> Any:
    case_file = load_case_file(PROJECT / "cases" / "cases.yaml")
    review = read_review(REVIEW_1)
    misses = {(m.case, m.path, m.line, m.symbol): m.cause for m in review.misses}
    collected_round = read_collected(path)
    cases = [c for c in case_file.cases if c.id in collected_round.cases]
    return analyse(1, cases, collected_round, misses, review.unexpected)


def round_1_copy(folder: Path) -> tuple[Path, Path]:
    """The project's case file, round-1 review, round 1 and its collected rows, copied under
    ``folder``: a project a test may break. The copied case file and results folder."""
    cases = folder / "cases"
    cases.mkdir()
    shutil.copy(PROJECT / "cases" / "cases.yaml", cases / "cases.yaml")
    shutil.copy(REVIEW_1, cases / REVIEW_1.name)
    results = folder / "results"
    shutil.copytree(PROJECT / "results" / "round-1", results / "round-1")
    shutil.copytree(PROJECT / "results" / "errors", results / "errors")
    return cases / "cases.yaml", results


__all__ = ["REVIEW_1", "ROUND_1", "round_1", "round_1_copy"]
