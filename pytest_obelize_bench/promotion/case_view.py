"""The case is the unit: each case's attempts become one figure per side.

Under ``--bench-repeat=K`` a case runs K times. A deterministic tool gives K identical attempts,
and a second one adds no information: pairing (case, attempt) would count one difference K
times. So every n the decision prints counts cases; attempts are shown beside, never as evidence.

Per case and side: its score under the policy's metric (``metrics.py``: the mean over its
attempts, in [0, 1]), how many attempts reached ``verified_success``, the median runtime over
its attempts, the mean rows migrated, the worst scan precision over its attempts, how many
attempts were ``wrong``, tool errors or wait on a review, and, for a control, whether every
attempt held. Pure.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from pytest_obelize_bench._util.stats import Rate, rate_of
from pytest_obelize_bench.grading.error_classes import INFRASTRUCTURE, error_class
from pytest_obelize_bench.grading.repeatability import AttemptFacts, by_case
from pytest_obelize_bench.promotion.metrics import METRICS, Metric

__all__ = ["CaseSide", "PairedCase", "SideFigures", "is_infrastructure", "pair_cases", "side_figures"]


def is_infrastructure(attempt: AttemptFacts) -> bool:
    """The machine's failure, not the tool's, by the rule every other figure uses."""
    if attempt.error_reason is None:
        return False
    return error_class(attempt.error_reason, attempt.error_step or "") == INFRASTRUCTURE


def _worst(values: Sequence[int | None]) -> int | None:
    """The largest count over the attempts; None when any attempt did not measure it."""
    if not values or any(v is None for v in values):
        return None
    return max(v for v in values if v is not None)


@dataclass(frozen=True)
class CaseSide:
    """One case on one side, over its attempts; ``scores`` are the metric's, one per attempt."""

    attempts: int
    resolved: int
    scores: tuple[Fraction | None, ...]
    runtime: float | None
    rows: float | None
    false_positive: int | None
    forbidden_reported: int | None
    false_positive_edit: int | None
    control_held: bool | None
    wrong: int = 0
    tool_errors: int = 0
    unreviewed: int = 0
    runtime_unknown: int = 0
    model_tokens: int = 0

    @property
    def known(self) -> bool:
        return bool(self.scores) and all(s is not None for s in self.scores)

    @property
    def rate(self) -> Fraction:
        """The case's score: the mean of its attempts' scores (0 when none is known)."""
        known = [s for s in self.scores if s is not None]
        return sum(known, Fraction(0)) / len(known) if known else Fraction(0)

    @property
    def best(self) -> Fraction:
        return max((s for s in self.scores if s is not None), default=Fraction(0))

    @property
    def worst(self) -> Fraction:
        return min((s for s in self.scores if s is not None), default=Fraction(0))

    @property
    def every_attempt(self) -> bool:
        return self.attempts > 0 and self.resolved == self.attempts

    def as_dict(self) -> dict[str, Any]:
        return {
            "resolved": f"{self.resolved}/{self.attempts}",
            "score": None if not self.known else float(self.rate),
            "attempt_scores": [None if s is None else float(s) for s in self.scores],
            "runtime_seconds_median": self.runtime,
            "rows_migrated_mean": self.rows,
            "false_positive": self.false_positive,
            "forbidden_reported": self.forbidden_reported,
            "false_positive_edit": self.false_positive_edit,
            "control_held": self.control_held,
            "wrong_attempts": self.wrong,
            "tool_error_attempts": self.tool_errors,
            "unreviewed_attempts": self.unreviewed,
            "runtime_unknown_attempts": self.runtime_unknown,
            "model_tokens_in": self.model_tokens,
        }


def case_side(attempts: Sequence[AttemptFacts], metric: Metric = METRICS["verified_success"]) -> CaseSide:
    runtimes = [a.runtime_seconds for a in attempts if a.runtime_seconds is not None]
    rows = [a.rows_migrated for a in attempts]
    held = [a.control_held for a in attempts]
    return CaseSide(
        attempts=len(attempts),
        resolved=sum(a.succeeded for a in attempts),
        scores=tuple(metric.score(a) for a in attempts),
        runtime=statistics.median(runtimes) if runtimes else None,
        rows=None if not rows or any(r is None for r in rows) else sum(r or 0 for r in rows) / len(rows),
        false_positive=_worst([a.false_positive for a in attempts]),
        forbidden_reported=_worst([a.forbidden_reported for a in attempts]),
        false_positive_edit=_worst([a.false_positive_edit for a in attempts]),
        control_held=False if False in held else (None if None in held else True),
        wrong=sum(a.tier == "wrong" for a in attempts),
        tool_errors=sum(a.tier == "error" and not is_infrastructure(a) for a in attempts),
        unreviewed=sum(a.review_pending for a in attempts),
        # an errored attempt measured no runtime by construction; any other attempt must have one
        runtime_unknown=sum(a.runtime_seconds is None and a.tier != "error" for a in attempts),
        model_tokens=sum(a.llm_tokens_in or 0 for a in attempts),
    )


