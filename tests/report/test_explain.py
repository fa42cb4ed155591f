"""The one-line explanation of a tier, the rows ``show`` lists, and the JUnit rewrite."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from pytest_obelize_bench.casefile.cases import (
    CallSite,
    Case,
    ForbiddenPosition,
    GroundTruth,
    ManifestRow,
)
from pytest_obelize_bench.grading.graded_facts import Artefacts, Finding, PlanEdit, Withheld
from pytest_obelize_bench.grading.record import ErrorInfo, Measurements, Record, SuiteResult
from pytest_obelize_bench.grading.tiers import explain_tier, tier
from pytest_obelize_bench.report.case_facts import CaseInputs, Forbidden, case_facts
from pytest_obelize_bench.report.show import unmigrated_rows
from pytest_obelize_bench.session.junit import rewrite_junit
from tests.helpers.measurements import verified


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"false_positive_edit": 2}, "wrong: false_positive_edit 2 > 0"),
        ({"patch_compiles": False, "false_positive_edit": 2}, "wrong: patch_compiles is false"),
        ({"patch_correct": False}, "wrong: patch_correct is false"),
        (
            {"tests_after": SuiteResult(status="fail", passed=1, failed=1, skipped=0)},
            "wrong: the patch turned a passing baseline into a failing after-run",
        ),
        ({"patch_applied": False, "unmigrated": 3}, "unsupported: patch_applied is false (nothing was written)"),
        ({"unmigrated": 4}, "partial: unmigrated 4 > 0"),
        ({}, "verified_success: every condition holds"),
        ({"human_edits": None}, "patched_unverified: human_edits is null (unanswered)"),
        ({"tests_after": SuiteResult(status="not_run")}, "patched_unverified: tests_after.status is not_run"),
        ({"tests_cover_change": False}, "patched_unverified: tests_cover_change is not true"),
    ],
)
def test_the_explanation_names_the_deciding_rule_and_agrees_with_tier(changes: dict[str, Any], said: str) -> None:
    m = verified(**changes)
    assert explain_tier(None, m) == said
    assert said.split(":", 1)[0] == tier(None, m)


def test_an_error_is_explained_by_its_step_and_reason() -> None:
    error = ErrorInfo(step="fetch", reason="fetch_failed", detail="x")
    assert explain_tier(error, Measurements()) == "error: fetch: fetch_failed"


def key() -> Case:
    rows = [
        CallSite(path="a.py", line=1, kind="import", symbol="google.generativeai", label="auto"),
        CallSite(path="a.py", line=5, kind="call", symbol="google.generativeai.configure", label="auto"),
    ]
    return Case(
        id="c",
        origin="corpus",
        control=False,
        split="dev",
        provider="gemini",
        change="x",
        ground_truth=GroundTruth(
            call_sites=rows,
            manifests=[ManifestRow(path="requirements.txt", line=1, symbol="google-generativeai", label="auto")],
            must_not_report=[ForbiddenPosition(path="b.py", line=2, why="the project's own genai module")],
        ),
    )


def test_unmigrated_rows_say_what_withheld_each() -> None:
    artefacts = Artefacts(
        findings=(Finding("b.py", 2, "import", "google.generativeai", "resolved", None),),
        edits=(PlanEdit("a.py", 1, "auto", "r1", None), PlanEdit("a.py", 5, "auto", "r2", None)),
        written=("a.py",),
        withheld=(Withheld("a.py", 5, "google.generativeai.configure", "conditional_binding"),),
        exit_code=0,
        model_used=False,
        llm_tokens_in=None,
        llm_tokens_out=None,
        llm_cost_usd=None,
    )
    record = Record(case="c", origin="corpus", control=False, split="dev", measurements=verified(unmigrated=2),
                    tier="partial")  # fmt: skip
    facts = case_facts(CaseInputs(round=2, run="r", imported=False, record=record, key=key(), graded_facts=artefacts))
    assert facts.rows_source == "graded_facts" and facts.state_counts() == {
        "migrated": 1, "withheld": 1, "derived": 0, "missed": 1,
    }  # fmt: skip
    rows = unmigrated_rows(facts)
    assert rows == [
        {"path": "a.py", "line": 5, "symbol": "google.generativeai.configure", "withheld_by": "conditional_binding"},
        {
            "path": "requirements.txt",
            "line": 1,
            "symbol": "google-generativeai",
            "withheld_by": "no applied edit landed on its line",
        },
    ]
    assert facts.forbidden == (Forbidden("b.py", 2, "import", "google.generativeai", "the project's own genai module"),)


JUNIT = (
    '<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests">'
    '<testsuite name="pytest" errors="0" failures="0" skipped="0" tests="2">\n'
    '<testcase classname="cases.cases.yaml" name="a__x" time="1">'
    '<properties><property name="tier" value="error" /></properties></testcase>\n'
    '<testcase classname="cases.cases.yaml" name="b__y" time="1">'
    '<properties><property name="tier" value="partial" /></properties></testcase>\n'
    '<testcase classname="tests.test_unit" name="a__x" time="1" />\n'
    "</testsuite></testsuites>"
)


def test_junit_gets_an_error_element_and_the_case_file_classname(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_text(JUNIT, encoding="utf-8")
    error = ErrorInfo(step="install", reason="install_failed", detail="exit 1 <see log>")
    records = {
        "a__x": Record(
            case="a__x",
            origin="corpus",
            control=False,
            split="dev",
            error=error,
            measurements=Measurements(),
            tier="error",
        ),
        "b__y": Record(
            case="b__y",
            origin="corpus",
            control=False,
            split="dev",
            measurements=verified(unmigrated=1),
            tier="partial",
        ),
    }
    assert rewrite_junit(path, records, "cases") == 1
    root = ET.parse(path).getroot()
    suite = root.find("testsuite")
    assert suite is not None and suite.get("errors") == "1"
    cases = list(root.iter("testcase"))
    assert [c.get("classname") for c in cases] == ["cases", "cases", "tests.test_unit"]
    element = cases[0].find("error")
    assert element is not None and element.get("message") == "install: install_failed"
    assert element.text == "step: install\nreason: install_failed\ndetail: exit 1 <see log>"
    assert cases[1].find("error") is None and cases[2].find("error") is None
    assert rewrite_junit(path, records, "cases") == 0  # idempotent
    assert rewrite_junit(tmp_path / "missing.xml", records, "cases") == 0
