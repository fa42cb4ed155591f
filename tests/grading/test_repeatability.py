"""Tier stability, pass^k and flakiness over repeated attempts (pure)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from pytest_obelize_bench.grading.graded_facts import Artefacts, PlanEdit
from pytest_obelize_bench.grading.repeatability import (
    attempt_facts,
    case_repeatability,
    round_repeatability,
)
from tests.helpers import runs


def test_pass_hat_k_by_hand_two_of_three() -> None:
    attempts = [
        runs.facts("a", "verified_success", attempt=1),
        runs.facts("a", "patched_unverified", attempt=2, baseline="fail"),
        runs.facts("a", "verified_success", attempt=3),
    ]
    case = case_repeatability(attempts)
    # C(2,1)/C(3,1) = 2/3, C(2,2)/C(3,2) = 1/3, C(2,3)/C(3,3) = 0
    assert case.pass_hat == pytest.approx((2 / 3, 1 / 3, 0.0))
    assert case.successes == 2 and case.n == 3
    assert case.stability() == "verified_success 2, patched_unverified 1"
    assert case.flaky and case.baseline_flaky
    assert case.flaky_reasons == (
        "tiers differ: verified_success / patched_unverified / verified_success",
        "baseline suite differs: pass / fail / pass",
    )


def test_a_stable_case_is_not_flaky_and_its_pass_hat_k_is_flat() -> None:
    case = case_repeatability([runs.facts("a", "verified_success", attempt=n) for n in (3, 1, 2)])
    assert [a.attempt for a in case.attempts] == [1, 2, 3]
    assert case.pass_hat == (1.0, 1.0, 1.0)
    assert not case.flaky and case.flaky_reasons == () and case.differences == ()


def test_a_baseline_that_changes_status_is_flaky_even_at_one_tier() -> None:
    case = case_repeatability(
        [
            runs.facts("a", "patched_unverified", attempt=1, baseline="fail"),
            runs.facts("a", "patched_unverified", attempt=2, baseline="inconclusive"),
        ]
    )
    assert case.flaky and case.baseline_flaky
    assert case.flaky_reasons == ("baseline suite differs: fail / inconclusive",)


def test_the_protocols_repeatability_comparison() -> None:
    case = case_repeatability(
        [
            runs.facts("a", "partial", attempt=1, touched=("a.py", "b.py"), lines=4, rows_migrated=3),
            runs.facts("a", "partial", attempt=2, touched=("a.py",), lines=3, rows_migrated=2),
        ]
    )
    assert case.differences == ("files touched: 2 / 1", "lines changed: 4 / 3", "rows migrated: 3 / 2")
    same_count = case_repeatability(
        [
            runs.facts("a", "partial", attempt=1, touched=("a.py",)),
            runs.facts("a", "partial", attempt=2, touched=("b.py",)),
        ]
    )
    assert same_count.differences == ("files touched: same count, different files",)
    unknown = case_repeatability(
        [runs.facts("a", "partial", attempt=1), runs.facts("a", "partial", attempt=2, touched=None)]
    )
    assert unknown.differences == ()


def test_bad_groupings_are_refused() -> None:
    with pytest.raises(ValueError, match="at least one"):
        case_repeatability([])
    with pytest.raises(ValueError, match="several cases"):
        case_repeatability([runs.facts("a", "partial"), runs.facts("b", "partial")])
    with pytest.raises(ValueError, match="repeat"):
        case_repeatability([runs.facts("a", "partial"), runs.facts("a", "partial")])


def test_round_pass_hat_k_is_the_mean_over_graded_cases_with_enough_attempts() -> None:
    attempts = [
        # a: 2 of 3; b: 3 of 3; c: 1 of 2 (no pass^3); a control never counts
        *(runs.facts("a", t, attempt=i) for i, t in enumerate(["verified_success", "partial", "verified_success"], 1)),
        *(runs.facts("b", "verified_success", attempt=i) for i in (1, 2, 3)),
        *(runs.facts("c", t, attempt=i) for i, t in enumerate(["verified_success", "partial"], 1)),
        *(runs.facts("z", "unsupported", attempt=i, control=True) for i in (1, 2, 3)),
    ]
    summary = round_repeatability(attempts)
    assert summary.repeated and summary.most_attempts == 3 and summary.graded_cases == 3
    k1 = (Fraction(2, 3) + 1 + Fraction(1, 2)) / 3
    k2 = (Fraction(1, 3) + 1 + 0) / 3
    k3 = (Fraction(0) + 1) / 2
    assert summary.pass_hat == pytest.approx((float(k1), float(k2), float(k3)))
    assert [c.case for c in summary.flaky] == ["a", "c"]
    assert summary.as_dict()["pass_hat_k"]["3"] == pytest.approx(0.5)


def test_one_attempt_each_is_not_a_repeated_round() -> None:
    assert not round_repeatability([runs.facts("a", "partial"), runs.facts("b", "partial")]).repeated
    assert round_repeatability([]).pass_hat == ()


def test_attempt_facts_from_a_record_and_its_graded_facts() -> None:
    record = runs.record("a", "partial", attempt=2, unmigrated=1)
    artefacts = Artefacts(
        findings=(),
        edits=(
            PlanEdit("app.py", 1, "auto", None, None),
            PlanEdit("app.py", 1, "auto", None, None),
            PlanEdit("app.py", 4, "auto", None, None),
            PlanEdit("other.py", 2, "auto", None, None),
        ),
        written=("app.py",),
        withheld=(),
        exit_code=0,
        model_used=False,
        llm_tokens_in=None,
        llm_tokens_out=None,
        llm_cost_usd=None,
    )
    facts = attempt_facts(record, rows_total=3, artefacts=artefacts)
    assert facts.attempt == 2 and facts.rows_migrated == 2
    assert facts.files_touched == ("app.py",) and facts.lines_changed == 2
    assert ("sdk_from", "0.8.6") in facts.pins
    errored = attempt_facts(runs.record("a", "error", error=("fix", "obelize_failed")), rows_total=3, artefacts=None)
    assert errored.rows_migrated == 0 and errored.files_touched is None and errored.error_reason == "obelize_failed"
    assert attempt_facts(record, rows_total=None, artefacts=None).rows_migrated is None
    old = runs.record("a", attempt=None)
    assert attempt_facts(old, rows_total=1, artefacts=None).attempt == 1


def test_the_stats_helpers_the_repeats_use() -> None:
    from pytest_obelize_bench._util.stats import (
        intervals_overlap,
        pass_hat_k,
        pass_hat_k_series,
    )

    assert pass_hat_k_series(2, 3, 4) == (pass_hat_k(2, 3, 1), pass_hat_k(2, 3, 2), pass_hat_k(2, 3, 3), None)
    assert intervals_overlap((0.1, 0.3), (0.3, 0.5))  # touching bands are not told apart
    assert not intervals_overlap((0.1, 0.29), (0.3, 0.5))
    assert intervals_overlap((0.3, 0.5), (0.1, 0.9))
