"""Each rule of the promotion decision pinned with synthetic runs (pure: no disk, no clock)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pytest_obelize_bench._util.stats import mcnemar_exact, wilson_interval
from pytest_obelize_bench.grading.error_classes import error_class
from pytest_obelize_bench.promotion.decision import (
    Decision,
    Policy,
    PolicyError,
    decide,
    load_policy,
    pareto_front,
    policy_changed,
)
from tests.helpers import runs

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
ROOT = Path(__file__).resolve().parents[2]


def failed(decision: object) -> list[str]:
    return [r.rule for r in decision.failed]  # type: ignore[attr-defined]


def reason(decision: Decision, rule: str) -> str:
    """The text of the rule's failed check if one failed, else of its first check."""
    checks = [r for r in decision.reasons if r.rule == rule]
    return next((r.text for r in checks if not r.holds), checks[0].text)


def test_better_and_distinguishable_promotes() -> None:
    incumbent = runs.run_with("old", {0, 1})
    candidate = runs.run_with("new", set(range(18)))
    decision = decide(Policy(), incumbent, candidate, now=NOW)
    assert decision.outcome == "promote", [r.text for r in decision.failed]
    assert failed(decision) == []
    # the figures the reasons name are the ones computed by hand
    assert decision.paired["incumbent_only"] == 0 and decision.paired["candidate_only"] == 16
    assert decision.paired["mcnemar_p"] == mcnemar_exact(0, 16)
    assert decision.candidate_figures.rate.k == 18 and decision.candidate_figures.rate.n == 20
    low, high = wilson_interval(18, 20)  # type: ignore[misc]
    assert decision.candidate_figures.rate.low == low and decision.candidate_figures.rate.high == high
    assert "are apart" in reason(decision, "intervals_apart")


def test_better_but_overlapping_is_insufficient_evidence() -> None:
    incumbent = runs.run_with("old", set(range(8)))
    candidate = runs.run_with("new", set(range(12)))
    decision = decide(Policy(), incumbent, candidate, now=NOW)
    assert decision.outcome == "insufficient_evidence"
    assert "intervals_apart" in failed(decision)
    assert "overlap" in reason(decision, "intervals_apart")
    # McNemar on 4 discordant pairs, all one way: p = 2 * (1/16) = 0.125 >= 0.05
    assert decision.paired["mcnemar_p"] == pytest.approx(0.125)
    assert "alpha" in failed(decision)


def test_better_overall_with_one_verified_case_lost_is_rejected() -> None:
    incumbent = runs.run_with("old", {0, 1})
    candidate = runs.run_with("new", set(range(19)) - {1})
    decision = decide(Policy(), incumbent, candidate, now=NOW)
    assert decision.candidate_figures.rate.k > decision.incumbent_figures.rate.k
    assert decision.outcome == "reject"
    assert failed(decision) == ["max_case_regressions.verified"]
    text = reason(decision, "max_case_regressions.verified")
    assert "owner01__repo" in text and "at most 0" in text


def test_a_looser_verified_limit_lets_that_candidate_through() -> None:
    incumbent = runs.run_with("old", {0, 1})
    candidate = runs.run_with("new", set(range(19)) - {1})
    policy = Policy.model_validate({"max_case_regressions": {"verified": 1}})
    assert decide(policy, incumbent, candidate, now=NOW).outcome == "promote"


def test_other_regressions_count_only_with_a_limit() -> None:
    incumbent = runs.run_with("old", {0, 1})
    attempts = list(runs.run_with("new", set(range(18))).attempts)
    attempts[19] = replace(attempts[19], tier="wrong")  # partial -> wrong on a case the incumbent did not verify
    candidate = runs.run("new", attempts)
    assert decide(Policy(), incumbent, candidate, now=NOW).outcome == "promote"
    strict = Policy.model_validate({"max_case_regressions": {"other": 0}})
    decision = decide(strict, incumbent, candidate, now=NOW)
    assert decision.outcome == "reject" and failed(decision) == ["max_case_regressions.other"]


