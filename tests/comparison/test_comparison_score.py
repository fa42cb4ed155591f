"""The comparison's scorer: rows cleared by scan, corrections, tiers and per-arm ceilings."""

from __future__ import annotations

from pytest_obelize_bench.casefile.cases import CallSite, Case, GroundTruth, ManifestRow
from pytest_obelize_bench.comparison.score import (
    ArmInputs,
    arm_totals,
    cleared_rows,
    comparison_tier,
    key_triples,
    score_arm,
)
from pytest_obelize_bench.grading.record import SuiteResult
from pytest_obelize_bench.grading.tiers import ceiling

PASS = SuiteResult(status="pass", passed=3, failed=0, skipped=0)
FAIL = SuiteResult(status="fail", passed=2, failed=1, skipped=0)
NOT_RUN = SuiteResult()


def _case(*, dynamic: bool = False, manual: bool = False, test_cmd: str | None = "python -m pytest -q") -> Case:
    rows = [
        CallSite(path="app.py", line=1, kind="import", symbol="google.generativeai", label="auto"),
        CallSite(path="app.py", line=3, kind="call", symbol="google.generativeai.configure", label="auto"),
        CallSite(path="app.py", line=7, kind="call", symbol="google.generativeai.configure", label="auto"),
    ]
    if dynamic:
        rows.append(CallSite(path="app.py", line=9, kind="dynamic", symbol="google.generativeai", label="auto"))
    if manual:
        rows.append(CallSite(path="lib.py", line=2, kind="import", symbol="google.generativeai", label="manual"))
    return Case(
        id="o__r",
        origin="corpus",
        control=False,
        split="dev",
        provider="gemini",
        change="google-generativeai-to-google-genai",
        pattern_key=("google.generativeai",),
        test_cmd=test_cmd,
        ground_truth=GroundTruth(
            call_sites=rows,
            manifests=[ManifestRow(path="requirements.txt", line=1, symbol="google-generativeai", label="auto")],
            tests_cover_change=True,
        ),
    )


BASE = [
    ("app.py", 1, "import", "google.generativeai"),
    ("app.py", 3, "call", "google.generativeai.configure"),
    ("app.py", 7, "call", "google.generativeai.configure"),
    ("requirements.txt", 1, "manifest", "google-generativeai"),
]


def test_key_rows_are_named_as_the_scanner_names_them() -> None:
    triples = key_triples(_case(dynamic=True))
    assert ("app.py", "text_mention", "google.generativeai") in triples
    assert ("requirements.txt", "manifest", "google-generativeai") in triples
    assert not any(kind == "dynamic" for _, kind, _ in triples)


def test_a_row_is_cleared_when_the_scan_afterwards_no_longer_reports_it_whatever_its_line() -> None:
    key = key_triples(_case())
    # One configure left, moved to another line: one of the two configure rows is still legacy.
    after = [("app.py", 12, "call", "google.generativeai.configure")]
    rows = cleared_rows(key, BASE, after)
    assert (rows.key_rows, rows.seen, rows.cleared, rows.left, rows.added) == (4, 4, 3, 1, 0)


def test_the_kind_is_part_of_the_match() -> None:
    key = key_triples(_case())
    # The import reported as a text mention afterwards is a different row: the import is cleared.
    after = [("app.py", 1, "text_mention", "google.generativeai")]
    rows = cleared_rows(key, BASE, after)
    assert rows.cleared == 4 and rows.added == 1


def test_a_row_the_base_scan_misses_is_credited_to_neither_arm_and_stays_left() -> None:
    key = key_triples(_case(dynamic=True))  # the text mention is not in BASE
    rows = cleared_rows(key, BASE, [])
    assert (rows.key_rows, rows.seen, rows.cleared, rows.left) == (5, 4, 4, 1)


def test_deleting_a_key_file_clears_none_of_its_rows() -> None:
    rows = cleared_rows(key_triples(_case()), BASE, [], deleted=["app.py"])
    assert rows.cleared == 1 and rows.left == 3


def test_reports_beyond_the_key_are_taken_as_the_ones_that_remain() -> None:
    key = [("app.py", "import", "google.generativeai")]
    base = [("app.py", 1, "import", "google.generativeai"), ("app.py", 5, "import", "google.generativeai")]
    assert cleared_rows(key, base, [("app.py", 5, "import", "google.generativeai")]).cleared == 1
    assert cleared_rows(key, base, base).cleared == 0


def test_legacy_usage_an_arm_adds_enters_the_accuracy_denominator() -> None:
    after = [("new.py", 1, "import", "google.generativeai")]
    inputs = ArmInputs(after, ["app.py", "new.py"], True, [], 10.0, PASS, True, 0)
    one = score_arm(_case(), BASE, inputs, PASS, rules=False)
    assert (one.cleared, one.added, one.files, one.files_off_key) == (4, 1, 2, 1)
    totals = arm_totals([one])
    assert (totals.accuracy.k, totals.accuracy.n) == (4, 5)


def _tier(**overrides: object) -> str:
    facts: dict[str, object] = {
        "error": None,
        "changed": True,
        "compiles": True,
        "patch_correct": True,
        "left": 0,
        "baseline": PASS,
        "after": PASS,
        "covers": True,
    }
    facts.update(overrides)
    return comparison_tier(**facts)  # type: ignore[arg-type]


def test_the_tier_ladder_in_order() -> None:
    assert _tier() == "verified_success"
    assert _tier(error="timeout", patch_correct=False) == "error"
    assert _tier(patch_correct=False) == "wrong"
    assert _tier(compiles=False) == "wrong"
    assert _tier(after=FAIL) == "wrong"
    assert _tier(changed=False, patch_correct=None, after=FAIL) == "unsupported"
    assert _tier(left=2) == "partial"
    assert _tier(after=NOT_RUN) == "patched_unverified"
    assert _tier(patch_correct=None) == "patched_unverified"
    assert _tier(covers=False) == "patched_unverified"
    assert _tier(after=SuiteResult(status="pass", passed=0, failed=0, skipped=4)) == "patched_unverified"


def test_a_manual_row_caps_only_the_rules_and_no_test_command_caps_both() -> None:
    manual = _case(manual=True)
    assert ceiling(manual, reviewed=None, rules=True) == "a row the key marks `manual`"
    assert ceiling(manual, reviewed=None, rules=False) is None
    no_tests = _case(test_cmd=None)
    assert (
        ceiling(no_tests, reviewed=None, rules=True)
        == ceiling(no_tests, reviewed=None, rules=False)
        == "no test command"
    )


def test_an_errored_arm_measured_nothing_and_keeps_every_row_in_its_corrections() -> None:
    inputs = ArmInputs(None, [], None, [], None, None, None, 0, error="no finished stamp")
    one = score_arm(_case(), BASE, inputs, PASS, rules=False)
    assert (one.tier, one.cleared, one.corrections, one.error) == ("error", 0, 4, "no finished stamp")


def test_corrections_are_rows_left_plus_rejected_edits() -> None:
    after = [("app.py", 3, "call", "google.generativeai.configure")]
    inputs = ArmInputs(after, ["app.py"], True, [], 5.0, PASS, False, 2)
    one = score_arm(_case(), BASE, inputs, PASS, rules=False)
    assert (one.left, one.corrections, one.tier) == (1, 3, "wrong")


def test_the_new_sdks_pin_is_not_legacy_usage_added() -> None:
    key = key_triples(_case())
    after = [("requirements.txt", 1, "manifest", "google-genai"), ("x.py", 2, "call", "google.generativeai.configure")]
    rows = cleared_rows(key, BASE, after)
    assert rows.added == 1 and rows.cleared == 4
