"""tiers.tier() and tiers.ceiling(): the protocol's order, and a null never read as 0 or true."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_obelize_bench.casefile.cases import (
    CallSite,
    Case,
    GroundTruth,
    ManifestRow,
    Retired,
    Review,
    load_case_file,
)
from pytest_obelize_bench.grading import tiers
from pytest_obelize_bench.grading.record import ErrorInfo, Measurements, SuiteResult
from pytest_obelize_bench.grading.tiers import ceiling, tier
from tests.helpers.measurements import PASS, verified
from tests.helpers.project import PROJECT

FAIL = SuiteResult(status="fail", passed=1, failed=2, skipped=0)
ERROR = ErrorInfo(step="install-to-check", reason="version_mismatch", detail="google-genai: pinned 1, installed 2")


def test_the_baseline_record_is_verified() -> None:
    assert tier(None, verified()) == "verified_success"


# -- each tier, in order --------------------------------------------------------------------


def test_error_comes_first() -> None:
    assert tier(ERROR, verified()) == "error"
    assert tier(ERROR, verified(patch_compiles=False, false_positive_edit=3)) == "error"


def test_an_error_with_unmigrated_9_is_still_error() -> None:
    assert tier(ERROR, verified(patch_applied=False, unmigrated=9)) == "error"


def test_error_with_null_measurements() -> None:
    assert tier(ERROR, Measurements()) == "error"


@pytest.mark.parametrize(
    "changes",
    [
        {"patch_correct": False},
        {"patch_compiles": False},
        {"false_positive_edit": 1},
        {"tests_baseline": PASS, "tests_after": FAIL},
    ],
)
def test_wrong(changes: dict[str, Any]) -> None:
    assert tier(None, verified(**changes)) == "wrong"


def test_wrong_comes_before_unsupported_and_partial() -> None:
    assert tier(None, verified(patch_applied=False, false_positive_edit=1)) == "wrong"
    assert tier(None, verified(unmigrated=4, patch_compiles=False)) == "wrong"


def test_unsupported_when_nothing_was_written() -> None:
    assert tier(None, verified(patch_applied=False, unmigrated=5, patch_compiles=None)) == "unsupported"


def test_partial_when_rows_remain() -> None:
    assert tier(None, verified(unmigrated=1)) == "partial"


def test_partial_comes_before_verified_and_unverified() -> None:
    assert tier(None, verified(unmigrated=2, human_edits=None)) == "partial"


def test_patched_unverified_is_the_rest() -> None:
    assert tier(None, verified(tests_after=SuiteResult(status="not_run"))) == "patched_unverified"


# -- null is not zero -----------------------------------------------------------------------


def test_human_edits_null_is_patched_unverified() -> None:
    assert tier(None, verified(human_edits=None)) == "patched_unverified"


def test_human_edits_one_is_patched_unverified() -> None:
    assert tier(None, verified(human_edits=1)) == "patched_unverified"


def test_patch_correct_null_is_not_wrong() -> None:
    assert tier(None, verified(patch_correct=None)) == "verified_success"


def test_patch_compiles_null_is_not_wrong() -> None:
    assert tier(None, verified(patch_compiles=None)) == "verified_success"


def test_a_suite_that_skipped_everything_verified_nothing() -> None:
    skipped_all = SuiteResult(status="pass", passed=0, failed=0, skipped=19)
    assert tier(None, verified(tests_after=skipped_all)) == "patched_unverified"
    one = SuiteResult(status="pass", passed=1, failed=0, skipped=19)
    assert tier(None, verified(tests_after=one)) == "verified_success"


def test_an_after_run_without_junit_counts_can_verify() -> None:
    no_counts = SuiteResult(status="pass")
    assert tier(None, verified(tests_baseline=no_counts, tests_after=no_counts)) == "verified_success"


def test_tests_cover_change_null_does_not_verify() -> None:
    assert tier(None, verified(tests_cover_change=None)) == "patched_unverified"


@pytest.mark.parametrize("field", ["false_positive", "missed_call_site"])
def test_null_detection_counts_do_not_verify(field: str) -> None:
    assert tier(None, verified(**{field: None})) == "patched_unverified"


# -- regression -----------------------------------------------------------------------------


def test_a_failing_after_run_with_no_patch_is_not_wrong() -> None:
    m = verified(patch_applied=False, unmigrated=3, tests_baseline=PASS, tests_after=FAIL, patch_compiles=None)
    assert tier(None, m) == "unsupported"


def test_a_failing_baseline_and_after_is_not_a_regression() -> None:
    assert tier(None, verified(tests_baseline=FAIL, tests_after=FAIL)) == "patched_unverified"


def test_an_inconclusive_after_run_is_not_a_regression() -> None:
    assert tier(None, verified(tests_after=SuiteResult(status="inconclusive"))) == "patched_unverified"


# -- each single missing ingredient drops verified_success ----------------------------------


@pytest.mark.parametrize(
    "changes",
    [
        {"false_positive": 1},
        {"missed_call_site": 1},
        {"human_edits": None},
        {"human_edits": 1},
        {"tests_baseline": SuiteResult(status="not_run")},
        {"tests_baseline": SuiteResult(status="inconclusive")},
        {"tests_baseline": FAIL},
        {"tests_after": SuiteResult(status="inconclusive")},
        {"tests_after": SuiteResult(status="not_run")},
        {"tests_after": SuiteResult(status="pass", passed=0, failed=0, skipped=2)},
        {"tests_cover_change": False},
    ],
)
def test_each_missing_ingredient_gives_patched_unverified(changes: dict[str, Any]) -> None:
    assert tier(None, verified(**changes)) == "patched_unverified"


def test_forbidden_reported_is_not_a_tier_input() -> None:
    assert tier(None, verified(forbidden_reported=4)) == "verified_success"


# -- ceiling --------------------------------------------------------------------------------


def row(label: str = "auto", kind: str = "import") -> CallSite:
    return CallSite(path="app.py", line=1, kind=kind, symbol="google.generativeai", label=label)  # type: ignore[arg-type]


def key_case(**changes: Any) -> Case:
    truth = changes.pop("ground_truth", None) or GroundTruth(
        call_sites=[row()],
        manifests=[ManifestRow(path="requirements.txt", line=1, symbol="google-generativeai", label="auto")],
        tests_cover_change=True,
    )
    fields: dict[str, Any] = {
        "id": "owner__repo",
        "origin": "corpus",
        "control": False,
        "provider": "gemini",
        "change": "google-generativeai-to-google-genai",
        "test_cmd": "python -m pytest -q",
        "ground_truth": truth,
        "review": Review(human_edits=0, patch_correct=True),
    }
    fields.update(changes)
    return Case(**fields)


def test_a_reviewed_automatic_covered_case_has_no_ceiling() -> None:
    assert ceiling(key_case(), reviewed=True) is None


def test_ceiling_control() -> None:
    assert ceiling(key_case(control=True, ground_truth=GroundTruth()), reviewed=True) == tiers.CAP_CONTROL


def test_ceiling_retired() -> None:
    assert ceiling(key_case(retired=Retired(reason="gone", round=2)), reviewed=True) == tiers.CAP_RETIRED


def test_ceiling_nothing_to_migrate() -> None:
    assert ceiling(key_case(ground_truth=GroundTruth(tests_cover_change=True)), reviewed=True) == tiers.CAP_NOTHING


def test_ceiling_no_test_command() -> None:
    assert ceiling(key_case(test_cmd=None), reviewed=True) == tiers.CAP_NO_TEST


def test_ceiling_tests_do_not_cover_the_change() -> None:
    truth = GroundTruth(call_sites=[row()], tests_cover_change=False)
    assert ceiling(key_case(ground_truth=truth), reviewed=True) == tiers.CAP_NOT_COVERED


def test_ceiling_manual_row() -> None:
    truth = GroundTruth(call_sites=[row(), row("manual", "call")], tests_cover_change=True)
    assert ceiling(key_case(ground_truth=truth), reviewed=True) == tiers.CAP_MANUAL


def test_ceiling_manual_manifest_row() -> None:
    truth = GroundTruth(
        call_sites=[row()],
        manifests=[ManifestRow(path="setup.py", line=4, symbol="google-generativeai", label="manual", why="x")],
        tests_cover_change=True,
    )
    assert ceiling(key_case(ground_truth=truth), reviewed=True) == tiers.CAP_MANUAL


def test_ceiling_flagged_row() -> None:
    truth = GroundTruth(call_sites=[row(), row("auto", "dynamic")], tests_cover_change=True)
    assert ceiling(key_case(ground_truth=truth), reviewed=True) == tiers.CAP_FLAGGED


def test_ceiling_unanswered_review() -> None:
    assert ceiling(key_case(review=None), reviewed=False) == tiers.CAP_UNREVIEWED


def test_a_review_on_the_case_row_lifts_no_cap_only_an_answer_for_the_patch_does() -> None:
    assert ceiling(key_case(review=Review(human_edits=0, patch_correct=True)), reviewed=False) == tiers.CAP_UNREVIEWED
    assert ceiling(key_case(review=None), reviewed=True) is None


def test_ceiling_order() -> None:
    # every cap at once: the first in the protocol's order wins, then each in turn
    truth = GroundTruth(call_sites=[row("manual", "dynamic")], tests_cover_change=False)
    everything = {"control": True, "retired": Retired(reason="x", round=1), "test_cmd": None, "review": None}
    assert ceiling(key_case(ground_truth=truth, **everything), reviewed=True) == tiers.CAP_CONTROL
    everything.pop("control")
    assert ceiling(key_case(ground_truth=truth, **everything), reviewed=True) == tiers.CAP_RETIRED
    everything.pop("retired")
    assert ceiling(key_case(ground_truth=truth, **everything), reviewed=True) == tiers.CAP_NO_TEST
    everything.pop("test_cmd")
    assert ceiling(key_case(ground_truth=truth, **everything), reviewed=True) == tiers.CAP_NOT_COVERED
    truth = GroundTruth(call_sites=[row("manual", "dynamic")], tests_cover_change=True)
    assert ceiling(key_case(ground_truth=truth, **everything), reviewed=True) == tiers.CAP_MANUAL
    truth = GroundTruth(call_sites=[row("auto", "dynamic")], tests_cover_change=True)
    assert ceiling(key_case(ground_truth=truth, **everything), reviewed=True) == tiers.CAP_FLAGGED
    truth = GroundTruth(call_sites=[row()], tests_cover_change=True)
    assert ceiling(key_case(ground_truth=truth, **everything), reviewed=False) == tiers.CAP_UNREVIEWED


def _published_ceilings(round_heading: str) -> dict[str, str | None]:
    """The ceiling table of one round's block in the published document, case by case."""
    document = (PROJECT / "results" / "BENCHMARK_RESULTS.md").read_text(encoding="utf-8")
    block = document.split(round_heading + "\n", 1)[1]
    table = block.split("#### Ceiling, from the keys alone", 1)[1].split("| Capped by |\n|---|---|---|---|\n", 1)[1]
    caps: dict[str, str | None] = {}
    for line in table.split("\n\n", 1)[0].splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells[0] != "**Total**":
            caps[cells[0].strip("`")] = None if cells[3] == "--" else cells[3]
    return caps


