"""The dev/holdout split rule (pytest_obelize_bench.casefile.split).

Hand-built inputs pin the rule's parts one at a time; upstream's round-1 file (a byte-for-byte
copy in tests/data/upstream) pins the whole rule against splits somebody else computed.
"""

from __future__ import annotations

import hashlib
import math
import random
from typing import Any

import pytest
import yaml

from pytest_obelize_bench.casefile.split import (
    SplitDifference,
    SplitMember,
    compute_split,
    split_differences,
)
from tests.helpers.project import PROJECT

#: Upstream's round-1 case file, byte for byte (tests/data/upstream/SOURCE.txt).
UPSTREAM_CASES = PROJECT / "tests" / "data" / "upstream" / "cases.yaml"
OUR_CASES = PROJECT / "cases" / "cases.yaml"


def member(full_name: str, testable: bool = False) -> SplitMember:
    owner = full_name.split("/", 1)[0]
    return SplitMember(id=full_name.replace("/", "__"), full_name=full_name, owner=owner, testable=testable)


def holdout_ids(sides: dict[str, str]) -> set[str]:
    return {case_id for case_id, side in sides.items() if side == "holdout"}


def digest(full_name: str) -> str:
    return hashlib.sha256(full_name.encode("utf-8")).hexdigest()


# --- hand-built inputs -------------------------------------------------------------------------

# sha256 prefixes, computed once and written here so the expectations can be checked by eye:
#   testable:      cat/y 5cccae30 < ann/b 7118851e < bob/x 81b5ab22 < ann/a b950955c
#   non-testable:  dan/z 16a917dd < gus/u 299f4918 < fay/v 6b4bac89 < eve/w f3df9c1f
PINNED = [
    member("ann/a", True),
    member("ann/b", True),
    member("bob/x", True),
    member("cat/y", True),
    member("dan/z"),
    member("eve/w"),
    member("fay/v"),
    member("gus/u"),
]


def test_pinned_example_computed_by_hand() -> None:
    # Testable: 4 cases, target ceil(4/3) = 2. cat (1 held), then ann enters whole with both of
    # its repositories (3 held), even though ann/a sorts last. bob stays in dev.
    # Non-testable: 4 cases, target 2. dan (1), gus (2), stop.
    assert compute_split(PINNED) == {
        "ann__a": "holdout",
        "ann__b": "holdout",
        "bob__x": "dev",
        "cat__y": "holdout",
        "dan__z": "holdout",
        "eve__w": "dev",
        "fay__v": "dev",
        "gus__u": "holdout",
    }


def test_pinned_hash_order_is_what_the_comment_says() -> None:
    # Guards the hand computation above against a typo in a name.
    testable = sorted((m.full_name for m in PINNED if m.testable), key=digest)
    other = sorted((m.full_name for m in PINNED if not m.testable), key=digest)
    assert testable == ["cat/y", "ann/b", "bob/x", "ann/a"]
    assert other == ["dan/z", "gus/u", "fay/v", "eve/w"]


def test_two_case_owner_counts_twice() -> None:
    # jon/b 07cdaced and jon/x 54d77a12 sort first; the rest come after (9d79…, a43a…, afa1…,
    # ce34…). Six cases want 2 held: jon alone brings 2, so nobody else joins. Counting the owner
    # once would have pulled eve in as well.
    members = [
        member("jon/b"),
        member("jon/x"),
        member("eve/a"),
        member("gus/a"),
        member("oli/x"),
        member("dan/b"),
    ]
    assert holdout_ids(compute_split(members)) == {"jon__b", "jon__x"}


def test_whole_owner_may_overshoot_the_third() -> None:
    # Three cases want 1 held; the first owner has two, and both go.
    members = [member("jon/b"), member("jon/x"), member("eve/a")]
    assert compute_split(members) == {"jon__b": "holdout", "jon__x": "holdout", "eve__a": "dev"}


