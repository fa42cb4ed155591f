"""Tiers are computed, never assigned: ``tier()`` from a record, ``ceiling()`` from a key.

Both are pure. A null is never read as 0 or as true: a measurement that was not made can
neither grant ``verified_success`` nor make a case ``wrong``.
"""

from __future__ import annotations

from pytest_obelize_bench.casefile.cases import Case
from pytest_obelize_bench.grading.record import ErrorInfo, Measurements, Tier

CAP_CONTROL = "a negative control is excluded from the rate"
CAP_RETIRED = "the case is retired"
CAP_NOTHING = "the key names nothing to migrate"
CAP_NO_TEST = "no test command"
CAP_NOT_COVERED = "the tests do not cover the change"
CAP_MANUAL = "a row the key marks `manual`"
CAP_FLAGGED = "a row the pack flags rather than edits"
CAP_UNREVIEWED = "the review is unanswered (human_edits is null)"


def regressed(m: Measurements) -> bool:
    """A patch turned a passing baseline into a failing after-run."""
    return m.patch_applied is True and m.tests_baseline.status == "pass" and m.tests_after.status == "fail"


def is_wrong(m: Measurements) -> bool:
    return (
        m.patch_correct is False
        or m.patch_compiles is False
        or (m.false_positive_edit is not None and m.false_positive_edit > 0)
        or regressed(m)
    )


def is_verified(m: Measurements) -> bool:
    after = m.tests_after
    ran_something = after.passed is None or after.passed > 0
    return (
        m.false_positive == 0
        and m.missed_call_site == 0
        and m.human_edits == 0
        and m.tests_baseline.status == "pass"
        and after.status == "pass"
        and ran_something
        and m.tests_cover_change is True
    )


def tier(error: ErrorInfo | None, m: Measurements) -> Tier:
    """The protocol's tiers, tried in order; the first that holds is the case's."""
    if error is not None:
        return "error"
    if m.patch_applied is None or m.unmigrated is None:
        # Only an errored case may leave these unmeasured; guessing a tier would read null as a value.
        raise ValueError("a record without an error must measure patch_applied and unmigrated")
    if is_wrong(m):
        return "wrong"
    if not m.patch_applied:
        return "unsupported"
    if m.unmigrated > 0:
        return "partial"
    if is_verified(m):
        return "verified_success"
    return "patched_unverified"


def control_held(error: ErrorInfo | None, m: Measurements) -> bool | None:
    """Whether a negative control held: the scan reported no call site and no pin, nothing applied.

    None when that is not known: an errored record, or one that does not count what it would
    need to (round 1's records predate ``manifest_reported``).
    """
    if error is not None:
        return None
    if (m.detected or 0) > 0 or (m.manifest_reported or 0) > 0 or (m.false_positive_edit or 0) > 0:
        return False
    if m.patch_applied is True:
        return False
    if m.detected is None or m.manifest_reported is None or m.false_positive_edit is None or m.patch_applied is None:
        return None
    return True


def ceiling(case: Case, *, reviewed: bool | None, rules: bool = True) -> str | None:
    """What caps a case below ``verified_success`` from its key, None if nothing.

    ``reviewed`` says whether a review answers for the patch in question (answers are keyed to
    patches, so a case has none before its patch is written and reviewed); None where no review is
    asked for (the comparison scores its arms by scan). ``rules`` False is the ceiling of an arm that
    is not a rule engine: a manual or flagged row caps only the rules, not an agent."""
    truth = case.ground_truth
    if case.control:
        return CAP_CONTROL
    if case.retired is not None:
        return CAP_RETIRED
    labels = [row.label for row in truth.call_sites] + [row.label for row in truth.manifests]
    if not labels:
        return CAP_NOTHING
    if case.test_cmd is None:
        return CAP_NO_TEST
    if not truth.tests_cover_change:
        return CAP_NOT_COVERED
    if rules and any(label != "auto" for label in labels):
        return CAP_MANUAL
    if rules and any(row.kind == "dynamic" for row in truth.call_sites):
        return CAP_FLAGGED
    if reviewed is False:
        return CAP_UNREVIEWED
    return None


def _verified_gap(m: Measurements) -> str:
    """The first condition of ``verified_success`` that does not hold, as a reader checks it."""
    after = m.tests_after
    checks: list[tuple[bool, str]] = [
        (m.false_positive == 0, f"false_positive {m.false_positive} is not 0"),
        (m.missed_call_site == 0, f"missed_call_site {m.missed_call_site} is not 0"),
        (
            m.human_edits == 0,
            "human_edits is null (unanswered)" if m.human_edits is None else f"human_edits {m.human_edits} is not 0",
        ),
        (m.tests_baseline.status == "pass", f"tests_baseline.status is {m.tests_baseline.status}"),
        (after.status == "pass", f"tests_after.status is {after.status}"),
        (after.passed is None or after.passed > 0, "the after-run passed no test"),
        (m.tests_cover_change is True, "tests_cover_change is not true"),
    ]
    for holds, why in checks:
        if not holds:
            return why
    return "every condition holds"


def explain_tier(error: ErrorInfo | None, m: Measurements) -> str:
    """The tier and the first rule of the protocol's order that decided it, in one line.

    Walks the same order as ``tier()`` (which it does not replace), naming the value that
    decided, e.g. ``wrong: false_positive_edit 2 > 0``.
    """
    if error is not None:
        return f"error: {error.step}: {error.reason}"
    if m.patch_applied is None or m.unmigrated is None:
        return "no tier: a record without an error must measure patch_applied and unmigrated"
    if m.patch_correct is False:
        return "wrong: patch_correct is false"
    if m.patch_compiles is False:
        return "wrong: patch_compiles is false"
    if m.false_positive_edit is not None and m.false_positive_edit > 0:
        return f"wrong: false_positive_edit {m.false_positive_edit} > 0"
    if regressed(m):
        return "wrong: the patch turned a passing baseline into a failing after-run"
    if not m.patch_applied:
        return "unsupported: patch_applied is false (nothing was written)"
    if m.unmigrated > 0:
        return f"partial: unmigrated {m.unmigrated} > 0"
    if is_verified(m):
        return "verified_success: " + _verified_gap(m)
    return "patched_unverified: " + _verified_gap(m)