@dataclass(frozen=True)
class PairedCase:
    """One case on both sides; gated when either side scores above the metric's floor somewhere."""

    case: str
    control: bool
    split: str | None
    incumbent: CaseSide
    candidate: CaseSide
    floor: Fraction = Fraction(0)

    @property
    def gated(self) -> bool:
        return max(self.incumbent.best, self.candidate.best) > self.floor

    @property
    def improvement_pct(self) -> float | None:
        """How much less runtime the candidate took, in percent of the incumbent's (None unknown)."""
        before, after = self.incumbent.runtime, self.candidate.runtime
        if before is None or after is None or before <= 0:
            return None
        return round(100.0 * (before - after) / before, 1)

    @property
    def rows_change(self) -> float | None:
        before, after = self.incumbent.rows, self.candidate.rows
        return None if before is None or after is None else after - before

    def as_dict(self) -> dict[str, Any]:
        change = self.candidate.rate - self.incumbent.rate
        return {
            "case": self.case,
            "control": self.control,
            "split": self.split,
            "gated": None if self.control else self.gated,
            # the case's own rate on each side, over its attempts: what the decision's figure draws
            "incumbent_verified": {"k": self.incumbent.resolved, "n": self.incumbent.attempts},
            "candidate_verified": {"k": self.candidate.resolved, "n": self.candidate.attempts},
            "incumbent": self.incumbent.as_dict(),
            "candidate": self.candidate.as_dict(),
            "change": "improvement" if change > 0 else "regression" if change < 0 else "same",
            "runtime_improvement_pct": self.improvement_pct,
            "rows_change": self.rows_change,
        }


def pair_cases(
    incumbent: Iterable[AttemptFacts], candidate: Iterable[AttemptFacts], metric: Metric = METRICS["verified_success"]
) -> list[PairedCase]:
    """Every case both sides have attempts of, controls included, sorted by case id."""
    inc, cand = by_case(incumbent), by_case(candidate)
    paired = []
    for case in sorted(set(inc) & set(cand)):
        first = inc[case][0]
        sides = case_side(inc[case], metric), case_side(cand[case], metric)
        paired.append(PairedCase(case, first.control, first.split, *sides, floor=metric.floor))
    return paired


@dataclass(frozen=True)
class SideFigures:
    """One side over the graded cases both runs share: cases and attempts counted apart.

    ``cases_resolved`` is the Wilson-rated figure: a case counts when every attempt reached
    ``verified_success`` (n is cases). ``resolution`` is the sum of the per-case scores under the
    policy's ``metric``, in cases: the resolution margin compares it.
    """

    label: str
    cases: int
    attempts: int
    attempts_resolved: int
    cases_resolved: Rate
    resolution: Fraction
    rows_migrated: float | None
    runtime_median: float | None
    metric: str = "verified_success"

    @property
    def rate(self) -> Rate:
        return self.cases_resolved

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "cases": self.cases,
            "attempts": self.attempts,
            "attempts_resolved": self.attempts_resolved,
            "verified_success": self.cases_resolved.as_dict(),
            "verified_success_counts": "cases resolved on every attempt, of cases",
            "metric": self.metric,
            "resolution_cases": float(self.resolution),
            "rows_migrated": self.rows_migrated,
            "runtime_seconds_median_of_cases": self.runtime_median,
        }


def side_figures(label: str, sides: Sequence[CaseSide], metric: str = "verified_success") -> SideFigures:
    rows = [s.rows for s in sides]
    runtimes = [s.runtime for s in sides if s.runtime is not None]
    return SideFigures(
        label=label,
        cases=len(sides),
        attempts=sum(s.attempts for s in sides),
        attempts_resolved=sum(s.resolved for s in sides),
        cases_resolved=rate_of(sum(s.every_attempt for s in sides), len(sides)),
        resolution=sum((s.rate for s in sides), Fraction(0)),
        rows_migrated=None if not rows or any(r is None for r in rows) else sum(r or 0.0 for r in rows),
        runtime_median=statistics.median(runtimes) if runtimes else None,
        metric=metric,
    )
