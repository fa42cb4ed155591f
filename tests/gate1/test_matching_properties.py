"""Matching findings to a key is multiset arithmetic: nothing counted twice, nothing lost."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from pytest_obelize_bench.gate1.matching import Row, compare

rows = st.lists(
    st.tuples(
        st.sampled_from(["a.py", "b.py"]),
        st.integers(min_value=1, max_value=4),
        st.sampled_from(["call", "import", "text_mention"]),
        st.one_of(st.none(), st.sampled_from(["genai.configure", "genai.GenerativeModel"])),
    ),
    max_size=12,
)


@given(rows, rows)
def test_matched_and_missing_make_the_key_and_matched_and_unexpected_the_findings(
    expected: list[Row], found: list[Row]
) -> None:
    result = compare(expected, found)
    assert Counter(result.matched) + Counter(result.missing) == Counter(expected)
    assert Counter(result.matched) + Counter(result.unexpected) == Counter(found)
    assert not (Counter(result.missing) & Counter(result.unexpected))


@given(rows, rows)
def test_matching_is_symmetric_and_ignores_order(expected: list[Row], found: list[Row]) -> None:
    forward, backward = compare(expected, found), compare(found, expected)
    assert forward.matched == backward.matched
    assert (forward.missing, forward.unexpected) == (backward.unexpected, backward.missing)
    assert compare(list(reversed(expected)), list(reversed(found))) == forward


@given(rows)
def test_a_key_matched_against_itself_leaves_nothing_over(expected: list[Row]) -> None:
    result = compare(expected, expected)
    assert (result.missing, result.unexpected) == ([], [])
    assert len(result.matched) == len(expected)
