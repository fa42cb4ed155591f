"""The one definition of "told apart", and rates over rows that sit in repositories."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_obelize_bench._util.stats import mcnemar_exact, rate_of, rate_over_clusters, wilson_interval
from pytest_obelize_bench._util.told_apart import told_apart

scores = st.lists(st.sampled_from([0.0, 1 / 3, 0.5, 2 / 3, 1.0]), min_size=1, max_size=30)


@given(st.data(), scores)
def test_told_apart_is_the_sign_test_at_alpha_and_min_n_and_nothing_else(
    data: st.DataObject, first: list[float]
) -> None:
    second = data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=len(first), max_size=len(first)))
    alpha = data.draw(st.sampled_from([0.01, 0.05, 0.2]))
    min_n = data.draw(st.integers(1, 40))
    apart = told_apart(first, second, alpha=alpha, min_n=min_n)
    lower = sum(b < a for a, b in zip(first, second, strict=True))
    higher = sum(b > a for a, b in zip(first, second, strict=True))
    assert (apart.first_higher, apart.second_higher, apart.same) == (lower, higher, len(first) - lower - higher)
    assert apart.p == mcnemar_exact(lower, higher)
    assert apart.told_apart == (len(first) >= min_n and apart.p < alpha)
    assert apart.verdict().startswith("told apart" if apart.told_apart else "not told apart")
    # swapping the sides swaps the counts and keeps the verdict
    swapped = told_apart(second, first, alpha=alpha, min_n=min_n)
    assert (swapped.first_higher, swapped.second_higher, swapped.told_apart) == (higher, lower, apart.told_apart)


@given(st.data(), scores)
def test_the_difference_sits_inside_its_interval_and_the_interval_is_repeatable(
    data: st.DataObject, first: list[float]
) -> None:
    second = data.draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=len(first), max_size=len(first)))
    apart = told_apart(first, second, alpha=0.05, min_n=1)
    assert apart.difference is not None and apart.interval is not None
    low, high = apart.interval
    assert -1.0 <= low <= apart.difference + 1e-12 and apart.difference - 1e-12 <= high <= 1.0
    assert told_apart(first, second, alpha=0.05, min_n=1).interval == apart.interval


def test_unequal_sides_are_refused() -> None:
    with pytest.raises(ValueError, match="one per case"):
        told_apart([1.0], [1.0, 0.0], alpha=0.05, min_n=1)


def test_ten_to_eighteen_of_twenty_is_told_apart_although_independent_intervals_would_overlap() -> None:
    """The case the overlap rule got wrong: 8 cases won and none lost is p = 0.0078."""
    first, second = [1.0] * 10 + [0.0] * 10, [1.0] * 18 + [0.0] * 2
    apart = told_apart(first, second, alpha=0.05, min_n=20)
    assert apart.told_apart and apart.p == pytest.approx(0.0078125)
    a, b = wilson_interval(10, 20), wilson_interval(18, 20)
    assert a is not None and b is not None and a[1] >= b[0]  # the intervals do overlap
    assert apart.difference_text().startswith("+40.0 points [")


@given(st.lists(st.tuples(st.integers(0, 30), st.integers(1, 30)), min_size=1, max_size=40))
def test_a_clustered_rate_is_the_pooled_ratio_and_never_narrower_than_rows_would_give(
    groups: list[tuple[int, int]],
) -> None:
    groups = [(min(k, n), n) for k, n in groups]
    clustered = rate_over_clusters(groups)
    k, n = sum(g[0] for g in groups), sum(g[1] for g in groups)
    plain = rate_of(k, n)
    assert (clustered.k, clustered.n, clustered.clusters) == (k, n, len(groups))
    assert clustered.rate == plain.rate
    assert clustered.low is not None and plain.low is not None and clustered.high is not None
    assert plain.high is not None
    assert clustered.low <= plain.low + 1e-12 and clustered.high >= plain.high - 1e-12
    assert clustered.effective_n is not None and 1 <= clustered.effective_n <= n


def test_rows_that_agree_within_repositories_count_about_once_per_repository() -> None:
    """Thirteen repositories that each migrate all or nothing: the interval is that of 13, not of 174."""
    groups = [(20, 20)] * 6 + [(0, 14)] * 7
    clustered = rate_over_clusters(groups)
    assert clustered.effective_n is not None and clustered.effective_n < 14
    rows = rate_of(clustered.k, clustered.n)
    assert clustered.high is not None and clustered.low is not None and rows.high is not None and rows.low is not None
    assert (clustered.high - clustered.low) > 2 * (rows.high - rows.low)
    assert clustered.counted("rows") == "120 of 218 rows in 13 repositories"
    assert clustered.as_dict()["method"].startswith("wilson at the effective n")


def test_independent_rows_keep_about_their_own_width() -> None:
    """Repositories whose rows each go their own way at the same rate: no design effect."""
    clustered = rate_over_clusters([(5, 10)] * 20)
    rows = rate_of(100, 200)
    assert clustered.effective_n == 200
    assert (clustered.low, clustered.high) == pytest.approx((rows.low, rows.high))


def test_all_or_nothing_boundaries_count_each_repository_once() -> None:
    everything = rate_over_clusters([(8, 8), (13, 13), (20, 20), (14, 14), (8, 8)])
    assert everything.rate == 1.0 and everything.effective_n == 5
    five = wilson_interval(5, 5)
    assert five is not None and everything.low == pytest.approx(five[0])
    assert rate_over_clusters([]).rate is None and rate_over_clusters([(0, 0)]).format() == "--"
    assert math.isclose(rate_over_clusters([(3, 4)]).effective_n or 0, 1.0)


def test_the_bootstrap_draws_what_randrange_draws() -> None:
    """The interval is the percentile bootstrap with ``randrange`` at the fixed seed, whatever shortcut draws it."""
    import random

    from pytest_obelize_bench._util.told_apart import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED

    first, second = [0.0, 1.0, 0.5, 1.0, 0.0, 1.0, 0.0], [1.0, 1.0, 0.0, 1.0, 1.0, 0.5, 0.0]
    differences = [b - a for a, b in zip(first, second, strict=True)]
    draw, n = random.Random(BOOTSTRAP_SEED), len(differences)
    means = sorted(sum(differences[draw.randrange(n)] for _ in range(n)) / n for _ in range(BOOTSTRAP_RESAMPLES))
    expected = (means[int(0.025 * BOOTSTRAP_RESAMPLES)], means[int(0.975 * BOOTSTRAP_RESAMPLES)])
    assert told_apart(first, second, alpha=0.05, min_n=1).interval == expected


def test_sides_that_never_differ_or_always_differ_alike_get_the_bootstraps_interval_without_resampling() -> None:
    for first, second in (([0.0] * 30, [0.0] * 30), ([0.0] * 7, [1 / 3] * 7), ([1.0] * 5, [0.5] * 5)):
        differences = [b - a for a, b in zip(first, second, strict=True)]
        mean = sum(differences) / len(differences)
        assert told_apart(first, second, alpha=0.05, min_n=1).interval == (mean, mean)


def test_without_its_interval_the_verdict_and_the_difference_are_the_same() -> None:
    first, second = [1.0] * 10 + [0.0] * 10, [1.0] * 18 + [0.0] * 2
    full, bare = (told_apart(first, second, alpha=0.05, min_n=20, interval=flag) for flag in (True, False))
    assert bare.interval is None and full.interval is not None
    assert (bare.p, bare.told_apart, bare.difference, bare.verdict()) == (
        full.p,
        full.told_apart,
        full.difference,
        full.verdict(),
    )
