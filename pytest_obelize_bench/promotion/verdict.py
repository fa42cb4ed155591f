"""What decides once no rule has vetoed: the margin, then rows, then runtime. Pure.

* **Told apart** means one thing everywhere (``_util/told_apart``): the exact two-sided sign
  test over cases on the per-case scores of the policy's metric, at the policy's ``alpha`` and
  ``min_n``. When every case's attempts agree, as a deterministic tool's do, and the metric is
  ``verified_success``, this is McNemar's exact test on the cases whose outcome differs. The
  decision shows the mean per-case difference with its interval.
* **Quality.** A candidate whose resolution (the sum of its per-case scores, in cases) beats the
  incumbent's by at least ``resolution_margin`` promotes only when the two are told apart;
  otherwise ``insufficient_evidence``.
* **Rows migrated**, at equal quality only, with their own noise rule: a rise of at least
  ``rows.min_margin`` rows, told apart over the cases by the same test. One more row never
  promotes. (A case that loses rows is a per-case regression, checked before.)
* **Runtime**, last: the median over gated cases of each case's improvement (its median
  runtime over attempts) must reach ``efficiency.min_median_improvement_pct``.

The minimum detectable difference is the one the whole rule set needs: the fewest cases won,
none lost, that pass the sign test, the margin and the gated share together, given the
incumbent as observed.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from pytest_obelize_bench._util.stats import MinimumDetectable, minimum_detectable
from pytest_obelize_bench._util.told_apart import Apart, told_apart
from pytest_obelize_bench.casefile.promotion_policy import Policy
from pytest_obelize_bench.promotion.case_view import PairedCase, SideFigures
from pytest_obelize_bench.promotion.reasons import Outcome, Reason, reason

__all__ = ["paired_summary", "rule_set_detectable", "verdict"]


def _apart(policy: Policy, graded: Sequence[PairedCase]) -> Apart:
    return told_apart(
        [float(c.incumbent.rate) for c in graded],
        [float(c.candidate.rate) for c in graded],
        alpha=policy.alpha,
        min_n=policy.min_n,
    )


def rule_set_detectable(policy: Policy, graded: Sequence[PairedCase]) -> MinimumDetectable:
    """The fewest cases the candidate must win outright (none lost) for every rule to decide.

    A case won goes from the incumbent's score to the top: it counts one towards the margin, and
    one towards the gated share when the incumbent did not already carry signal there.
    """
    n = len(graded)
    gated_now = sum(c.incumbent.best > c.floor for c in graded)
    room = sum(c.incumbent.rate < 1 for c in graded)
    needs = [("resolution margin", math.ceil(policy.resolution_margin))]
    needs.append(("gated share", max(0, math.ceil(policy.min_gated_share * n) - gated_now)))
    if n < policy.min_n:
        needs.append(("min_n", n + 1))
    return minimum_detectable(n, policy.alpha, policy.power, needs=needs, most=room)


def paired_summary(policy: Policy, graded: Sequence[PairedCase], inc: SideFigures, cand: SideFigures) -> dict[str, Any]:
    """The paired test over cases, its verdict at the policy's alpha and what this n can detect."""
    apart = _apart(policy, graded)
    detectable = rule_set_detectable(policy, graded)
    return {
        **apart.as_dict(),
        "metric": policy.metric,
        "attempts_per_case": sorted({c.incumbent.attempts for c in graded} | {c.candidate.attempts for c in graded}),
        "incumbent_higher": apart.first_higher,
        "candidate_higher": apart.second_higher,
        "distinguishable": apart.told_apart,
        "difference_text": apart.difference_text(),
        "minimum_detectable": detectable.as_dict(),
        "minimum_detectable_text": detectable.format(),
    }


def _told_apart(policy: Policy, apart: Apart, inc: SideFigures, cand: SideFigures) -> tuple[Outcome, list[Reason]]:
    reasons = [
        reason("min_n", "cases paired", apart.cases, policy.min_n, apart.enough,
               f"{inc.cases} and {cand.cases} graded cases; min_n is {policy.min_n} cases"),
        reason("alpha", "paired exact sign test p over cases", apart.p, policy.alpha, apart.p < policy.alpha,
               f"sign test over {apart.cases} cases on {policy.metric}: {apart.second_higher} score higher under "
               f"the candidate, {apart.first_higher} under the incumbent; p = {apart.p:.4f}, alpha is "
               f"{policy.alpha:g}; mean per-case difference {apart.difference_text()}"),
    ]  # fmt: skip
    return ("promote" if apart.told_apart else "insufficient_evidence"), reasons


def _rows(policy: Policy, graded: Sequence[PairedCase]) -> tuple[Outcome | None, list[Reason]]:
    """Rows decide only with a real rise from several cases; None when they do not decide."""
    changes = [c.rows_change for c in graded]
    if any(change is None for change in changes):
        return None, []
    total = sum(change or 0.0 for change in changes)
    if total <= 0:
        return None, []
    apart = told_apart(
        [c.incumbent.rows or 0.0 for c in graded],
        [c.candidate.rows or 0.0 for c in graded],
        alpha=policy.alpha,
        min_n=policy.min_n,
    )
    reasons = [
        reason("rows_margin", "rows migrated change (sum of per-case means)", total, policy.rows.min_margin,
               total >= policy.rows.min_margin, f"rows migrated {total:+g}; at least {policy.rows.min_margin:g}"),
        reason("rows_alpha", "sign test p over cases whose rows changed", apart.p, policy.alpha, apart.told_apart,
               f"{apart.second_higher} cases gain rows, {apart.first_higher} lose; {apart.verdict()}"),
    ]  # fmt: skip
    return ("promote" if all(r.holds for r in reasons) else None), reasons


def _efficiency(policy: Policy, graded: Sequence[PairedCase]) -> tuple[Outcome, list[Reason]]:
    gated = [c for c in graded if c.gated]
    improvements = [i for c in gated if (i := c.improvement_pct) is not None]
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
               f"median runtime improvement over {len(improvements)} of {len(gated)} gated cases (those with a "
               f"runtime on both sides) is {median:.1f}%; "
               f"at least {wanted:g}% required"),
    ]  # fmt: skip


def verdict(
    policy: Policy, graded: Sequence[PairedCase], inc: SideFigures, cand: SideFigures
) -> tuple[Outcome, list[Reason]]:
    """Quality by margin and the paired test; at equal quality rows, then runtime (see the docstring)."""
    margin = cand.resolution - inc.resolution
    wanted = Fraction(policy.resolution_margin).limit_denominator(10**6)
    text = (
        f"{policy.metric}: resolution {float(inc.resolution):.4g} -> {float(cand.resolution):.4g} cases "
        f"({float(margin):+.4g})"
    )
    if margin >= wanted:
        outcome, reasons = _told_apart(policy, _apart(policy, graded), inc, cand)
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
