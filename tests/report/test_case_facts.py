"""A case's facts: where its rows come from, and the reason given for whatever is missing, each
chosen from the data; and round 1's records read with its error analysis."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_obelize_bench.casefile.cases import CallSite, Case, GroundTruth, ManifestRow, load_case_file
from pytest_obelize_bench.casefile.schema import Review
from pytest_obelize_bench.error_analysis.collected import CollectedCase, collect_case
from pytest_obelize_bench.grading.graded_facts import Artefacts, Finding, PlanEdit, Withheld
from pytest_obelize_bench.grading.record import ErrorInfo, Provenance, Record, SuiteResult
from pytest_obelize_bench.report.case_facts import CaseInputs, case_facts
from pytest_obelize_bench.report.case_reading import round_case_facts
from tests.helpers.measurements import verified
from tests.helpers.project import PROJECT

NOT_RUN = SuiteResult(status="not_run")


def key(license: str | None = "MIT", control: bool = False) -> Case:
    rows = [CallSite(path="a.py", line=1, kind="import", symbol="google.generativeai", label="auto")]
    pins = [ManifestRow(path="r.txt", line=1, symbol="google-generativeai", label="auto")]
    return Case(
        id="c", origin="corpus", control=control, split=None if control else "dev", provider="gemini", change="x",
        license=license,
        ground_truth=GroundTruth(call_sites=[] if control else rows, manifests=[] if control else pins),
    )  # fmt: skip


def record(sha: str | None = "c" * 64, error: ErrorInfo | None = None, control: bool = False, **m: Any) -> Record:
    return Record(
        case="c", origin="corpus", control=control, split=None if control else "dev", error=error,
        measurements=verified(human_edits=None, **m), tier="error" if error else "patched_unverified",
        provenance=Provenance(patch_sha256=sha),
    )  # fmt: skip


FACTS = Artefacts(
    findings=(Finding("a.py", 1, "import", "google.generativeai", "eligible", None),
              Finding("r.txt", 1, "manifest", "google-generativeai", "eligible", None)),
    edits=(PlanEdit("a.py", 1, "auto", "r", None),),
    written=("a.py",),
    withheld=(Withheld("r.txt", 1, "google-generativeai", "repo_not_fully_migrated", ()),),
    exit_code=6, model_used=False, llm_tokens_in=None, llm_tokens_out=None, llm_cost_usd=None, run_id="run",
)  # fmt: skip


def facts(rec: Record | None = None, **inputs: Any) -> Any:
    given: dict[str, Any] = {"round": 2, "run": "r", "imported": False, "record": rec or record(), "key": key()}
    return case_facts(CaseInputs(**{**given, **inputs}))


def test_the_graded_facts_beside_the_record_win_over_the_error_analysis() -> None:
    other = CollectedCase(run_id="x", exit_code=0, applied=[], findings=[], withheld=[])
    both = facts(graded_facts=FACTS, collected=other, collected_name="results/errors/round-2.json")
    assert both.rows_source == "graded_facts" and both.collected_name is None
    assert [row.state for row in both.rows] == ["migrated", "derived"] and both.applied == (("a.py", 1),)
    only = facts(collected=collect_case(FACTS, "x"), collected_name="results/errors/round-2.json")
    assert only.rows_source == "error_analysis" and only.rows == both.rows
    assert only.collected_name == "results/errors/round-2.json"
    assert facts().rows is None and facts().applied is None and facts().state_counts() is None


def test_the_evidence_grades_the_record_again_and_says_where_it_disagrees() -> None:
    agrees = facts(record(unmigrated=1, detected=1, manifest_reported=1), graded_facts=FACTS)
    assert agrees.regraded is not None and agrees.disagreements() == []
    off = facts(record(unmigrated=2, detected=1), graded_facts=FACTS)
    assert off.disagreements() == ["unmigrated: the record 2, the evidence 1"]


@pytest.mark.parametrize(
    ("rec", "inputs", "absent"),
    [
        (record(patch_applied=False), {}, "nothing_written"),
        (record(error=ErrorInfo(step="fix", reason="obelize_failed", detail=""), patch_applied=None), {}, "errored"),
        (record(), {"imported": True, "key": key("AGPL-3.0")}, "imported"),
        (record(), {"key": key("AGPL-3.0")}, "licence"),
        (record(), {}, "not_kept"),
        (record(), {"patch": "--- a/a.py\n"}, None),
    ],
)
def test_the_reason_for_no_patch_is_chosen_from_the_data(rec: Record, inputs: dict[str, Any], absent: str) -> None:
    assert facts(rec, **inputs).patch_absent == absent


@pytest.mark.parametrize(
    ("suites", "inputs", "absent"),
    [
        ({"tests_baseline": NOT_RUN, "tests_after": NOT_RUN}, {"imported": True}, "no_suite"),
        ({}, {"imported": True}, "imported"),
        ({}, {"key": key("GPL-3.0")}, "licence"),
        ({}, {}, "not_kept"),
        ({}, {"tails": {"baseline": "3 passed"}}, None),
    ],
)
def test_the_reason_for_no_log_tail_is_chosen_from_the_data(
    suites: dict[str, Any], inputs: dict[str, Any], absent: str
) -> None:
    assert facts(record(**suites), **inputs).tails_absent == absent


def test_a_written_patch_without_a_digest_cannot_be_reviewed_one_with_one_awaits_its_review() -> None:
    assert facts(record(sha=None), imported=True).review_absent == "no_digest"
    assert facts(record(sha=None, patch_applied=False)).review_absent == "nothing_written"
    assert facts(record()).review_absent is None
    answered = Review(human_edits=0, patch_correct=True, reviewer="r", reviewed_at="2026-12-01")
    assert facts(record(), review=answered).review_absent is None


def test_a_control_whose_record_predates_pin_counts_is_shown_to_hold_by_its_evidence() -> None:
    control = record(control=True, detected=0, patch_applied=False, false_positive_edit=0, unmigrated=0)
    nothing = CollectedCase(run_id="x", exit_code=0, applied=[], findings=[], withheld=[])
    assert facts(control, key=key(control=True)).held is None  # the record cannot show it
    held = facts(control, key=key(control=True), collected=nothing, collected_name="results/errors/round-1.json")
    assert held.held is True and held.filled == ("manifest_reported",) and held.rows == ()
    assert held.completed.measurements.manifest_reported == 0 and control.measurements.manifest_reported is None


def test_round_1_is_read_with_its_error_analysis_rows_patches_and_reasons() -> None:
    case_file = load_case_file(PROJECT / "cases" / "cases.yaml")
    published = round_case_facts(PROJECT / "results", case_file, 1)
    firsts = [attempts[0] for attempts in published.values()]
    assert len(firsts) == 23 and all(f.imported and f.run == "imported-upstream" for f in firsts)
    graded = [f for f in firsts if not f.record.control]
    assert all(f.rows_source == "error_analysis" and f.disagreements() == [] for f in graded)
    assert sum(len(f.rows or ()) for f in graded) == 277
    assert sum((f.state_counts() or {})["migrated"] for f in graded) == 25
    written = sorted(f.case_id for f in firsts if f.record.measurements.patch_applied)
    assert len(written) == 6 and all(published[c][0].review_absent == "no_digest" for c in written)
    assert {f.patch_absent for f in firsts} == {"imported", "nothing_written"}
    ran = [f for f in firsts if f.record.measurements.tests_baseline.status != "not_run"]
    assert len(ran) == 4 and {f.tails_absent for f in ran} == {"imported"}
    assert all(f.held is True for f in firsts if f.record.control)
