"""The primary metrics a policy can choose: what one attempt of one case scores, in [0, 1].

Every per-case rule (gating, per-case regression, the floor, the gated share, the margin, the
paired test) reads a case's score on each side and nothing else, so the rules are the same
whichever metric the policy names:

* ``verified_success``: 1 when the attempt reached ``verified_success``, else 0. The protocol's
  target; it decides nothing on a round whose ceiling is 0.
* ``rows_migrated_share``: the share of the key's rows the attempt migrated. A ``wrong`` or
  errored attempt scores 0: a tool that broke a repository has not partially succeeded.
* ``tier_ladder``: the tier as a rung, ``wrong`` 0 < ``error`` 1 < ``unsupported`` 2 <
  ``partial`` 3 < ``patched_unverified`` 4 < ``verified_success`` 5, over 5.

A case carries quality signal (is *gated*) when either side scores above the metric's floor on
some attempt: not verified, no row migrated, nothing above a fail-closed refusal. Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from pytest_obelize_bench.casefile.promotion_policy import MetricName
from pytest_obelize_bench.grading.repeatability import SUCCESS, AttemptFacts

__all__ = ["LADDER", "METRICS", "Metric"]

#: The tier ladder, worst first: a broken repository is worse than a crash, a crash worse than a
#: clean refusal.
LADDER = ("wrong", "error", "unsupported", "partial", "patched_unverified", "verified_success")


@dataclass(frozen=True)
class Metric:
    name: MetricName
    score: Callable[[AttemptFacts], Fraction | None]
    floor: Fraction
    unit: str


def _verified(attempt: AttemptFacts) -> Fraction:
    return Fraction(int(attempt.tier == SUCCESS))


def _rows_share(attempt: AttemptFacts) -> Fraction | None:
    if attempt.tier in ("wrong", "error"):
        return Fraction(0)
    if attempt.rows_total is None or attempt.rows_migrated is None:
        return None
    if attempt.rows_total == 0:
        return Fraction(0)
    return Fraction(attempt.rows_migrated, attempt.rows_total)


def _rung(attempt: AttemptFacts) -> Fraction:
    return Fraction(LADDER.index(attempt.tier), len(LADDER) - 1)


METRICS: dict[str, Metric] = {
    "verified_success": Metric("verified_success", _verified, Fraction(0), "cases verified"),
    "rows_migrated_share": Metric("rows_migrated_share", _rows_share, Fraction(0), "cases' worth of key rows"),
    "tier_ladder": Metric(
        "tier_ladder", _rung, Fraction(LADDER.index("unsupported"), len(LADDER) - 1), "cases' worth of tier rungs"
    ),
}
