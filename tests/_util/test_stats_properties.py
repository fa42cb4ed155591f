"""Properties of the interval and the paired test every published figure rests on."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats  # type: ignore[import-untyped]  # scipy ships no type information

from pytest_obelize_bench._util.stats import mcnemar_exact, wilson_interval


@st.composite
def counts(draw: st.DrawFn, most: int = 400) -> tuple[int, int]:
    n = draw(st.integers(min_value=1, max_value=most))
    return draw(st.integers(min_value=0, max_value=n)), n


@given(counts())
def test_a_wilson_interval_lies_in_the_unit_interval_and_holds_its_rate(kn: tuple[int, int]) -> None:
    k, n = kn
    bounds = wilson_interval(k, n)
    assert bounds is not None
    low, high = bounds
    assert 0.0 <= low <= k / n <= high <= 1.0


@given(counts(most=200), st.integers(min_value=2, max_value=10))
def test_a_wilson_interval_narrows_as_n_grows_at_the_same_rate(kn: tuple[int, int], factor: int) -> None:
    k, n = kn
    small, large = wilson_interval(k, n), wilson_interval(k * factor, n * factor)
    assert small is not None and large is not None
    assert large[1] - large[0] <= small[1] - small[0] + 1e-12


@given(st.integers(min_value=0, max_value=300), st.integers(min_value=0, max_value=300))
def test_exact_mcnemar_is_symmetric_and_a_probability(b: int, c: int) -> None:
    p = mcnemar_exact(b, c)
    assert p == mcnemar_exact(c, b)
    assert 0.0 < p <= 1.0
    assert (p == 1.0) == (abs(b - c) <= 1)  # only a split as even as it can be is no evidence at all


@given(st.integers(min_value=0, max_value=150), st.integers(min_value=0, max_value=150))
def test_exact_mcnemar_agrees_with_scipy(b: int, c: int) -> None:
    if b + c == 0:
        assert mcnemar_exact(b, c) == 1.0
        return
    expected = stats.binomtest(min(b, c), b + c, 0.5).pvalue
    assert mcnemar_exact(b, c) == pytest.approx(min(1.0, expected), rel=1e-9, abs=1e-12)
