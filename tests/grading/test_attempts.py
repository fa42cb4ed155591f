"""Attempt names: every writer and parser agrees, and a malformed name is never a repeat."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_obelize_bench.grading.attempts import (
    attempt_stem,
    item_name,
    parse_item_name,
    parse_stem,
    record_file_name,
)
from pytest_obelize_bench.grading.record import repeat_stems

case_ids = st.from_regex(r"[a-z0-9][a-z0-9_-]{0,12}__[a-z0-9][a-z0-9._-]{0,12}", fullmatch=True)


def test_the_first_attempt_keeps_the_plain_names() -> None:
    assert attempt_stem("a__b", 1) == attempt_stem("a__b", None) == "a__b"
    assert record_file_name("a__b", 1) == "a__b.json"
    assert item_name("a__b", 1, repeat=1) == "a__b"
    assert item_name("a__b", 1, repeat=3) == "a__b[attempt-1]"
    assert record_file_name("a__b", 3) == "a__b.attempt-3.json"


@given(case_ids, st.integers(min_value=1, max_value=50), st.integers(min_value=2, max_value=50))
def test_names_parse_back_to_their_case_and_attempt(case: str, attempt: int, repeat: int) -> None:
    assert parse_stem(attempt_stem(case, attempt)) == (case, attempt)
    assert parse_item_name(item_name(case, attempt, repeat)) == (case, attempt)
    assert parse_item_name(item_name(case, 1, 1)) == (case, 1)


@pytest.mark.parametrize(
    "stem", ["a__b.attempt-1", "a__b.attempt-02", "a__b.attempt-+2", "a__b.attempt-", "a__b.attempt-x"]
)
def test_a_malformed_repeat_stem_is_no_repeat(stem: str) -> None:
    assert parse_stem(stem) == (stem, 1)
    assert repeat_stems([f"{stem}.json"]) == {}


def test_repeat_stems_keeps_the_repeats_of_the_cases_asked_for() -> None:
    names = ["a__b.json", "a__b.attempt-2.json", "c__d.attempt-3.json", "a__b.attempt-2.txt", "summary.json"]
    assert repeat_stems(names) == {"a__b.attempt-2": "a__b", "c__d.attempt-3": "c__d"}
    assert repeat_stems(names, ["c__d"]) == {"c__d.attempt-3": "c__d"}
