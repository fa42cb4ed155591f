"""Round 1's error analysis as the project publishes it, for the tests that check states and files."""

from __future__ import annotations

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


__all__ = ["REVIEW_1", "ROUND_1", "round_1"]