def test_a_partial_run_is_insufficient_evidence() -> None:
    incumbent = runs.run_with("old", {0, 1})
    full = runs.run_with("new", set(range(18)))
    partial = runs.run("new", [a for a in full.attempts if a.case != "owner05__repo"], cases_expected=runs.case_ids())
    decision = decide(Policy(), incumbent, partial, now=NOW)
    assert decision.outcome == "insufficient_evidence"
    assert "run_complete" in failed(decision)
    assert "19 of 20 expected cases have a record" in reason(decision, "run_complete")


@pytest.mark.parametrize(
    ("overrides", "rule"),
    [
        ({"interrupted": True}, "run_not_interrupted"),
        ({"interrupted": None}, "run_not_interrupted"),
        ({"complete": False}, "run_complete"),
        ({"ended_at": "2026-09-01T00:00:00Z"}, "evidence_age"),
        ({"exclude_newer": "2026-10-01T00:00:00Z"}, "same_pins"),
        ({"interpreter_policy": "exact"}, "same_pins"),
    ],
)
def test_evidence_that_cannot_decide(overrides: dict[str, Any], rule: str) -> None:
    incumbent = runs.run_with("old", {0, 1})
    candidate = runs.run_with("new", set(range(18)), **overrides)
    decision = decide(Policy(), incumbent, candidate, now=NOW)
    assert decision.outcome == "insufficient_evidence"
    assert rule in failed(decision)


def test_a_run_without_a_manifest_never_promotes() -> None:
    candidate = replace(runs.run_with("new", set(range(18))), manifest=None)
    decision = decide(Policy(), runs.run_with("old", {0}), candidate, now=NOW)
    assert decision.outcome == "insufficient_evidence"
    assert "no run.json" in reason(decision, "run_complete")


def test_infrastructure_errors_make_evidence_insufficient_but_tool_errors_stay_in_n() -> None:
    incumbent = runs.run_with("old", {0, 1})
    attempts = list(runs.run_with("new", set(range(18))).attempts)
    attempts[19] = replace(attempts[19], tier="error", error_reason="install_failed")
    decision = decide(Policy(), incumbent, runs.run("new", attempts), now=NOW)
    assert decision.outcome == "insufficient_evidence"
    assert "no_infrastructure_errors" in failed(decision)

    attempts[19] = replace(attempts[19], tier="error", error_reason="obelize_failed")
    decision = decide(Policy(), incumbent, runs.run("new", attempts), now=NOW)
    assert decision.outcome == "promote"
    assert decision.candidate_figures.rate.n == 20  # the errored attempt is still in the denominator


def test_differing_case_sets_are_insufficient() -> None:
    incumbent = runs.run_with("old", {0, 1}, n=21)
    candidate = runs.run_with("new", set(range(18)))
    decision = decide(Policy(), incumbent, candidate, now=NOW)
    assert decision.outcome == "insufficient_evidence"
    assert "owner20__repo" in reason(decision, "same_cases")


def test_a_pinned_sdk_that_differs_on_one_case_is_insufficient() -> None:
    attempts = list(runs.run_with("new", set(range(18))).attempts)
    attempts[3] = replace(attempts[3], pins=(("sdk_from", "0.8.5"),))
    decision = decide(Policy(), runs.run_with("old", {0, 1}), runs.run("new", attempts), now=NOW)
    assert decision.outcome == "insufficient_evidence"
    assert "owner03__repo: sdk_from" in reason(decision, "same_pins")


def test_fewer_attempts_than_min_runs_is_insufficient_and_enough_repeats_decide() -> None:
    policy = Policy.model_validate({"min_runs": 3})
    decision = decide(policy, runs.run_with("old", {0, 1}), runs.run_with("new", set(range(18))), now=NOW)
    assert decision.outcome == "insufficient_evidence"
    assert "the fewest attempts of a case is 1, min_runs is 3" in reason(decision, "min_runs")
    decision = decide(policy, runs.run_with("old", {0, 1}, k=3), runs.run_with("new", set(range(18)), k=3), now=NOW)
    assert decision.outcome == "promote"
    assert decision.candidate_figures.rate.n == 60 and decision.paired["pairs"] == 60


