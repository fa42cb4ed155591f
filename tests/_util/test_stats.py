"""stats.py against published values (anchors.md section 5.1) and scipy as the reference."""

from __future__ import annotations

import math
from typing import Any

import pytest

from pytest_obelize_bench._util.stats import (
    Rate,
    fisher_exact_two_sided,
    mcnemar_exact,
    mean_pass_hat_k,
    pass_hat_k,
    rate_of,
    wilson_interval,
)


def scipy_stats() -> Any:
    """scipy.stats, imported by the tests that compare with it: 1.6 s that every worker paid at collection."""
    from scipy import stats  # type: ignore[import-untyped]  # scipy ships no type information

    return stats


# anchors.md section 5.1, "Worked values at obelize's sizes", to three decimals.
WILSON_TABLE = [
    (0, 20, 0.000, 0.161),
    (1, 20, 0.009, 0.236),
    (5, 20, 0.112, 0.469),
    (10, 20, 0.299, 0.701),
    (15, 20, 0.531, 0.888),
    (20, 20, 0.839, 1.000),
    (2, 4, 0.150, 0.850),
    (4, 4, 0.510, 1.000),
    (0, 3, 0.000, 0.561),
]


@pytest.mark.parametrize(("k", "n", "low", "high"), WILSON_TABLE)
def test_wilson_matches_the_published_table(k: int, n: int, low: float, high: float) -> None:
    interval = wilson_interval(k, n)
    assert interval is not None
    assert round(interval[0], 3) == pytest.approx(low, abs=1e-9)
    assert round(interval[1], 3) == pytest.approx(high, abs=1e-9)


@pytest.mark.parametrize(("k", "n"), [(k, n) for n in (1, 3, 7, 13, 20, 41) for k in range(n + 1)])
def test_wilson_matches_scipy(k: int, n: int) -> None:
    want = scipy_stats().binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    got = wilson_interval(k, n)
    assert got is not None
    assert got[0] == pytest.approx(want.low, abs=1e-12)
    assert got[1] == pytest.approx(want.high, abs=1e-12)


def test_wilson_ends_are_exact_and_inside_the_unit_interval() -> None:
    assert wilson_interval(0, 20)[0] == 0.0  # type: ignore[index]
    assert wilson_interval(20, 20)[1] == 1.0  # type: ignore[index]
    for n in range(1, 60):
        for k in range(n + 1):
            low, high = wilson_interval(k, n)  # type: ignore[misc]
            assert 0.0 <= low <= k / n <= high <= 1.0


def test_wilson_has_no_interval_without_data() -> None:
    assert wilson_interval(0, 0) is None


@pytest.mark.parametrize(("k", "n"), [(-1, 3), (4, 3), (0, -1)])
def test_wilson_refuses_impossible_counts(k: int, n: int) -> None:
    with pytest.raises(ValueError):
        wilson_interval(k, n)


def test_fisher_published_value() -> None:
    # 8/20 vs 14/20, unpaired: p ~= 0.11 (anchors.md 5.1).
    p = fisher_exact_two_sided(8, 12, 14, 6)
    assert round(p, 2) == 0.11


@pytest.mark.parametrize(
    "table",
    [
        (8, 12, 14, 6),
        (0, 20, 0, 20),
        (20, 0, 0, 20),
        (1, 19, 5, 15),
        (3, 1, 1, 3),
        (0, 0, 0, 0),
        (0, 5, 0, 0),
        (7, 2, 1, 9),
        (10, 10, 10, 10),
        (2, 7, 8, 2),
        (0, 13, 4, 3),
        (100, 250, 140, 200),
    ],
)
def test_fisher_matches_scipy(table: tuple[int, int, int, int]) -> None:
    a, b, c, d = table
    want = scipy_stats().fisher_exact([[a, b], [c, d]], alternative="two-sided").pvalue
    if math.isnan(want):
        want = 1.0
    assert fisher_exact_two_sided(a, b, c, d) == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_fisher_refuses_negative_cells() -> None:
    with pytest.raises(ValueError):
        fisher_exact_two_sided(1, -1, 0, 0)


def test_mcnemar_published_values() -> None:
    assert mcnemar_exact(5, 0) == pytest.approx(0.0625)
    assert mcnemar_exact(0, 5) == pytest.approx(0.0625)
    assert mcnemar_exact(6, 1) == pytest.approx(0.125)


