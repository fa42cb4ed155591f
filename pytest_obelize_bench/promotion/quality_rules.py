"""The policy's rules over paired cases: vetoes, missing evidence, gating, per case. Pure.

* **Vetoes**, whatever the metric and whether the case is gated: a case that becomes ``wrong``
  or a tool ``error`` where the incumbent's was not, a control the incumbent held that the
  candidate breaks, a new false positive, forbidden report or false-positive edit. Each names
  the case: a tool that broke a repository has not partially succeeded.
* **Missing evidence** is never read as a result: a patch whose tier waits on a review (with the
  command that answers it), an attempt with no runtime, a case whose score cannot be computed.
* **Gating.** A case neither side scores above the metric's floor on any attempt carries no
  quality signal: it leaves the quality rules (never the runtime cap). No gated case, or fewer
  than ``min_gated_share``, is ``insufficient_evidence``.
* **Per case.** A lower score on any gated case rejects; so does the quality floor (where the
  incumbent scores above the floor, the candidate's worst attempt must reach the incumbent's
  best), a case that migrates fewer rows, and a runtime regression beyond the per-case cap
  (gated) or the ungated-case cap.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pytest_obelize_bench.casefile.promotion_policy import Policy
from pytest_obelize_bench.promotion.case_view import CaseSide, PairedCase
from pytest_obelize_bench.promotion.reasons import Reason, reason
from pytest_obelize_bench.records.evidence import RunEvidence

__all__ = ["case_rules", "gating", "missing_evidence", "vetoes"]


def _rule(rule: str, figure: str, hits: Sequence[str], limit: int, text: str) -> Reason:
    """A rule over cases: every case it names is listed, so each can be looked up."""
    return reason(rule, figure, len(hits), limit, len(hits) <= limit, text + (f": {', '.join(hits)}" if hits else ""))


def _added(pick: Callable[[CaseSide], int | None]) -> Callable[[PairedCase], str | None]:
    """The case and the counts when the candidate shows more of a fault than the incumbent did."""

    def check(case: PairedCase) -> str | None:
        before, after = pick(case.incumbent), pick(case.candidate)
        if after is None or after <= (before or 0):
            return None
        return f"{case.case} ({'--' if before is None else before} -> {after})"

    return check


def _new_fault(cases: Sequence[PairedCase], pick: Callable[[CaseSide], int]) -> list[str]:
    """Cases where the candidate shows a fault on some attempt and the incumbent on none."""
    return [
        f"{c.case} ({pick(c.incumbent)}/{c.incumbent.attempts} -> {pick(c.candidate)}/{c.candidate.attempts})"
        for c in cases
        if pick(c.candidate) > 0 and pick(c.incumbent) == 0
    ]


def vetoes(cases: Sequence[PairedCase]) -> list[Reason]:
    """Every fault the candidate adds is a veto, on any case (see the docstring)."""
    graded = [c for c in cases if not c.control]
    wrong, errors = _new_fault(graded, lambda s: s.wrong), _new_fault(graded, lambda s: s.tool_errors)
    broken = [
        c.case for c in cases if c.control and c.incumbent.control_held is True and c.candidate.control_held is False
    ]
    reasons = [
        _rule("no_new_wrong", "cases wrong under the candidate and not under the incumbent", wrong, 0,
              f"{len(wrong)} cases the candidate turns wrong (a patch that does not compile, a rejected review, "
              "a passing suite that now fails, an edit where none was needed)"),
        _rule("no_new_tool_error", "cases with a tool error under the candidate and not under the incumbent",
              errors, 0, f"{len(errors)} cases where the candidate crashes or times out"),
        _rule("controls_held", "controls the incumbent held that the candidate broke", broken, 0,
              f"{len(broken)} controls the incumbent held report or edit under the candidate"),
    ]  # fmt: skip
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


def review_commands(run: RunEvidence) -> list[str]:
    """The ``obelize-bench review`` command that answers each of a run's patches waiting on a review."""
    number = None if run.manifest is None else run.manifest.round
    where = run.path if number is None else f"round-{number}:{run.run_id}"
    return [
        f"obelize-bench review {a.case} --run {where}" + (f" --attempt {a.attempt}" if a.attempt > 1 else "")
        for a in run.attempts
        if a.review_pending
    ]


