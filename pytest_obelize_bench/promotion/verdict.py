"""What decides once no rule has vetoed: the resolution margin, then rows, then runtime. Pure.

* **The paired test runs over cases**: an exact two-sided sign test on the per-case differences
  in resolution rate (cases the candidate resolves more often against cases it resolves less
  often; ties drop out). When every case's attempts agree, as a deterministic tool's do, this is
  exactly McNemar's test on the cases whose outcome differs. With several attempts that
  disagree it still counts each case once, without choosing a threshold to make k of m binary.
* **Quality.** A candidate whose resolution (the sum of its per-case rates, in cases) beats the
  incumbent's by at least ``resolution_margin`` promotes only when the difference is
  distinguishable: at least ``min_n`` cases, 95% Wilson intervals of cases resolved on every
  attempt that do not overlap, and the sign test's p under ``alpha``. Otherwise nothing can be
  told apart: ``insufficient_evidence``.
* **Rows migrated**, at equal quality only, with their own noise rule: a rise of at least
  ``rows.min_margin`` rows, no case losing rows (beyond ``rows.max_case_regressions``), and a
  sign test over the cases whose rows changed under ``alpha``. One more row never promotes.
* **Runtime**, last: the median over gated cases of each case's improvement (its median
  runtime over attempts) must reach ``efficiency.min_median_improvement_pct``.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from pytest_obelize_bench._util.stats import intervals_overlap, mcnemar_exact, minimum_detectable
from pytest_obelize_bench.promotion.case_view import PairedCase, SideFigures
from pytest_obelize_bench.promotion.policy import Policy
from pytest_obelize_bench.promotion.reasons import Outcome, Reason, reason

__all__ = ["PAIRED_TEST", "paired_summary", "verdict"]

PAIRED_TEST = "exact two-sided sign test on per-case resolution-rate differences (McNemar on cases)"


def paired_summary(policy: Policy, graded: Sequence[PairedCase], inc: SideFigures, cand: SideFigures) -> dict[str, Any]:
    """The paired test over cases, its verdict at the policy's alpha and what this n can detect."""
    lower = sum(c.candidate.rate < c.incumbent.rate for c in graded)
    higher = sum(c.candidate.rate > c.incumbent.rate for c in graded)
    p = mcnemar_exact(lower, higher)
    apart = not _overlap(inc, cand)
    enough = min(inc.cases, cand.cases) >= policy.min_n
    why = [
        text
        for holds, text in (
            (enough, f"{min(inc.cases, cand.cases)} cases < min_n {policy.min_n}"),
            (apart, "the 95% intervals overlap"),
            (p < policy.alpha, f"p = {p:.4f} >= alpha {policy.alpha:g}"),
        )
        if not holds
    ]
    detectable = minimum_detectable(len(graded), policy.alpha, policy.power)
    return {
        "unit": "case",
        "test": PAIRED_TEST,
        "cases": len(graded),
        "attempts_per_case": sorted({c.incumbent.attempts for c in graded} | {c.candidate.attempts for c in graded}),
        "incumbent_higher": lower,
        "candidate_higher": higher,
        "same": len(graded) - lower - higher,
        "p": p,
        "alpha": policy.alpha,
        "distinguishable": not why,
        "verdict": (
            f"distinguishable at alpha {policy.alpha:g}"
            if not why
            else f"not distinguishable at alpha {policy.alpha:g}: " + "; ".join(why)
        ),
        "minimum_detectable": detectable.as_dict(),
        "minimum_detectable_text": detectable.format(),
    }


def _overlap(inc: SideFigures, cand: SideFigures) -> bool:
    a, b = inc.cases_resolved, cand.cases_resolved
    if a.low is None or a.high is None or b.low is None or b.high is None:
        return True
    return intervals_overlap((a.low, a.high), (b.low, b.high))


def _distinguishable(
    policy: Policy, inc: SideFigures, cand: SideFigures, paired: dict[str, Any]
) -> tuple[Outcome, list[Reason]]:
    fewest = min(inc.cases, cand.cases)
    overlap = _overlap(inc, cand)
    p = paired["p"]
    reasons = [
        reason("min_n", "cases on the smaller side", fewest, policy.min_n, fewest >= policy.min_n,
               f"{inc.cases} and {cand.cases} graded cases; min_n is {policy.min_n} cases"),
        reason("intervals_apart", "95% Wilson intervals of cases resolved on every attempt overlap", overlap, False,
               not overlap, f"cases resolved {inc.cases_resolved.k}/{inc.cases} {inc.rate.format()} and "
               f"{cand.cases_resolved.k}/{cand.cases} {cand.rate.format()}: {'overlap' if overlap else 'apart'}"),
        reason("alpha", "paired exact sign test p over cases", p, policy.alpha, p < policy.alpha,
               f"sign test over {paired['cases']} cases: {paired['candidate_higher']} resolved more often by the "
               f"candidate, {paired['incumbent_higher']} by the incumbent; p = {p:.4f}, alpha is {policy.alpha:g}"),
    ]  # fmt: skip
    return ("promote" if all(r.holds for r in reasons) else "insufficient_evidence"), reasons