def test_strata_are_split_separately() -> None:
    # The same owner names in both strata do not interact: each stratum gets its own third.
    members = [member("jon/b", True), member("eve/a", True), member("gus/a", True)]
    members += [member("oli/x"), member("dan/b"), member("pat/x")]
    sides = compute_split(members)
    held_testable = [m for m in members if m.testable and sides[m.id] == "holdout"]
    held_other = [m for m in members if not m.testable and sides[m.id] == "holdout"]
    assert len(held_testable) == 1
    assert len(held_other) == 1
    # pat/x sorts first of its stratum (0d085fc3), jon/b first of its own (07cdaced).
    assert {m.id for m in held_testable} == {"jon__b"}
    assert {m.id for m in held_other} == {"pat__x"}


def test_single_case_stratum_goes_to_holdout_and_empty_input_is_empty() -> None:
    assert compute_split([member("eve/a", True)]) == {"eve__a": "holdout"}
    assert compute_split([]) == {}


def test_input_order_does_not_matter() -> None:
    expected = compute_split(PINNED)
    rng = random.Random(7)
    orders = [list(reversed(PINNED))]
    for _ in range(20):
        shuffled = list(PINNED)
        rng.shuffle(shuffled)
        orders.append(shuffled)
    for order in orders:
        assert compute_split(order) == expected
        assert compute_split(tuple(order)) == expected


def test_duplicate_ids_or_names_are_refused() -> None:
    with pytest.raises(ValueError, match="ann__a"):
        compute_split([member("ann/a"), member("ann/a")])
    clash = SplitMember(id="other", full_name="ann/a", owner="ann", testable=False)
    with pytest.raises(ValueError, match="ann/a"):
        compute_split([member("ann/a"), clash])


def _random_members(rng: random.Random) -> list[SplitMember]:
    owners = [f"o{i}" for i in range(rng.randint(1, 12))]
    members = []
    for index in range(rng.randint(1, 30)):
        owner = rng.choice(owners)
        members.append(member(f"{owner}/r{index}", testable=rng.random() < 0.4))
    return members


@pytest.mark.parametrize("seed", range(40))
def test_properties_on_random_inputs(seed: int) -> None:
    rng = random.Random(seed)
    members = _random_members(rng)
    sides = compute_split(members)
    assert set(sides) == {m.id for m in members}
    # Whole owners on one side, across both strata.
    by_owner: dict[str, set[str]] = {}
    for m in members:
        by_owner.setdefault(m.owner, set()).add(sides[m.id])
    assert all(len(s) == 1 for s in by_owner.values()), by_owner
    held_owners = {m.owner for m in members if sides[m.id] == "holdout"}

    def first_owners(group: list[SplitMember], already: set[str]) -> list[str]:
        """The shortest hash-ordered run of new owners that brings the stratum to a third."""
        target = math.ceil(len(group) / 3)
        count = sum(1 for m in group if m.owner in already)
        taken: list[str] = []
        for m in sorted(group, key=lambda x: digest(x.full_name)):
            if count >= target:
                break
            if m.owner in already or m.owner in taken:
                continue
            taken.append(m.owner)
            count += sum(1 for other in group if other.owner == m.owner)
        return taken

    testable = [m for m in members if m.testable]
    untestable = [m for m in members if not m.testable]
    first = first_owners(testable, set())
    second = first_owners(untestable, set(first))
    assert held_owners == set(first) | set(second)
    for group in (testable, untestable):
        if group:  # at least a third of each stratum held out
            assert sum(sides[m.id] == "holdout" for m in group) >= math.ceil(len(group) / 3)
    # An owner the second stratum adds takes its testable cases along, never the reverse split.
    for owner in set(second):
        assert all(sides[m.id] == "holdout" for m in testable if m.owner == owner)


def test_an_owner_with_cases_in_both_strata_is_never_split() -> None:
    # Found by hash order in the testable stratum, the owner takes its untestable case along.
    members = [member("zed/tested", testable=True), member("zed/plain", testable=False)]
    members += [member(f"o{i}/r", testable=False) for i in range(5)]
    sides = compute_split(members)
    assert sides["zed__tested"] == sides["zed__plain"] == "holdout"
    untestable = [m for m in members if not m.testable]
    assert sum(sides[m.id] == "holdout" for m in untestable) >= math.ceil(len(untestable) / 3)


