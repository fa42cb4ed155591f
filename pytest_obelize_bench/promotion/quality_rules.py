"""The policy's rules over paired cases: controls, per-case quality, gating, runtime, rows. Pure.

* **Controls veto.** A control the incumbent held that the candidate breaks, or a new false
  positive, forbidden report or false-positive edit on any case, rejects whatever the rate.
* **Gating.** A case neither side resolves on any attempt carries no quality signal: it leaves
  the quality rules (never the runtime cap). No gated case, or fewer than ``min_gated_share``,
  is ``insufficient_evidence``.
* **Per case.** A lower resolution rate on any case rejects; so does the quality floor (where the
  incumbent resolves a case, the candidate must resolve every attempt), and a runtime
  regression beyond the per-case cap (gated) or the ungated-case cap.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pytest_obelize_bench.promotion.case_view import CaseSide, PairedCase
from pytest_obelize_bench.promotion.policy import Policy
from pytest_obelize_bench.promotion.reasons import Reason, reason

__all__ = ["case_rules", "controls_veto", "gating"]


def _shown(items: Sequence[str], most: int = 5) -> str:
    return ", ".join(items[:most]) + (" ..." if len(items) > most else "")


def _rule(rule: str, figure: str, hits: Sequence[str], limit: int, text: str) -> Reason:
    return reason(rule, figure, len(hits), limit, len(hits) <= limit, text + (f": {_shown(hits)}" if hits else ""))


def _added(pick: Callable[[CaseSide], int | None]) -> Callable[[PairedCase], str | None]:
    """The case and the counts when the candidate shows more of a fault than the incumbent did."""

    def check(case: PairedCase) -> str | None:
        before, after = pick(case.incumbent), pick(case.candidate)
        if after is None or after <= (before or 0):
            return None
        return f"{case.case} ({'--' if before is None else before} -> {after})"

    return check


def controls_veto(cases: Sequence[PairedCase]) -> list[Reason]:
    """Controls and scan precision: each fault the candidate adds is a veto (see the docstring)."""
    broken = [
        c.case for c in cases if c.control and c.incumbent.control_held is True and c.candidate.control_held is False
    ]
    reasons = [
        _rule(
            "controls_held",
            "controls the incumbent held that the candidate broke",
            broken,
            0,
            f"{len(broken)} controls the incumbent held report or edit under the candidate",
        )
    ]
    for rule, figure, pick in (
        ("no_new_false_positive", "false_positive", lambda s: s.false_positive),
        ("no_new_forbidden_report", "forbidden_reported", lambda s: s.forbidden_reported),
        ("no_new_false_positive_edit", "false_positive_edit", lambda s: s.false_positive_edit),
    ):
        check = _added(pick)
        hits = [hit for c in cases if (hit := check(c)) is not None]
        reasons.append(
            _rule(rule, f"cases whose {figure} rose", hits, 0, f"{len(hits)} cases where the candidate adds {figure}")
        )
    return reasons


def gating(policy: Policy, graded: Sequence[PairedCase]) -> list[Reason]:
    """Which cases carry quality signal, and whether enough of them do."""
    gated = [c.case for c in graded if c.gated]
    ungated = [c.case for c in graded if not c.gated]
    share = len(gated) / len(graded) if graded else 0.0
    reasons = [
        reason(
            "gated_cases",
            "cases either side resolves on some attempt",
            len(gated),
            ">= 1",
            bool(gated),
            f"{len(gated)} of {len(graded)} cases are gated"
            + ("" if gated else ": no case supplied quality signal (neither side resolved an attempt anywhere)")
            + (f"; not gated: {_shown(ungated)}" if ungated else ""),
        )
    ]
    if gated:
        reasons.append(
            reason(
                "min_gated_share",
                "share of cases gated",
                round(share, 4),
                policy.min_gated_share,
                share >= policy.min_gated_share,
                f"{len(gated)} of {len(graded)} cases gated ({share:.0%}); "
                f"at least {policy.min_gated_share:.0%} required",
            )
        )
    return reasons


def case_rules(policy: Policy, graded: Sequence[PairedCase]) -> list[Reason]:
    """Per-case regressions: resolution rate, the quality floor, and the runtime caps."""
    gated = [c for c in graded if c.gated]
    worse = [
        f"{c.case} ({c.incumbent.resolved}/{c.incumbent.attempts} -> {c.candidate.resolved}/{c.candidate.attempts})"
        for c in gated
        if c.candidate.rate < c.incumbent.rate
    ]
    floor = [
        f"{c.case} ({c.candidate.resolved}/{c.candidate.attempts})"
        for c in gated
        if c.incumbent.resolved > 0 and not c.candidate.every_attempt
    ]
    cap, ungated_cap = policy.efficiency.max_case_regression_pct, policy.efficiency.max_ungated_case_regression_pct
    slow = [f"{c.case} ({-(c.improvement_pct or 0):.1f}% slower)" for c in gated if (c.improvement_pct or 0) < -cap]
    slow_ungated = [
        f"{c.case} ({-(c.improvement_pct or 0):.1f}% slower)"
        for c in graded
        if not c.gated and (c.improvement_pct or 0) < -ungated_cap
    ]
    return [
        _rule(
            "case_resolution_regression",
            "gated cases resolved on fewer attempts",
            worse,
            0,
            f"{len(worse)} cases resolved less often by the candidate",
        ),
        _rule(
            "quality_floor",
            "cases the incumbent resolves that the candidate misses on some attempt",
            floor,
            0,
            f"{len(floor)} cases the incumbent resolves are not resolved on every attempt by the candidate",
        ),
        _rule(
            "case_runtime_regression",
            f"gated cases over {cap:g}% slower (median of attempts)",
            slow,
            0,
            f"{len(slow)} gated cases are more than {cap:g}% slower",
        ),
        _rule(
            "ungated_runtime_regression",
            f"ungated cases over {ungated_cap:g}% slower",
            slow_ungated,
            0,
            f"{len(slow_ungated)} cases neither side resolves are more than {ungated_cap:g}% slower",
        ),
    ]