def test_a_flaky_candidate_on_a_verified_case_has_regressed() -> None:
    attempts = list(runs.run_with("new", set(range(18)), k=3).attempts)
    index = next(i for i, a in enumerate(attempts) if a.case == "owner00__repo" and a.attempt == 2)
    attempts[index] = replace(attempts[index], tier="patched_unverified")
    policy = Policy.model_validate({"min_runs": 3})
    decision = decide(policy, runs.run_with("old", {0, 1}, k=3), runs.run("new", attempts), now=NOW)
    assert decision.outcome == "reject"
    assert "owner00__repo" in reason(decision, "max_case_regressions.verified")


def test_the_holdout_must_be_included_when_the_policy_says_so() -> None:
    incumbent = runs.run("old", [runs.facts(c, "partial") for c in runs.case_ids()])
    candidate = runs.run("new", [runs.facts(c, "verified_success") for c in runs.case_ids()])
    decision = decide(Policy(), incumbent, candidate, now=NOW)
    assert decision.outcome == "insufficient_evidence"
    assert failed(decision) == ["holdout_included", "holdout_included"]
    relaxed = Policy.model_validate({"require_holdout": False})
    assert decide(relaxed, incumbent, candidate, now=NOW).outcome == "promote"


def test_an_improvement_below_the_minimum_is_rejected() -> None:
    policy = Policy.model_validate({"min_improvement": {"rate_points": 0.10}})
    decision = decide(policy, runs.run_with("old", {0, 1}), runs.run_with("new", {0, 1, 2}), now=NOW)
    assert decision.outcome == "reject"
    assert failed(decision) == ["min_improvement.rate_points"]
    assert "+5.0 points" in reason(decision, "min_improvement.rate_points")


def test_cheaper_but_worse_is_rejected_quality_before_cost() -> None:
    incumbent = runs.run_with("old", {0, 1, 2})
    cheap = [replace(a, runtime_seconds=1.0) for a in runs.run_with("new", {0, 1, 2}).attempts]
    cheap = [replace(a, tier="partial") if a.case == "owner02__repo" else a for a in cheap]
    policy = Policy.model_validate({"max_case_regressions": {"verified": 5}})
    decision = decide(policy, incumbent, runs.run("new", cheap), now=NOW)
    assert decision.outcome == "reject"
    assert failed(decision) == ["metric"]


def test_equal_quality_lets_cost_decide() -> None:
    incumbent = runs.run_with("old", {0, 1, 2})
    cheap = runs.run("new", [replace(a, runtime_seconds=5.0) for a in runs.run_with("new", {0, 1, 2}).attempts])
    decision = decide(Policy(), incumbent, cheap, now=NOW)
    assert decision.outcome == "promote"
    assert "50.0% saved" in reason(decision, "min_improvement.cost_share")
    same = runs.run("new", [replace(a, runtime_seconds=9.5) for a in runs.run_with("new", {0, 1, 2}).attempts])
    decision = decide(Policy(), incumbent, same, now=NOW)
    assert decision.outcome == "reject" and failed(decision) == ["min_improvement.cost_share"]


def test_rows_migrated_decide_at_an_equal_rate() -> None:
    incumbent = runs.run_with("old", {0, 1, 2})
    more = [
        replace(a, rows_migrated=3) if a.case == "owner10__repo" else a
        for a in runs.run_with("new", {0, 1, 2}).attempts
    ]
    decision = decide(Policy(), incumbent, runs.run("new", more), now=NOW)
    assert decision.outcome == "promote"
    assert "rows migrated 40 -> 41 (+1)" in reason(decision, "min_improvement.rows")
    fewer = [
        replace(a, rows_migrated=1) if a.case == "owner10__repo" else a
        for a in runs.run_with("new", {0, 1, 2}).attempts
    ]
    assert decide(Policy(), incumbent, runs.run("new", fewer), now=NOW).outcome == "reject"


def test_every_reason_names_its_figure_and_threshold() -> None:
    decision = decide(Policy(), runs.run_with("old", {0, 1}), runs.run_with("new", set(range(18))), now=NOW)
    for each in decision.reasons:
        assert each.figure and each.threshold is not None and each.text
    data = decision.as_dict()
    assert data["decision"] == "promote" and data["failed_rules"] == []
    assert {r["rule"] for r in data["reasons"]} >= {"run_complete", "same_cases", "min_runs", "evidence_age", "alpha"}