def _rows(policy: Policy, graded: Sequence[PairedCase]) -> tuple[Outcome | None, list[Reason]]:
    """Rows decide only with a real rise from several cases; None when they do not decide."""
    changes = [(c.case, c.rows_change) for c in graded]
    if any(change is None for _, change in changes):
        return None, []
    total = sum(change or 0.0 for _, change in changes)
    fewer = [f"{case} ({change:+g})" for case, change in changes if (change or 0) < 0]
    more = [case for case, change in changes if (change or 0) > 0]
    regress = reason(
        "rows_case_regression", "cases with fewer rows migrated", len(fewer), policy.rows.max_case_regressions,
        len(fewer) <= policy.rows.max_case_regressions,
        f"{len(fewer)} cases migrate fewer rows under the candidate" + (f": {', '.join(fewer[:5])}" if fewer else ""),
    )  # fmt: skip
    if not regress.holds:
        return "reject", [regress]
    if total <= 0:
        return None, [regress]
    p = mcnemar_exact(len(fewer), len(more))
    reasons = [
        regress,
        reason("rows_margin", "rows migrated change (sum of per-case means)", total, policy.rows.min_margin,
               total >= policy.rows.min_margin, f"rows migrated {total:+g}; at least {policy.rows.min_margin:g}"),
        reason("rows_alpha", "sign test p over cases whose rows changed", p, policy.alpha, p < policy.alpha,
               f"{len(more)} cases gain rows, {len(fewer)} lose; p = {p:.4f}, alpha is {policy.alpha:g}"),
    ]  # fmt: skip
    return ("promote" if all(r.holds for r in reasons) else None), reasons


def _efficiency(policy: Policy, graded: Sequence[PairedCase]) -> tuple[Outcome, list[Reason]]:
    improvements = [i for c in graded if c.gated and (i := c.improvement_pct) is not None]
    wanted = policy.efficiency.min_median_improvement_pct
    if not improvements:
        return "insufficient_evidence", [
            reason("efficiency", "median per-case runtime improvement", None, wanted, False,
                   "no gated case has a runtime on both sides, so runtime cannot decide"),
        ]  # fmt: skip
    median = round(statistics.median(improvements), 1)
    holds = median >= wanted
    return ("promote" if holds else "reject"), [
        reason("efficiency", "median per-case runtime improvement (%)", median, wanted, holds,
               f"median runtime improvement over {len(improvements)} gated cases is {median:.1f}%; "
               f"at least {wanted:g}% required"),
    ]  # fmt: skip


def verdict(
    policy: Policy, graded: Sequence[PairedCase], inc: SideFigures, cand: SideFigures, paired: dict[str, Any]
) -> tuple[Outcome, list[Reason]]:
    """Quality by margin and a paired test; at equal quality rows, then runtime (see the docstring)."""
    margin = cand.resolution - inc.resolution
    wanted = Fraction(policy.resolution_margin).limit_denominator(10**6)
    text = f"resolution {float(inc.resolution):g} -> {float(cand.resolution):g} cases ({float(margin):+g})"
    if margin >= wanted:
        outcome, reasons = _distinguishable(policy, inc, cand, paired)
        head = reason("resolution_margin", "resolution change (cases)", float(margin), policy.resolution_margin, True,
                      f"{text}; at least {policy.resolution_margin:g} required")  # fmt: skip
        return outcome, [head, *reasons]
    note = "equal" if margin == 0 else "within the noise floor"
    reasons = [
        reason("resolution_margin", "resolution change (cases)", float(margin), policy.resolution_margin, True,
               f"{text}: {note} ({policy.resolution_margin:g} decide on quality); rows and runtime decide"),
    ]  # fmt: skip
    rows_outcome, rows_reasons = _rows(policy, graded)
    reasons.extend(rows_reasons)
    if rows_outcome is not None:
        return rows_outcome, reasons
    outcome, efficiency = _efficiency(policy, graded)
    return outcome, [*reasons, *efficiency]