def test_the_published_ceiling_column_is_what_ceiling_gives_for_the_shipped_keys() -> None:
    case_file = load_case_file(PROJECT / "cases" / "cases.yaml")
    want = {case.id: ceiling(case, reviewed=False) for case in case_file.cases if not case.control}
    published = _published_ceilings("### Round 2")
    assert published == want
    # the words readers see are the protocol's, for the caps the shipped keys hit
    assert set(published.values()) == {
        "a row the key marks `manual`",
        "a row the pack flags rather than edits",
        "no test command",
    }


def test_a_record_without_an_error_must_have_measured_the_patch() -> None:
    """Nulls are never read as values: no tier is guessed for an unmeasured, unerrored record."""
    from pytest_obelize_bench.grading.record import Measurements

    with pytest.raises(ValueError, match="must measure patch_applied and unmigrated"):
        tier(None, Measurements(patch_applied=True, unmigrated=None))
    with pytest.raises(ValueError):
        tier(None, Measurements())


@pytest.mark.parametrize(
    ("fields", "held"),
    [
        ({"detected": 0, "manifest_reported": 0, "false_positive_edit": 0, "patch_applied": False}, True),
        ({"detected": 0, "manifest_reported": 1, "false_positive_edit": 0, "patch_applied": False}, False),
        ({"detected": 1, "manifest_reported": 0, "false_positive_edit": 0, "patch_applied": False}, False),
        ({"detected": 0, "manifest_reported": 0, "false_positive_edit": 0, "patch_applied": True}, False),
        ({"detected": 0, "manifest_reported": None, "false_positive_edit": 0, "patch_applied": False}, None),
        ({"detected": None, "manifest_reported": 0, "false_positive_edit": 0, "patch_applied": False}, None),
    ],
)
def test_a_control_holds_only_with_no_call_site_and_no_pin(fields: dict[str, Any], held: bool | None) -> None:
    from pytest_obelize_bench.grading.tiers import control_held

    assert control_held(None, Measurements(**fields)) is held
    assert control_held(ErrorInfo(step="fix", reason="obelize_failed", detail="x"), Measurements(**fields)) is None