def test_pareto_front_over_rate_rows_and_cost() -> None:
    incumbent = runs.run_with("old", {0, 1})
    best = runs.run_with("best", set(range(18)))
    fast = runs.run("fast", [replace(a, runtime_seconds=1.0) for a in runs.run_with("fast", {0, 1}).attempts])
    dominated = runs.run_with("dominated", {0})
    figures = [decide(Policy(), incumbent, c, now=NOW).candidate_figures for c in (best, fast, dominated)]
    front = pareto_front([decide(Policy(), incumbent, incumbent, now=NOW).incumbent_figures, *figures])
    assert front == ["best", "fast"]


def test_policy_changed_after_a_recorded_decision_is_refused() -> None:
    prior = [{"incumbent": {"run_id": "old"}, "candidate": {"run_id": "new"}, "policy_sha256": "a" * 64}]
    message = policy_changed(prior, "b" * 64, "old", "new")
    assert message is not None and "policy changed" in message
    assert policy_changed(prior, "a" * 64, "old", "new") is None
    assert policy_changed(prior, "b" * 64, "old", "other") is None
    # a planted document of another shape neither crashes nor refuses
    assert policy_changed([{"incumbent": "old", "candidate": ["new"]}], "b" * 64, "old", "new") is None


def test_policy_file_sha_and_errors() -> None:
    data = b"min_runs: 2\nalpha: 0.01\n"
    policy, sha = load_policy(data, "p.yaml")
    assert policy.min_runs == 2 and policy.alpha == 0.01
    import hashlib

    assert sha == hashlib.sha256(data).hexdigest()
    with pytest.raises(PolicyError, match=r"p.yaml: field min_improvment: is not a policy field"):
        load_policy(b"min_improvment: 1\n", "p.yaml")
    with pytest.raises(PolicyError, match=r"p.yaml: field alpha"):
        load_policy(b"alpha: 2\n", "p.yaml")
    with pytest.raises(PolicyError, match="expected a mapping"):
        load_policy(b"- 1\n", "p.yaml")
    with pytest.raises(PolicyError, match="not UTF-8"):
        load_policy(b"\xff\xfe", "p.yaml")


def test_the_shipped_policy_loads() -> None:
    path = ROOT / "cases" / "promotion.yaml"
    policy, sha = load_policy(path.read_bytes(), str(path))
    assert policy.metric == "verified_success" and len(sha) == 64
    assert policy.max_case_regressions.verified == 0


def test_a_timeout_while_installing_is_infrastructure_one_in_the_suite_is_not() -> None:
    incumbent = runs.run_with("old", {0, 1})
    attempts = list(runs.run_with("new", set(range(18))).attempts)
    attempts[19] = replace(attempts[19], tier="error", error_reason="timeout", error_step="install-from")
    assert "no_infrastructure_errors" in failed(decide(Policy(), incumbent, runs.run("new", attempts), now=NOW))
    attempts[19] = replace(attempts[19], error_step="after")
    assert decide(Policy(), incumbent, runs.run("new", attempts), now=NOW).outcome == "promote"


@pytest.mark.parametrize(
    ("reason", "step", "infrastructure"),
    [
        ("network_failed", "after", True),
        ("timeout", "baseline", True),
        ("suite_crashed", "baseline", True),
        ("suite_crashed", "after", False),
        ("run_folder_too_large", "fix", False),
    ],
)
def test_the_gate_classes_errors_as_the_round_does(reason: str, step: str, infrastructure: bool) -> None:
    """One rule decides whose failure an error is, for the document, publication and the gate."""
    assert (error_class(reason, step) == "infrastructure") is infrastructure
    incumbent = runs.run_with("old", {0, 1})
    attempts = list(runs.run_with("new", set(range(18))).attempts)
    attempts[19] = replace(attempts[19], tier="error", error_reason=reason, error_step=step)
    refused = "no_infrastructure_errors" in failed(decide(Policy(), incumbent, runs.run("new", attempts), now=NOW))
    assert refused is infrastructure


def test_a_record_run_json_does_not_list_is_insufficient() -> None:
    candidate = runs.run_with("new", set(range(18)), cases_recorded=runs.case_ids()[:19])
    decision = decide(Policy(), runs.run_with("old", {0, 1}), candidate, now=NOW)
    assert decision.outcome == "insufficient_evidence"
    assert "disagree on owner19__repo" in reason(decision, "run_complete")