# --- differences between the file and the rule -------------------------------------------------


def test_differences_list_only_cases_off_the_rule_with_their_reasons() -> None:
    rule = compute_split(PINNED)
    file_splits = dict(rule)
    file_splits["cat__y"] = "dev"  # moved, with a recorded reason
    file_splits["fay__v"] = "holdout"  # moved, unexplained
    moves = {"cat__y": "a rule was written from its code", "bob__x": "recorded but not moved"}
    assert split_differences(PINNED, file_splits, moves) == [
        SplitDifference(
            id="cat__y",
            file_split="dev",
            rule_split="holdout",
            reason="a rule was written from its code",
        ),
        SplitDifference(id="fay__v", file_split="holdout", rule_split="dev", reason=None),
    ]


def test_no_differences_when_the_file_follows_the_rule() -> None:
    assert split_differences(PINNED, compute_split(PINNED), {}) == []


def test_a_case_without_a_side_is_named() -> None:
    file_splits = compute_split(PINNED)
    del file_splits["gus__u"]
    with pytest.raises(KeyError, match="gus__u"):
        split_differences(PINNED, file_splits, {})


# --- the upstream round-1 file -----------------------------------------------------------------


@pytest.fixture(scope="module")
def upstream_round_1() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(UPSTREAM_CASES.read_text(encoding="utf-8"))
    return data


def _stratum_from_our_file() -> dict[str, bool]:
    # The upstream file does not carry the stratum (its corpus did); ours carries it per case.
    ours = yaml.safe_load(OUR_CASES.read_text(encoding="utf-8"))
    return {case["id"]: case["has_test_files"] for case in ours["cases"]}


def test_round_1_splits_are_reproduced_exactly(upstream_round_1: dict[str, Any]) -> None:
    testable = _stratum_from_our_file()
    cases = upstream_round_1["cases"]
    members = [
        SplitMember(id=c["id"], full_name=c["full_name"], owner=c["owner"], testable=testable[c["id"]]) for c in cases
    ]
    assert sum(m.testable for m in members) == 8
    published = {c["id"]: c["split"] for c in cases}
    assert compute_split(members) == published
    assert split_differences(members, published, {}) == []
    held = {c["owner"] for c in cases if c["split"] == "holdout"}
    assert held == {
        "AmineChr54",
        "grapeot",
        "navamai",
        "ImprintLab",
        "LJX2017",
        "kvcops",
        "taitran501",
    }


# --- sides kept from an earlier round ----------------------------------------------------------


def test_a_kept_dev_owner_is_passed_over_and_the_next_owners_fill_the_third() -> None:
    others = [m for m in PINNED if not m.testable]
    # dan/z comes first by its hash and would be held out; kept in dev, gus/u and fay/v are taken instead
    assert holdout_ids(compute_split(others)) == {"dan__z", "gus__u"}
    assert holdout_ids(compute_split(others, {"dan__z": "dev"})) == {"gus__u", "fay__v"}


def test_a_kept_holdout_case_counts_toward_the_third() -> None:
    others = [m for m in PINNED if not m.testable]
    # eve/w comes last by its hash; kept in the holdout it counts, so one owner more is taken
    assert holdout_ids(compute_split(others, {"eve__w": "holdout"})) == {"eve__w", "dan__z"}
    assert (
        split_differences(
            others,
            {"eve__w": "holdout", "dan__z": "holdout"} | {"gus__u": "dev", "fay__v": "dev"},
            {},
            {"eve__w": "holdout"},
        )
        == []
    )


def test_kept_sides_must_name_members_and_keep_owners_whole() -> None:
    with pytest.raises(ValueError, match="'zed__q', which is not a member"):
        compute_split(PINNED, {"zed__q": "dev"})
    with pytest.raises(ValueError, match="owner 'ann' has kept cases on both sides"):
        compute_split(PINNED, {"ann__a": "dev", "ann__b": "holdout"})
