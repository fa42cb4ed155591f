"""The dev/holdout split rule, as pure functions.

The protocol assigns sides by rule so that nobody picks which cases are held out. Within each
stratum (repositories with a Python test file, and those without) the repositories are ordered by
the sha256 of their ``full_name``; owners are taken in that order and put into the holdout whole
until it holds at least a third of the stratum's cases. Stratifying keeps cases that could reach
``verified_success`` on both sides; moving whole owners keeps one author's habits from leaking
between dev and holdout.

The file is allowed to differ from the rule, but only for a recorded reason: a holdout case whose
failure led to a rule change moves to dev in the next round. ``split_differences`` lists every
difference together with its recorded reason, so a report can tell the explained ones from the
unexplained ones.

No I/O here: callers load the case file and build ``SplitMember`` values themselves.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_obelize_bench._util.digests import sha256_text

__all__ = [
    "DEV",
    "HOLDOUT",
    "HOLDOUT_SHARE",
    "SplitDifference",
    "SplitMember",
    "compute_split",
    "split_differences",
]

DEV = "dev"
HOLDOUT = "holdout"
# Numerator and denominator of the smallest holdout share per stratum (one third). Kept as two
# integers so the target is computed exactly, without a float third.
HOLDOUT_SHARE = (1, 3)


@dataclass(frozen=True)
class SplitMember:
    """What the rule needs to know about one case, and nothing more.

    ``testable`` is the stratum: whether the repository has a Python test file (path evidence,
    not a judgement that its tests cover the change).
    """

    id: str
    full_name: str
    owner: str
    testable: bool


@dataclass(frozen=True)
class SplitDifference:
    """One case whose side in the file is not the side the rule gives.

    ``reason`` is the recorded move reason, or None when nothing explains the difference, which a
    report should flag.
    """

    id: str
    file_split: str
    rule_split: str
    reason: str | None


def _order_key(member: SplitMember) -> tuple[str, str]:
    # The hash is the rule; the full name only breaks a (practically impossible) tie so the order
    # is total and never depends on the order the caller passed.
    return (sha256_text(member.full_name), member.full_name)


def _holdout_target(size: int) -> int:
    numerator, denominator = HOLDOUT_SHARE
    return math.ceil(size * numerator / denominator) if size else 0


def _check_members(members: Sequence[SplitMember]) -> None:
    seen_ids: set[str] = set()
    seen_names: set[str] = set()
    for member in members:
        if member.id in seen_ids:
            raise ValueError(f"split: case id {member.id!r} appears twice")
        if member.full_name in seen_names:
            raise ValueError(f"split: repository {member.full_name!r} appears twice")
        seen_ids.add(member.id)
        seen_names.add(member.full_name)


def _stratum_holdout_owners(
    stratum: Sequence[SplitMember], already: set[str], kept_in_dev: frozenset[str] = frozenset()
) -> set[str]:
    """Owners this stratum adds to the holdout; owners of ``already`` are in it whole and count, and
    owners of ``kept_in_dev`` (a side kept from an earlier round) are never taken."""
    cases_per_owner: dict[str, int] = {}
    for member in stratum:
        cases_per_owner[member.owner] = cases_per_owner.get(member.owner, 0) + 1
    target = _holdout_target(len(stratum))
    chosen: set[str] = set(already)
    held = sum(count for owner, count in cases_per_owner.items() if owner in already)
    for member in sorted(stratum, key=_order_key):
        if held >= target:
            break
        if member.owner in chosen or member.owner in kept_in_dev:
            continue
        chosen.add(member.owner)
        # An owner enters whole, so every one of its cases in this stratum counts.
        held += cases_per_owner[member.owner]
    return chosen - already


def compute_split(members: Sequence[SplitMember], kept: Mapping[str, str] | None = None) -> dict[str, str]:
    """Return ``{case id: "dev" | "holdout"}`` as the protocol's rule assigns it.

    Strata are handled separately, testable first. Within a stratum, owners are visited in the
    order of their repositories' sha256(full_name) hex digests, and each visited owner goes into
    the holdout with all of its cases in that stratum, until the holdout holds at least
    ceil(n/3) of the stratum's n cases. An owner is whole across strata too: one taken into the
    holdout in the testable stratum takes its cases of the other stratum with it, and they count
    there. The result depends only on the members, never on the order they were given in.
    Duplicate ids or repository names raise ValueError: a case counted twice would move the
    threshold.

    ``kept`` holds the sides of cases carried from an earlier round, which a new round does not
    reassign (a case measured on one side stays there): their owners enter each stratum on their
    side, whole, and the rule then takes new owners into the holdout, in the same order, until the
    stratum's holdout (kept cases counted) holds its third. Without it, every side is the rule's.
    """
    _check_members(members)
    kept = dict(kept or {})
    by_id = {m.id: m for m in members}
    unknown = sorted(set(kept) - set(by_id))
    if unknown:
        raise ValueError(f"split: kept side for case {unknown[0]!r}, which is not a member")
    holdout_owners = {by_id[case].owner for case, side in kept.items() if side == HOLDOUT}
    kept_in_dev = frozenset(by_id[case].owner for case, side in kept.items() if side == DEV)
    both = sorted(holdout_owners & kept_in_dev)
    if both:
        raise ValueError(f"split: owner {both[0]!r} has kept cases on both sides; an owner is whole")
    for testable in (True, False):
        stratum = [m for m in members if m.testable is testable]
        holdout_owners |= _stratum_holdout_owners(stratum, holdout_owners, kept_in_dev)
    return dict(sorted((m.id, HOLDOUT if m.owner in holdout_owners else DEV) for m in members))


def split_differences(
    members: Sequence[SplitMember],
    file_splits: Mapping[str, str],
    moves: Mapping[str, str],
    kept: Mapping[str, str] | None = None,
) -> list[SplitDifference]:
    """List every case whose split in the file differs from the rule, sorted by id.

    ``file_splits`` maps case id to the side the case file records; ``moves`` maps case id to the
    reason recorded for a move (``split_moves`` in the case file). A difference with no recorded
    reason carries ``reason=None`` so the caller can report it as unexplained; a recorded move for
    a case that matches the rule is not a difference and is not listed. A member missing from
    ``file_splits`` raises KeyError naming it, since a case without a side cannot be compared.
    """
    rule = compute_split(members, kept)
    differences: list[SplitDifference] = []
    for case_id in sorted(rule):
        if case_id not in file_splits:
            raise KeyError(f"split: case {case_id!r} has no split in the file")
        recorded = file_splits[case_id]
        if recorded != rule[case_id]:
            differences.append(
                SplitDifference(
                    id=case_id,
                    file_split=recorded,
                    rule_split=rule[case_id],
                    reason=moves.get(case_id),
                )
            )
    return differences