def missing_evidence(cases: Sequence[PairedCase], incumbent: RunEvidence, candidate: RunEvidence) -> list[Reason]:
    """What the decision would need and the runs do not hold; each is counted, none is guessed."""
    reasons = []
    for run in (incumbent, candidate):
        commands = review_commands(run)
        reasons.append(
            reason("reviews_answered", f"{run.label}: patches whose tier waits on a review", len(commands), 0,
                   not commands, f"{run.label}: {len(commands)} patches are unreviewed and a review would move "
                   "their tier" + (": answer each with " + "; ".join(commands) if commands else "")),
        )  # fmt: skip
    unknown = [
        f"{c.case} ({c.incumbent.runtime_unknown} and {c.candidate.runtime_unknown} attempts)"
        for c in cases
        if c.incumbent.runtime_unknown or c.candidate.runtime_unknown
    ]
    unscored = [c.case for c in cases if not c.control and not (c.incumbent.known and c.candidate.known)]
    reasons.append(
        _rule("runtimes_known", "cases with an attempt that measured no runtime (errors aside)", unknown, 0,
              f"{len(unknown)} cases have an attempt with no runtime; an unknown runtime is never a 0% change"),
    )  # fmt: skip
    reasons.append(
        _rule("scores_known", "cases whose score under the metric cannot be computed", unscored, 0,
              f"{len(unscored)} cases have no score under the metric (their key's rows are not known)"),
    )  # fmt: skip
    return reasons


def gating(policy: Policy, graded: Sequence[PairedCase]) -> list[Reason]:
    """Which cases carry quality signal under the metric, and whether enough of them do."""
    gated = [c.case for c in graded if c.gated]
    ungated = [c.case for c in graded if not c.gated]
    share = len(gated) / len(graded) if graded else 0.0
    reasons = [
        reason(
            "gated_cases",
            f"cases either side scores above the {policy.metric} floor on some attempt",
            len(gated),
            ">= 1",
            bool(gated),
            f"{len(gated)} of {len(graded)} cases are gated under {policy.metric}"
            + ("" if gated else ": no case supplied quality signal (neither side rose above the floor anywhere)")
            + (f"; not gated: {', '.join(ungated)}" if ungated else ""),
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


def _score(side: CaseSide) -> str:
    return f"{float(side.rate):.3g}" if side.known else "--"


def case_rules(policy: Policy, graded: Sequence[PairedCase]) -> list[Reason]:
    """Per-case regressions: the score, the quality floor, rows migrated and the runtime caps."""
    gated = [c for c in graded if c.gated]
    worse = [
        f"{c.case} ({_score(c.incumbent)} -> {_score(c.candidate)})"
        for c in gated
        if c.candidate.rate < c.incumbent.rate
    ]
    floor = [
        f"{c.case} (worst attempt {float(c.candidate.worst):.3g} < best {float(c.incumbent.best):.3g})"
        for c in gated
        if c.incumbent.best > c.floor and c.candidate.worst < c.incumbent.best
    ]
    fewer = [f"{c.case} ({change:+g})" for c in graded if (change := c.rows_change) is not None and change < 0]
    cap, ungated_cap = policy.efficiency.max_case_regression_pct, policy.efficiency.max_ungated_case_regression_pct

    def slower(cases: Sequence[PairedCase], limit: float) -> list[str]:
        return [f"{c.case} ({-i:.1f}% slower)" for c in cases if (i := c.improvement_pct) is not None and i < -limit]

    slow, slow_ungated = slower(gated, cap), slower([c for c in graded if not c.gated], ungated_cap)
    return [
        _rule("case_resolution_regression", f"gated cases whose {policy.metric} score dropped", worse, 0,
              f"{len(worse)} cases score lower under the candidate ({policy.metric}, mean over attempts)"),
        _rule("quality_floor", "cases where the candidate's worst attempt is below the incumbent's best", floor, 0,
              f"{len(floor)} cases the incumbent reaches are not reached on every attempt by the candidate"),
        _rule("rows_case_regression", "cases with fewer rows migrated", fewer, policy.rows.max_case_regressions,
              f"{len(fewer)} cases migrate fewer rows under the candidate"),
        _rule("case_runtime_regression", f"gated cases over {cap:g}% slower (median of attempts)",
              slow, 0, f"{len(slow)} gated cases are more than {cap:g}% slower"),
        _rule("ungated_runtime_regression", f"ungated cases over {ungated_cap:g}% slower", slow_ungated, 0,
              f"{len(slow_ungated)} cases neither side scores on are more than {ungated_cap:g}% slower"),
    ]  # fmt: skip
