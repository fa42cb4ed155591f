"""The pure parts of the promotion decision: the paired test, cases as the unit, the rules table."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_obelize_bench._util.stats import mcnemar_exact, minimum_detectable
from pytest_obelize_bench.casefile.promotion_policy import Policy, PolicyError, load_policy
from pytest_obelize_bench.promotion.case_view import pair_cases, side_figures
from pytest_obelize_bench.promotion.decision import decide, pareto_front, policy_changed, registration
from pytest_obelize_bench.promotion.reasons import RULES, reason
from tests.helpers import runs
from tests.helpers.project import PROJECT

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
TIERS = ("verified_success", "partial")


@given(st.integers(0, 60), st.integers(1, 30))
def test_more_cases_one_way_never_raise_p(b: int, c: int) -> None:
    assert mcnemar_exact(b, c + 1) <= mcnemar_exact(b, c) or b > c


@given(st.integers(1, 80), st.sampled_from([0.01, 0.05, 0.1]), st.sampled_from([0.5, 0.8, 0.9]))
def test_the_minimum_detectable_difference_is_the_smallest_that_reaches_alpha_and_power(
    n: int, alpha: float, power: float
) -> None:
    found = minimum_detectable(n, alpha, power)
    if found.discordant_needed is None:
        assert found.cases is None and mcnemar_exact(0, n) >= alpha
        return
    d = found.discordant_needed
    assert mcnemar_exact(0, d) < alpha and (d == 1 or mcnemar_exact(0, d - 1) >= alpha)
    assert found.cases is not None and d <= found.cases <= n

    def power_at(cases: int) -> float:  # P(at least d of n cases won) when each is won with cases / n
        share = cases / n
        return sum(math.comb(n, i) * share**i * (1 - share) ** (n - i) for i in range(d, n + 1))

    assert power_at(found.cases) >= power
    assert found.cases == d or power_at(found.cases - 1) < power


def test_twenty_cases_at_the_shipped_alpha_and_power() -> None:
    found = minimum_detectable(20, 0.05, 0.8)
    assert (found.discordant_needed, found.cases) == (6, 8)
    assert found.format().startswith("8 more of 20 cases (40.0%)")


outcomes = st.lists(st.lists(st.sampled_from(TIERS), min_size=2, max_size=2), min_size=1, max_size=12)


@given(outcomes)
def test_a_candidate_identical_to_the_incumbent_never_promotes(tiers: list[list[str]]) -> None:
    attempts = [
        runs.facts(f"c{i:02d}", tier, attempt=a, split="holdout" if i == 0 else "dev")
        for i, row in enumerate(tiers)
        for a, tier in enumerate(row, start=1)
    ]
    decision = decide(Policy(), runs.run("old", attempts), runs.run("new", attempts), now=NOW)
    assert decision.outcome != "promote"
    assert decision.paired["incumbent_higher"] == decision.paired["candidate_higher"] == 0


@given(outcomes, outcomes, st.integers(2, 4))
def test_repeating_every_attempt_changes_no_case_count(a: list[list[str]], b: list[list[str]], times: int) -> None:
    size = min(len(a), len(b))

    def attempts(rows: list[list[str]], repeat: int) -> list[object]:
        return [
            runs.facts(f"c{i:02d}", tier, attempt=k * len(row) + j + 1)
            for i, row in enumerate(rows[:size])
            for k in range(repeat)
            for j, tier in enumerate(row)
        ]

    once = pair_cases(attempts(a, 1), attempts(b, 1))  # type: ignore[arg-type]
    many = pair_cases(attempts(a, times), attempts(b, times))  # type: ignore[arg-type]
    assert [c.candidate.rate for c in once] == [c.candidate.rate for c in many]
    figures_once = side_figures("x", [c.candidate for c in once])
    figures_many = side_figures("x", [c.candidate for c in many])
    assert figures_once.cases == figures_many.cases == size
    assert figures_many.attempts == times * figures_once.attempts
    assert figures_once.cases_resolved == figures_many.cases_resolved


def test_a_flaky_case_counts_once_with_its_rate() -> None:
    attempts = [runs.facts("a", "verified_success", attempt=1), runs.facts("a", "partial", attempt=2)]
    (case,) = pair_cases(attempts, attempts)
    assert case.incumbent.resolved == 1 and case.incumbent.attempts == 2 and not case.incumbent.every_attempt
    figures = side_figures("x", [case.incumbent])
    assert (figures.cases, figures.attempts, figures.cases_resolved.k, float(figures.resolution)) == (1, 2, 0, 0.5)


def test_every_reason_a_decision_gives_is_a_rule_with_its_why() -> None:
    incumbent = runs.run_with("old", set(range(10)), k=2)
    candidate = runs.run_with("new", set(range(20)), k=2, tool={"version": "0.9.0"})
    decision = decide(Policy(), incumbent, candidate, now=NOW)
    assert decision.outcome == "promote", [r.text for r in decision.reasons if not r.holds]
    assert all(r.rule in RULES and RULES[r.rule].why for r in decision.reasons)
    with pytest.raises(KeyError):
        reason("made_up", "x", 1, 0, True, "x")


def test_registration_refuses_another_policy_and_marks_a_missing_one() -> None:
    registered = runs.run_with("old", {0}, promotion_policy_sha256="a" * 64)
    silent = runs.run_with("new", {0})
    reasons, refusal = registration("a" * 64, (registered, silent))
    assert refusal is None and [r.holds for r in reasons] == [True, False]
    _, refusal = registration("b" * 64, (registered, silent))
    assert refusal is not None and "changed after run old started" in refusal


def test_pareto_front_over_resolution_rows_and_runtime() -> None:
    def figures(label: str, verified: set[int], runtime: float) -> object:
        run = runs.run_with(label, verified)
        run = replace(run, attempts=tuple(replace(a, runtime_seconds=runtime) for a in run.attempts))
        return side_figures(label, [c.candidate for c in pair_cases(run.attempts, run.attempts)])

    front = pareto_front([figures("a", {0, 1}, 5.0), figures("b", {0}, 9.0), figures("c", {0}, 4.0)])  # type: ignore[list-item]
    assert front == ["a", "c"]


def test_policy_changed_after_a_recorded_decision_is_refused() -> None:
    prior = [{"incumbent": {"run_id": "old"}, "candidate": {"run_id": "new"}, "policy_sha256": "a" * 64}]
    assert policy_changed(prior, "a" * 64, "old", "new") is None
    assert policy_changed(prior, "b" * 64, "old", "new") is not None
    assert policy_changed(prior, "b" * 64, "old", "other") is None


def test_the_shipped_policy_loads_and_says_why_for_every_threshold() -> None:
    data = (PROJECT / "cases" / "promotion.yaml").read_bytes()
    policy, sha = load_policy(data, "cases/promotion.yaml")
    assert len(sha) == 64
    assert policy.min_gated_share == 0.5 and policy.resolution_margin == 2 and policy.min_n == 20
    assert policy.efficiency.min_median_improvement_pct == 5.0
    assert policy.efficiency.max_case_regression_pct == 20.0
    assert policy.efficiency.max_ungated_case_regression_pct == 100.0
    text = data.decode()
    for field in ("min_runs", "min_n", "alpha", "resolution_margin", "min_gated_share", "min_margin"):
        before = text.split(f"{field}:")[0].rstrip().splitlines()[-1].strip()
        assert before.startswith("#"), f"{field} has no comment above it"


def test_a_bad_policy_is_one_line_naming_the_field() -> None:
    with pytest.raises(PolicyError, match="field min_gated_share"):
        load_policy(b"min_gated_share: 2\n", "p.yaml")
    with pytest.raises(PolicyError, match="field max_case_regressions: is not a known field"):
        load_policy(b"max_case_regressions: {}\n", "p.yaml")
    with pytest.raises(PolicyError, match=r"p\.yaml: is not valid YAML \(line 2\): duplicate key 'alpha'"):
        load_policy(b"alpha: 0.05\nalpha: 0.5\n", "p.yaml")


def test_a_crash_that_never_installed_the_new_sdk_pins_nothing_and_its_veto_stands() -> None:
    """An errored attempt has no ``sdk_to``: not a different pin (which would hide the veto behind
    insufficient evidence), but a tool error the veto names."""
    no_sdk = tuple((name, None if name == "sdk_to" else value) for name, value in runs.PINS)
    cases = [f"c{i:02d}__repo" for i in range(20)]
    split = {case: "holdout" if i % 3 == 0 else "dev" for i, case in enumerate(cases)}
    incumbent = runs.run("old", [runs.facts(case, "partial", split=split[case]) for case in cases])
    crashed = [runs.facts(case, "error", split=split[case], error_reason="obelize_failed", pins=no_sdk,
                          rows_migrated=None) for case in cases]  # fmt: skip
    decision = decide(Policy(), incumbent, runs.run("new", crashed, tool={"version": "0.9.0"}), now=NOW)
    failed = {r.rule for r in decision.failed}
    assert "same_pins" not in failed and "no_new_tool_error" in failed and decision.outcome == "reject"
