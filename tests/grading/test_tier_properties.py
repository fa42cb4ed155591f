"""The tier function tries the protocol's tiers in order, whatever the record holds."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pytest_obelize_bench.grading.record import ErrorInfo, Measurements, SuiteResult
from pytest_obelize_bench.grading.tiers import is_verified, is_wrong, tier

counts = st.one_of(st.none(), st.integers(min_value=0, max_value=5))
flags = st.one_of(st.none(), st.booleans())
suites = st.builds(
    SuiteResult,
    status=st.sampled_from(["pass", "fail", "inconclusive", "not_run"]),
    passed=counts,
    failed=counts,
    skipped=counts,
)
measured = st.builds(
    Measurements,
    detected=counts,
    false_positive=counts,
    missed_call_site=counts,
    patch_applied=st.booleans(),
    patch_compiles=flags,
    unmigrated=st.integers(min_value=0, max_value=5),
    false_positive_edit=counts,
    tests_baseline=suites,
    tests_after=suites,
    tests_cover_change=flags,
    human_edits=counts,
    patch_correct=flags,
)
errors = st.one_of(st.none(), st.builds(ErrorInfo, step=st.just("fix"), reason=st.just("timeout"), detail=st.just("")))


@given(errors, measured)
def test_the_first_tier_that_holds_is_the_one_given(error: ErrorInfo | None, m: Measurements) -> None:
    assert m.patch_applied is not None and m.unmigrated is not None
    ladder = [
        ("error", error is not None),
        ("wrong", is_wrong(m)),
        ("unsupported", not m.patch_applied),
        ("partial", m.unmigrated > 0),
        ("verified_success", is_verified(m)),
        ("patched_unverified", True),
    ]
    assert tier(error, m) == next(name for name, holds in ladder if holds)


@given(measured)
def test_a_null_never_grants_verified_success(m: Measurements) -> None:
    nulls = [m.false_positive, m.missed_call_site, m.human_edits, m.tests_cover_change]
    if any(value is None for value in nulls):
        assert tier(None, m) != "verified_success"
