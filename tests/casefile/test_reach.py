"""The pin list that names a case file's unreachable rows: what it takes, what it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_obelize_bench.casefile.reach import ReachListError, parse_reach_list, read_reach_list, unreachable_rows
from pytest_obelize_bench.casefile.schema import Case

SHA_A, SHA_B, SHA_C = "a" * 40, "b" * 40, "c" * 40
HEADER = "listed_in\tfull_name\tsha\tstate"


def _case(case_id: str, full_name: str, sha: str, *, control: bool = False) -> Case:
    return Case(
        id=case_id, origin="corpus", control=control, provider="gemini", change="x", full_name=full_name, sha=sha
    )


def test_rows_whose_state_is_not_packed_are_named_with_that_state() -> None:
    pins = parse_reach_list(
        f"{HEADER}\ncases.yaml\towner/one\t{SHA_A}\tpacked\ncases.yaml\towner/two\t{SHA_B}\tno snapshot can be had\n"
        f"gate1\towner/two\t{SHA_B}\tno snapshot can be had\n",
        "pins.tsv",
    )
    cases = [
        _case("owner__one", "owner/one", SHA_A),
        _case("owner__two", "owner/two", SHA_B, control=True),
        _case("owner__three", "owner/three", SHA_C),  # not listed: reachable
        _case("owner__four", "owner/two", SHA_C),  # another pin of a listed repository: reachable
    ]
    assert unreachable_rows(cases, pins) == {"owner__two": "no snapshot can be had"}


def test_columns_are_found_by_their_header_in_any_order() -> None:
    pins = parse_reach_list(f"state\tsha\tfull_name\nthe pin is absent\t{SHA_A}\tx/y\n", "list")
    assert pins == {("x/y", SHA_A): "the pin is absent"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "list: empty; expected a header naming full_name, sha, state"),
        ("full_name\tsha\n", "list: line 1: header: expected the columns state (tab-separated)"),
        (f"full_name\tsha\tstate\nx/y\t{SHA_A}\n", "list: line 2: expected 3 tab-separated cells, got 2"),
        (f"full_name\tsha\tstate\nxy\t{SHA_A}\tpacked\n", "list: line 2: full_name: expected owner/name, got 'xy'"),
        (
            "full_name\tsha\tstate\nx/y\tabc\tpacked\n",
            "list: line 2: sha: expected a full 40-hex commit SHA, got 'abc'",
        ),
        (f"full_name\tsha\tstate\nx/y\t{SHA_A}\t \n", "list: line 2: state: expected packed or why it is not"),
        (
            f"full_name\tsha\tstate\nx/y\t{SHA_A}\tpacked\n\nx/y\t{SHA_A}\tgone\n",
            f"list: line 4: state: x/y@{SHA_A[:12]} is 'packed' on an earlier line and 'gone' here",
        ),
    ],
)
def test_a_bad_list_is_one_line_naming_the_file_the_line_and_the_field(text: str, expected: str) -> None:
    with pytest.raises(ReachListError) as caught:
        parse_reach_list(text, "list")
    assert str(caught.value) == expected


def test_a_link_in_place_of_the_list_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real.tsv"
    real.write_text(f"full_name\tsha\tstate\nx/y\t{SHA_A}\tgone\n", encoding="utf-8")
    assert read_reach_list(real) == {("x/y", SHA_A): "gone"}
    link = tmp_path / "pins.tsv"
    link.symlink_to(real)
    with pytest.raises(ReachListError) as caught:
        read_reach_list(link)
    assert str(link) in str(caught.value)