def test_mcnemar_without_discordant_pairs_is_one() -> None:
    assert mcnemar_exact(0, 0) == 1.0


@pytest.mark.parametrize(("b", "c"), [(b, c) for b in range(0, 13) for c in range(0, 13) if b + c])
def test_mcnemar_matches_the_scipy_binomial_test(b: int, c: int) -> None:
    want = scipy_stats().binomtest(min(b, c), b + c, 0.5, alternative="two-sided").pvalue
    assert mcnemar_exact(b, c) == pytest.approx(want, rel=1e-12)


def test_mcnemar_cannot_reach_five_percent_with_five_discordant_cases() -> None:
    assert min(mcnemar_exact(b, 5 - b) for b in range(6)) > 0.05


def test_pass_hat_k_definition() -> None:
    assert pass_hat_k(3, 4, 1) == pytest.approx(0.75)
    assert pass_hat_k(3, 4, 2) == pytest.approx(3 / 6)
    assert pass_hat_k(3, 4, 4) == 0.0
    assert pass_hat_k(4, 4, 4) == 1.0
    assert pass_hat_k(0, 5, 1) == 0.0
    assert pass_hat_k(1, 1, 2) is None


def test_pass_hat_k_refuses_bad_input() -> None:
    with pytest.raises(ValueError):
        pass_hat_k(1, 2, 0)
    with pytest.raises(ValueError):
        pass_hat_k(3, 2, 1)


def test_pass_hat_1_is_the_mean_success_rate() -> None:
    counts = [(3, 4), (0, 4), (4, 4), (1, 4)]
    assert mean_pass_hat_k(counts, 1) == pytest.approx(sum(c for c, _ in counts) / 16)


def test_mean_pass_hat_k_follows_tau_bench() -> None:
    # tau-bench: the mean over tasks of comb(c, k) / comb(num_trials, k).
    counts = [(3, 4), (0, 4), (4, 4), (2, 4)]
    for k in range(1, 5):
        want = sum(math.comb(c, k) / math.comb(4, k) for c, _ in counts) / len(counts)
        assert mean_pass_hat_k(counts, k) == pytest.approx(want)


def test_mean_pass_hat_k_leaves_out_cases_with_too_few_runs() -> None:
    assert mean_pass_hat_k([(2, 2), (1, 4)], 3) == pytest.approx(0.0)
    assert mean_pass_hat_k([(2, 2)], 3) is None
    assert mean_pass_hat_k([], 1) is None


def test_a_deterministic_tool_has_flat_pass_hat_k() -> None:
    counts = [(5, 5), (0, 5), (5, 5)]
    assert {round(mean_pass_hat_k(counts, k), 12) for k in range(1, 6)} == {round(2 / 3, 12)}  # type: ignore[arg-type]


def test_rate_formats_with_its_interval() -> None:
    assert rate_of(5, 20).format() == "25.0% [11.2%, 46.9%]"
    assert rate_of(0, 20).format() == "0.0% [0.0%, 16.1%]"
    assert rate_of(20, 20).format() == "100.0% [83.9%, 100.0%]"


def test_rate_without_data() -> None:
    rate = rate_of(0, 0)
    assert rate == Rate(k=0, n=0, rate=None, low=None, high=None)
    assert rate.format() == "--"
    assert rate.as_dict() == {
        "k": 0,
        "n": 0,
        "rate": None,
        "low": None,
        "high": None,
        "method": "wilson",
        "confidence": 0.95,
    }


def test_rate_as_dict() -> None:
    data = rate_of(1, 3).as_dict()
    assert (data["k"], data["n"], data["method"], data["confidence"]) == (1, 3, "wilson", 0.95)
    assert data["rate"] == pytest.approx(1 / 3)
    assert data["low"] < data["rate"] < data["high"]


def test_a_rate_reads_back_from_its_machine_readable_form() -> None:
    from pytest_obelize_bench._util.stats import rate_over_clusters

    for rate in (rate_of(3, 20), rate_of(0, 0), rate_over_clusters([(2, 5), (0, 4), (3, 3)])):
        assert Rate.from_dict(rate.as_dict()) == rate
