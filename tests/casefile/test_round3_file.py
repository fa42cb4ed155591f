"""Round 3's case file: round 2's rows carried unchanged, the new rows split by the rule around them."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from pytest_obelize_bench.casefile.cases import load_case_file
from pytest_obelize_bench.casefile.split import SplitMember, compute_split
from tests.helpers.project import PROJECT

ROUND_2 = PROJECT / "cases" / "cases.yaml"
ROUND_3 = PROJECT / "cases" / "cases-round-3.yaml"
CANDIDATES = PROJECT.parent / "shared" / "frame-candidates" / "gemini.yaml"


def _raw(path: Any) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data


def test_round_2_rows_are_carried_unchanged_with_their_sides_kept() -> None:
    two, three = _raw(ROUND_2), _raw(ROUND_3)
    carried = {row["id"]: row for row in three["cases"]}
    for row in two["cases"]:
        assert carried[row["id"]] == row
    assert three["controls"] == two["controls"]
    assert sorted(three["kept_sides"]["cases"]) == sorted(row["id"] for row in two["cases"])
    assert three["kept_sides"]["from_round"] == 2


def test_the_new_rows_are_the_split_rule_s_around_the_kept_sides() -> None:
    case_file = load_case_file(ROUND_3)
    cases = [case for case in case_file.cases if not case.control]
    members = [SplitMember(c.id, str(c.full_name), str(c.owner), bool(c.has_test_files)) for c in cases]
    kept = {c.id: str(c.split) for c in cases if c.id in case_file.kept_sides}
    rule = compute_split(members, kept)
    assert {c.id: c.split for c in cases} == rule
    for testable in (True, False):
        stratum = [c for c in cases if bool(c.has_test_files) is testable]
        assert 3 * sum(c.split == "holdout" for c in stratum) >= len(stratum)


def test_every_candidate_is_drawn_in_order_or_left_out_with_a_reason() -> None:
    three = _raw(ROUND_3)
    new = [row["full_name"] for row in three["cases"][len(_raw(ROUND_2)["cases"]) :]]
    left = {row["full_name"]: row["reason"] for row in three["left_out"]}
    assert all(reason.strip() for reason in left.values())
    if not CANDIDATES.is_file():
        pytest.skip(f"the candidate list is not here ({CANDIDATES}): the rows are checked against it where it is")
    listed = [row["full_name"] for row in _raw(CANDIDATES)["repositories"]]
    assert [name for name in listed if name not in left] == new
    pins = {row["full_name"]: row["sha"] for row in _raw(CANDIDATES)["repositories"]}
    assert all(pins[row["full_name"]] == row["sha"] for row in three["cases"] if row["full_name"] in pins)
