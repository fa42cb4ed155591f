"""The split rule: an owner never sits on both sides, and the holdout is big enough in each stratum."""

from __future__ import annotations

import math
import random

from hypothesis import given
from hypothesis import strategies as st

from pytest_obelize_bench.casefile.split import HOLDOUT, SplitMember, compute_split


@st.composite
def members(draw: st.DrawFn) -> list[SplitMember]:
    names = draw(st.lists(st.text("abcdefgh", min_size=1, max_size=4), min_size=1, max_size=25, unique=True))
    owners = draw(
        st.lists(st.sampled_from(["o1", "o2", "o3", "o4", "o5", "o6"]), min_size=len(names), max_size=len(names))
    )
    testable = draw(st.lists(st.booleans(), min_size=len(names), max_size=len(names)))
    return [
        SplitMember(id=f"{owner}__{name}", full_name=f"{owner}/{name}", owner=owner, testable=flag)
        for name, owner, flag in zip(names, owners, testable, strict=True)
    ]


@given(members())
def test_no_owner_is_on_both_sides(cases: list[SplitMember]) -> None:
    split = compute_split(cases)
    sides: dict[str, set[str]] = {}
    for member in cases:
        sides.setdefault(member.owner, set()).add(split[member.id])
    assert all(len(found) == 1 for found in sides.values())


@given(members())
def test_each_stratum_holds_at_least_a_third_in_the_holdout(cases: list[SplitMember]) -> None:
    split = compute_split(cases)
    for testable in (True, False):
        stratum = [m for m in cases if m.testable is testable]
        held = sum(1 for m in stratum if split[m.id] == HOLDOUT)
        assert held >= math.ceil(len(stratum) / 3)


@given(members(), st.randoms())
def test_the_split_does_not_depend_on_the_order_given(cases: list[SplitMember], rng: random.Random) -> None:
    shuffled = list(cases)
    rng.shuffle(shuffled)
    assert compute_split(shuffled) == compute_split(cases)
