"""The rules of the promotion decision as data, and the one helper that builds a reason.

Each rule has a name (what a decision document and the exit table print), the outcome it gives
when it fails, and why it exists. ``reason`` builds one checked rule: the figure it read, the
value seen, the threshold, whether it holds and a sentence for the reader. Every check of the
decision goes through it, so no reason names a rule this table does not explain.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["RULES", "Outcome", "Reason", "Rule", "reason"]

Outcome = Literal["promote", "reject", "insufficient_evidence"]


@dataclass(frozen=True)
class Rule:
    """A rule of the policy: the outcome its failure gives, and why it is a rule at all."""

    name: str
    fails_to: Outcome
    why: str


def _rules(*rows: tuple[str, Outcome, str]) -> dict[str, Rule]:
    return {name: Rule(name, outcome, why) for name, outcome, why in rows}


#: Every rule, in the order the decision checks them.
RULES: dict[str, Rule] = _rules(
    # -- the evidence is whole and comparable, or nothing is decided
    ("preregistered", "insufficient_evidence", "the policy is fixed before the runs: each run records its sha256"),
    ("run_complete", "insufficient_evidence", "partial evidence cannot promote"),
    ("run_not_interrupted", "insufficient_evidence", "an interrupted run is partial evidence"),
    ("run_unchanged", "insufficient_evidence", "a run changed since its session ended is not what it measured"),
    ("no_infrastructure_errors", "insufficient_evidence", "a machine failure measures the machine, not the tool"),
    ("same_cases", "insufficient_evidence", "paired evidence needs the same cases on both sides"),
    ("same_pins", "insufficient_evidence", "another SDK, interpreter or index date measures something else"),
    ("same_environment", "insufficient_evidence", "sandbox, harness, case keys and machine must not differ"),
    ("same_attempts", "insufficient_evidence", "a case's rate is k of m: both sides need the same m"),
    ("min_runs", "insufficient_evidence", "one attempt cannot show a flaky case"),
    ("evidence_age", "insufficient_evidence", "old evidence was made by another harness, machine or index"),
    ("holdout_included", "insufficient_evidence", "the holdout catches rules fitted to the dev cases"),
    ("clean_trees", "insufficient_evidence", "code that is not a commit cannot be named, so neither can its result"),
    ("no_rerun_tool_errors", "insufficient_evidence", "rerunning a tool error until it passes hides a measurement"),
    ("no_model", "insufficient_evidence", "a model's edits are another arm, never the rules' headline"),
    ("distinct_candidate", "insufficient_evidence", "two runs of one tool measure the harness, not a change"),
    # -- vetoes, whatever the metric and whether the case is gated
    ("no_new_wrong", "reject", "a tool that broke a repository has not partially succeeded"),
    ("no_new_tool_error", "reject", "a crash where the incumbent ran is a regression of that case"),
    ("controls_held", "reject", "a control the incumbent held must not start reporting or editing"),
    ("no_new_false_positive", "reject", "a finding where there is no call site misleads the user"),
    ("no_new_forbidden_report", "reject", "the key names positions that must never be reported"),
    ("no_new_false_positive_edit", "reject", "an edit where nothing needed one breaks working code"),
    # -- missing evidence is never read as a result
    ("reviews_answered", "insufficient_evidence", "an unreviewed patch is unknown, neither a success nor a regression"),
    ("runtimes_known", "insufficient_evidence", "an unknown runtime is not a 0% change"),
    ("scores_known", "insufficient_evidence", "a case without a score cannot be compared"),
    # -- quality, per case
    ("gated_cases", "insufficient_evidence", "a case neither version ever scores on carries no quality signal"),
    ("min_gated_share", "insufficient_evidence", "a decision needs a real share of cases that say something"),
    ("case_resolution_regression", "reject", "a case that scores lower is a regression averages hide"),
    ("quality_floor", "reject", "where the incumbent reaches a case, a user relies on it every time"),
    ("rows_case_regression", "reject", "fewer rows migrated on a case is a regression of that case"),
    ("case_runtime_regression", "reject", "a case much slower than before is a regression of its own"),
    ("ungated_runtime_regression", "reject", "a case both fail still costs time; not at a multiple of before"),
    # -- the decision
    ("resolution_margin", "insufficient_evidence", "one more case resolved is within the noise of a rerun"),
    ("min_n", "insufficient_evidence", "fewer cases than this cannot tell two sides apart"),
    ("alpha", "insufficient_evidence", "the paired exact test over cases must reject equality at the policy's alpha"),
    ("rows_margin", "reject", "a row or two more is within the noise of one case"),
    ("rows_alpha", "reject", "more rows must come from enough cases to be told apart"),
    ("efficiency", "reject", "at equal quality a candidate must be faster on the typical case"),
)


@dataclass(frozen=True)
class Reason:
    """One rule as checked: which rule, on which figure, the value seen and the threshold."""

    rule: str
    figure: str
    value: Any
    threshold: Any
    holds: bool
    text: str

    @property
    def fails_to(self) -> Outcome:
        return RULES[self.rule].fails_to


def reason(rule: str, figure: str, value: Any, threshold: Any, holds: bool, text: str) -> Reason:
    """One checked rule; ``rule`` must be one of ``RULES`` (a KeyError is a bug, not input)."""
    RULES[rule]
    return Reason(rule=rule, figure=figure, value=value, threshold=threshold, holds=bool(holds), text=text)
