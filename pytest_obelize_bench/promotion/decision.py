"""The pre-registered promotion decision: does a candidate obelize replace the incumbent?

``decide`` is pure: two runs' evidence and the policy in, one of three outcomes out, with every
rule it checked as a ``Reason`` (``reasons.RULES`` says why each exists). The checks, in order:

1. **registered and comparable evidence** (``evidence_rules``; the policy's sha256 each run
   recorded at its start; clean trees, no rerun tool error, no model, a candidate that is not
   the incumbent): anything missing or differing is ``insufficient_evidence``;
2. **vetoes** (``quality_rules``): a case turned ``wrong`` or a tool error, a broken control, a
   new false positive, forbidden report or false-positive edit is ``reject`` whatever the metric;
3. **missing evidence**: an unreviewed patch whose review would move its tier, an unknown
   runtime, a case with no score is ``insufficient_evidence``, naming each;
4. **gating**: no case with quality signal under the metric, or too small a share, is
   ``insufficient_evidence``;
5. **per case**: a lower score, a missed quality floor, fewer rows or a runtime beyond its cap
   is ``reject``;
6. **the verdict** (``verdict``): a resolution margin told apart by the paired test over cases
   promotes; at equal quality rows migrated, then the median runtime improvement decide.

The case is the unit throughout (``case_view``): attempts are shown beside, never counted as
evidence.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from pytest_obelize_bench.casefile.promotion_policy import Policy, PolicyError, load_policy
from pytest_obelize_bench.promotion.case_view import PairedCase, SideFigures, pair_cases, side_figures
from pytest_obelize_bench.promotion.evidence_rules import comparability, completeness, same_measurement
from pytest_obelize_bench.promotion.metrics import METRICS
from pytest_obelize_bench.promotion.quality_rules import case_rules, gating, missing_evidence, vetoes
from pytest_obelize_bench.promotion.reasons import RULES, Outcome, Reason, reason
from pytest_obelize_bench.promotion.verdict import paired_summary, verdict
from pytest_obelize_bench.records.evidence import RunEvidence

__all__ = [
    "DECISION_SCHEMA_VERSION",
    "Decision",
    "Policy",
    "PolicyError",
    "Reason",
    "decide",
    "load_policy",
    "pareto_front",
    "policy_changed",
    "registration",
]

DECISION_SCHEMA_VERSION = 3


@dataclass(frozen=True)
class Decision:
    candidate: str
    incumbent: str
    outcome: Outcome
    reasons: tuple[Reason, ...]
    incumbent_figures: SideFigures
    candidate_figures: SideFigures
    paired: Mapping[str, Any]
    cases: tuple[PairedCase, ...] = field(default=())

    @property
    def failed(self) -> tuple[Reason, ...]:
        """The rules that stopped a promotion (none when it promotes)."""
        if self.outcome == "promote":
            return ()
        return tuple(r for r in self.reasons if not r.holds)

    def as_dict(self) -> dict[str, Any]:
        return {
            "candidate": self.candidate,
            "incumbent": self.incumbent,
            "decision": self.outcome,
            "reasons": [{**asdict(r), "why": RULES[r.rule].why} for r in self.reasons],
            "failed_rules": list(dict.fromkeys(r.rule for r in self.failed)),
            "figures": {
                "incumbent": self.incumbent_figures.as_dict(),
                "candidate": self.candidate_figures.as_dict(),
            },
            "paired": dict(self.paired),
            "cases": [c.as_dict() for c in self.cases],
        }


def registration(policy_sha256: str, runs: Sequence[RunEvidence]) -> tuple[list[Reason], str | None]:
    """Pre-registration: the reasons, and why the policy is refused outright (None if it is not).

    A run that registered another policy at its start refuses this one: the thresholds changed
    after the evidence began. A run that registered none (older runs) cannot show the policy was
    fixed first: ``insufficient_evidence``.
    """
    reasons = []
    for run in runs:
        registered = None if run.manifest is None else run.manifest.promotion_policy_sha256
        if registered is not None and registered != policy_sha256:
            return [], (
                f"the policy changed after run {run.run_id} started: it registered policy sha256 "
                f"{registered[:16]}..., this policy is {policy_sha256[:16]}..."
            )
        reasons.append(
            reason(
                "preregistered",
                f"{run.label}: run.json promotion_policy_sha256",
                registered,
                policy_sha256,
                registered == policy_sha256,
                f"{run.label}: "
                + (
                    "registered this policy at its start"
                    if registered
                    else "registered no promotion policy at its start"
                ),
            )
        )
    return reasons, None


def decide(
    policy: Policy,
    incumbent: RunEvidence,
    candidate: RunEvidence,
    *,
    now: datetime,
    policy_sha256: str | None = None,
    keys_sha256: str | None = None,
) -> Decision:
    """The decision for one candidate against the incumbent (see the module docstring).

    ``policy_sha256`` given, each run must have registered it; ``keys_sha256`` given, the runs'
    registered case-file keys must be the case file's now.
    """
    evidence = [*completeness(incumbent), *completeness(candidate)]
    evidence.extend(comparability(policy, incumbent, candidate, now, keys_sha256))
    if policy_sha256 is not None:
        evidence.extend(registration(policy_sha256, (incumbent, candidate))[0])
    evidence.extend(same_measurement(incumbent, candidate))
    paired_cases = pair_cases(incumbent.attempts, candidate.attempts, METRICS[policy.metric])
    graded = [c for c in paired_cases if not c.control]
    inc = side_figures(incumbent.label, [c.incumbent for c in graded], policy.metric)
    cand = side_figures(candidate.label, [c.candidate for c in graded], policy.metric)
    paired = paired_summary(policy, graded, inc, cand)
    reasons: list[Reason] = list(evidence)
    outcome: Outcome | None = None if all(r.holds for r in evidence) else "insufficient_evidence"
    stages: tuple[tuple[Callable[[], list[Reason]], Outcome], ...] = (
        (lambda: vetoes(paired_cases), "reject"),
        (lambda: missing_evidence(paired_cases, incumbent, candidate), "insufficient_evidence"),
        (lambda: gating(policy, graded), "insufficient_evidence"),
        (lambda: case_rules(policy, graded), "reject"),
    )
    for stage, fails_to in stages:
        if outcome is not None:
            break
        checked = stage()
        reasons.extend(checked)
        if not all(r.holds for r in checked):
            outcome = fails_to
    if outcome is None:
        outcome, decided = verdict(policy, graded, inc, cand)
        reasons.extend(decided)
    return Decision(
        candidate=candidate.label,
        incumbent=incumbent.label,
        outcome=outcome,
        reasons=tuple(reasons),
        incumbent_figures=inc,
        candidate_figures=cand,
        paired=paired,
        cases=tuple(paired_cases),
    )


def pareto_front(figures: Sequence[SideFigures]) -> list[str]:
    """The variants no other beats on every objective: resolution and rows up, runtime down.

    An unknown figure counts as the worst value, so missing evidence never earns a place.
    """

    def objectives(f: SideFigures) -> tuple[float, float, float]:
        rows = -math.inf if f.rows_migrated is None else f.rows_migrated
        cost = -math.inf if f.runtime_median is None else -f.runtime_median
        return float(f.resolution), rows, cost

    def dominates(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
        return all(x >= y for x, y in zip(a, b, strict=True)) and any(x > y for x, y in zip(a, b, strict=True))

    scored = [(f.label, objectives(f)) for f in figures]
    return [label for label, mine in scored if not any(dominates(other, mine) for _, other in scored)]


def policy_changed(
    prior: Sequence[Mapping[str, Any]], policy_sha256: str, incumbent_run: str, candidate_run: str
) -> str | None:
    """Why the policy is refused, or None: an earlier decision on these runs used other bytes."""

    def run_id(side: Any) -> Any:
        return side.get("run_id") if isinstance(side, Mapping) else None

    for document in prior:
        inc, cand = run_id(document.get("incumbent")), run_id(document.get("candidate"))
        sha = document.get("policy_sha256")
        if inc == incumbent_run and cand == candidate_run and sha != policy_sha256:
            return (
                f"the policy changed after these runs were judged: an earlier decision on incumbent {inc} and "
                f"candidate {cand} used policy sha256 {str(sha)[:16]}..., this policy is {policy_sha256[:16]}..."
            )
    return None
