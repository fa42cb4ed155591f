"""Every grading rule, pinned on small hand-built cases (protocol "Per-case result" and "A row")."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from pytest_obelize_bench.casefile.cases import (
    CallSite,
    Case,
    ForbiddenPosition,
    GroundTruth,
    ManifestRow,
    Review,
)
from pytest_obelize_bench.grading.grade import grade
from pytest_obelize_bench.grading.graded_facts import Artefacts, Finding, PlanEdit, Withheld
from pytest_obelize_bench.grading.record import Measurements, SuiteResult

IMPORT = "google.generativeai"
CONFIGURE = "google.generativeai.configure"
MODEL = "google.generativeai.GenerativeModel"
GENERATE = "google.generativeai.GenerativeModel.generate_content"
LEGACY = "google-generativeai"
NEW = "google-genai"

PASS = SuiteResult(status="pass", passed=3, failed=0, skipped=0)
NOT_RUN = SuiteResult()


def site(path: str, line: int, kind: str, symbol: str, label: str = "auto") -> CallSite:
    return CallSite(path=path, line=line, kind=kind, symbol=symbol, label=label)  # type: ignore[arg-type]


def pin(path: str, line: int, symbol: str = LEGACY) -> ManifestRow:
    return ManifestRow(path=path, line=line, symbol=symbol, label="auto")


def make_case(
    call_sites: Sequence[CallSite] = (),
    manifests: Sequence[ManifestRow] = (),
    must_not_report: Sequence[tuple[str, int]] = (),
    *,
    control: bool = False,
    review: Review | None = None,
    covers: bool = True,
) -> Case:
    return Case(
        id="owner__repo",
        origin="fixture",
        control=control,
        provider="gemini",
        change="google-generativeai-to-google-genai",
        ground_truth=GroundTruth(
            call_sites=list(call_sites),
            manifests=list(manifests),
            must_not_report=[ForbiddenPosition(path=p, line=n, why="trap") for p, n in must_not_report],
            tests_cover_change=covers,
        ),
        review=review,
    )


def found(path: str, line: int, kind: str, symbol: str | None, status: str = "eligible") -> Finding:
    return Finding(path=path, line=line, kind=kind, symbol=symbol, scan_status=status, bail=None)


def auto(path: str, line: int) -> PlanEdit:
    return PlanEdit(path=path, line=line, status="auto", rule_id="pack:rule", reason=None)


def held(path: str, line: int, reason: str = "file_not_fully_migrated") -> PlanEdit:
    return PlanEdit(path=path, line=line, status="needs_review", rule_id="pack:rule", reason=reason)


def arts(
    findings: Sequence[Finding] = (),
    edits: Sequence[PlanEdit] = (),
    written: Sequence[str] = (),
    withheld: Sequence[Withheld] = (),
    *,
    model_used: bool = False,
    tokens: tuple[int | None, int | None, float | None] = (None, None, None),
) -> Artefacts:
    return Artefacts(
        findings=tuple(findings),
        edits=tuple(edits),
        written=tuple(written),
        withheld=tuple(withheld),
        exit_code=6,
        model_used=model_used,
        llm_tokens_in=tokens[0],
        llm_tokens_out=tokens[1],
        llm_cost_usd=tokens[2],
    )


def measure(case: Case, artefacts: Artefacts | None, **kwargs: object) -> Measurements:
    options: dict[str, object] = {
        "baseline": PASS,
        "after": PASS,
        "patch_compiles": True,
        "runtime_seconds": 1.23456,
    }
    options.update(kwargs)
    return grade(case, artefacts, **options)  # type: ignore[arg-type]


# -- a complete migration -------------------------------------------------------------------


def test_complete_migration() -> None:
    case = make_case(
        [site("app.py", 1, "import", IMPORT), site("app.py", 3, "call", CONFIGURE)], [pin("requirements.txt", 1)]
    )
    artefacts = arts(
        [
            found("app.py", 1, "import", IMPORT),
            found("app.py", 3, "call", CONFIGURE),
            found("requirements.txt", 1, "manifest", LEGACY),
        ],
        [auto("app.py", 1), auto("app.py", 3), auto("requirements.txt", 1)],
        ["app.py", "requirements.txt"],
    )
    m = measure(case, artefacts)
    assert (m.detected, m.false_positive, m.missed_call_site, m.forbidden_reported) == (2, 0, 0, 0)
    assert (m.patch_applied, m.patch_compiles, m.unmigrated, m.false_positive_edit) == (True, True, 0, 0)
    assert m.tests_baseline == PASS and m.tests_after == PASS
    assert m.tests_cover_change is True
    assert (m.human_edits, m.patch_correct, m.pr_opened, m.pr_merged) == (None, None, None, None)
    assert m.runtime_seconds == 1.235
    assert (m.llm_tokens_in, m.llm_tokens_out, m.llm_cost_usd) == (0, 0, 0.0)


# -- detection ------------------------------------------------------------------------------


def test_right_line_wrong_symbol_is_one_false_positive_and_one_miss() -> None:
    case = make_case([site("app.py", 7, "call", MODEL)])
    m = measure(case, arts([found("app.py", 7, "call", CONFIGURE)]))
    assert (m.detected, m.false_positive, m.missed_call_site) == (1, 1, 1)


def test_right_symbol_wrong_kind_is_one_false_positive_and_one_miss() -> None:
    case = make_case([site("app.py", 7, "call", MODEL)])
    m = measure(case, arts([found("app.py", 7, "attribute", MODEL)]))
    assert (m.detected, m.false_positive, m.missed_call_site) == (1, 1, 1)


@pytest.mark.parametrize("status", ["eligible", "needs_review", "unsupported"])
def test_findings_of_any_scan_status_are_detected(status: str) -> None:
    case = make_case([site("app.py", 1, "import", IMPORT)])
    m = measure(case, arts([found("app.py", 1, "import", IMPORT, status)]))
    assert (m.detected, m.false_positive, m.missed_call_site) == (1, 0, 0)


@pytest.mark.parametrize("kind", ["text_mention", "manifest", "dynamic", "star_import", "parse_error"])
def test_non_actionable_findings_are_not_detected(kind: str) -> None:
    case = make_case([site("app.py", 1, "import", IMPORT)])
    m = measure(case, arts([found("app.py", 2, kind, IMPORT if kind != "parse_error" else None)]))
    assert (m.detected, m.false_positive, m.missed_call_site) == (0, 0, 1)


def test_rows_are_multisets() -> None:
    key = [site("app.py", 5, "method_call", GENERATE), site("app.py", 5, "method_call", GENERATE)]
    m = measure(make_case(key), arts([found("app.py", 5, "method_call", GENERATE)]))
    assert (m.detected, m.false_positive, m.missed_call_site) == (1, 0, 1)
    m = measure(make_case(key[:1]), arts([found("app.py", 5, "method_call", GENERATE)] * 3))
    assert (m.detected, m.false_positive, m.missed_call_site) == (3, 2, 0)


def test_a_dynamic_key_row_is_neither_detected_nor_missed() -> None:
    case = make_case([site("app.py", 4, "dynamic", IMPORT, "manual")])
    m = measure(case, arts([found("app.py", 4, "dynamic", IMPORT)]))
    assert (m.detected, m.false_positive, m.missed_call_site) == (0, 0, 0)


def test_no_findings() -> None:
    m = measure(make_case([site("app.py", 1, "import", IMPORT)]), arts())
    assert (m.detected, m.false_positive, m.missed_call_site) == (0, 0, 1)


# -- must_not_report ------------------------------------------------------------------------


def test_a_text_mention_at_a_forbidden_position_is_forbidden_but_not_a_false_positive() -> None:
    case = make_case([site("app.py", 1, "import", IMPORT)], must_not_report=[("tests/test_app.py", 7)])
    artefacts = arts(
        [found("app.py", 1, "import", IMPORT), found("tests/test_app.py", 7, "text_mention", MODEL, "needs_review")]
    )
    m = measure(case, artefacts)
    assert (m.forbidden_reported, m.false_positive, m.detected) == (1, 0, 1)


def test_an_actionable_finding_at_a_forbidden_position_is_both() -> None:
    case = make_case(must_not_report=[("own/genai.py", 3)])
    m = measure(case, arts([found("own/genai.py", 3, "call", CONFIGURE)]))
    assert (m.forbidden_reported, m.false_positive) == (1, 1)


def test_forbidden_is_counted_per_finding_of_any_kind() -> None:
    case = make_case(must_not_report=[("notes.py", 5), ("notes.py", 5)])
    artefacts = arts(
        [
            found("notes.py", 5, "text_mention", IMPORT),
            found("notes.py", 5, "manifest", LEGACY),
            found("notes.py", 6, "text_mention", IMPORT),
        ]
    )
    assert measure(case, artefacts).forbidden_reported == 2


# -- edits, unmigrated, false_positive_edit -------------------------------------------------


def test_requirements_line_with_an_applied_add_beside_a_withheld_legacy_pin_is_unmigrated() -> None:
    case = make_case([site("app.py", 1, "import", IMPORT)], [pin("requirements.txt", 1)])
    artefacts = arts(
        [
            found("app.py", 1, "import", IMPORT),
            found("requirements.txt", 1, "manifest", NEW),
            found("requirements.txt", 1, "manifest", LEGACY, "needs_review"),
        ],
        [auto("app.py", 1), auto("requirements.txt", 1), held("requirements.txt", 1, "repo_not_fully_migrated")],
        ["app.py", "requirements.txt"],
        [Withheld("requirements.txt", 1, LEGACY, "repo_not_fully_migrated")],
    )
    m = measure(case, artefacts)
    assert m.unmigrated == 1
    assert m.false_positive_edit == 0
    assert m.patch_applied is True


def test_withheld_row_is_matched_on_path_line_and_symbol() -> None:
    case = make_case([], [pin("requirements.txt", 1)])
    artefacts = arts(
        edits=[auto("requirements.txt", 1)],
        written=["requirements.txt"],
        withheld=[Withheld("requirements.txt", 1, "some-other-dist", "repo_not_fully_migrated")],
    )
    assert measure(case, artefacts).unmigrated == 0


def test_two_auto_edits_on_a_line_with_one_key_row_are_one_false_positive_edit() -> None:
    case = make_case([site("app.py", 3, "call", CONFIGURE)])
    artefacts = arts([found("app.py", 3, "call", CONFIGURE)], [auto("app.py", 3), auto("app.py", 3)], ["app.py"])
    m = measure(case, artefacts)
    assert m.false_positive_edit == 1
    assert m.unmigrated == 0


def test_two_key_rows_on_one_line_absorb_two_edits() -> None:
    case = make_case([site("app.py", 3, "call", MODEL), site("app.py", 3, "method_call", GENERATE)])
    artefacts = arts(edits=[auto("app.py", 3), auto("app.py", 3)], written=["app.py"])
    assert measure(case, artefacts).false_positive_edit == 0


def test_an_auto_edit_in_a_file_obelize_did_not_write_has_not_landed() -> None:
    case = make_case([site("app.py", 1, "import", IMPORT), site("other.py", 2, "import", IMPORT)])
    artefacts = arts(
        edits=[auto("app.py", 1), auto("other.py", 2), auto("stray.py", 9)],
        written=["app.py"],
    )
    m = measure(case, artefacts)
    assert m.unmigrated == 1  # other.py:2 was planned but not written
    assert m.false_positive_edit == 0  # stray.py:9 never landed either
    assert m.patch_applied is True


def test_an_auto_edit_off_the_key_is_a_false_positive_edit() -> None:
    case = make_case([site("app.py", 1, "import", IMPORT)])
    artefacts = arts(edits=[auto("app.py", 1), auto("app.py", 2)], written=["app.py"])
    assert measure(case, artefacts).false_positive_edit == 1


def test_a_needs_review_edit_never_lands() -> None:
    case = make_case([site("app.py", 1, "import", IMPORT)])
    artefacts = arts(edits=[held("app.py", 1)], written=["app.py"])
    m = measure(case, artefacts)
    assert (m.unmigrated, m.false_positive_edit) == (1, 0)


def test_unmigrated_counts_dynamic_rows_and_manifests() -> None:
    case = make_case(
        [site("app.py", 1, "import", IMPORT), site("app.py", 9, "dynamic", IMPORT, "manual")],
        [pin("requirements.txt", 1), pin("pyproject.toml", 8)],
    )
    artefacts = arts(edits=[auto("app.py", 1), auto("requirements.txt", 1)], written=["app.py", "requirements.txt"])
    assert measure(case, artefacts).unmigrated == 2


def test_a_withheld_row_on_a_line_with_a_landed_edit_is_unmigrated() -> None:
    case = make_case([site("app.py", 3, "call", MODEL), site("app.py", 3, "method_call", GENERATE)])
    artefacts = arts(
        edits=[auto("app.py", 3)],
        written=["app.py"],
        withheld=[Withheld("app.py", 3, GENERATE, "receiver_unresolved")],
    )
    assert measure(case, artefacts).unmigrated == 1


def test_nothing_written() -> None:
    case = make_case([site("app.py", 1, "import", IMPORT)], [pin("requirements.txt", 1)])
    artefacts = arts([found("app.py", 1, "import", IMPORT, "needs_review")], [held("app.py", 1)])
    m = measure(case, artefacts, patch_compiles=None)
    assert (m.patch_applied, m.patch_compiles, m.unmigrated, m.false_positive_edit) == (False, None, 2, 0)


def test_on_a_control_every_landed_edit_counts() -> None:
    control = make_case(control=True, covers=False)
    artefacts = arts(
        [found("app.py", 1, "import", IMPORT)],
        [auto("app.py", 1), auto("app.py", 1), auto("requirements.txt", 1), auto("unwritten.py", 1)],
        ["app.py", "requirements.txt"],
    )
    m = measure(control, artefacts)
    assert (m.false_positive_edit, m.unmigrated, m.false_positive, m.missed_call_site) == (3, 0, 1, 0)


def test_a_control_that_writes_nothing() -> None:
    m = measure(make_case(control=True, covers=False), arts())
    assert (m.false_positive_edit, m.unmigrated, m.patch_applied, m.detected) == (0, 0, False, 0)


# -- what is copied, and the nulls ----------------------------------------------------------


def test_the_patch_s_review_answers_are_copied() -> None:
    case = make_case([site("app.py", 1, "import", IMPORT)])
    m = measure(case, arts(), review=Review(human_edits=0, patch_correct=True))
    assert (m.human_edits, m.patch_correct) == (0, True)
    m = measure(case, arts(), review=Review(human_edits=2))
    assert (m.human_edits, m.patch_correct) == (2, None)


def test_an_answer_on_the_case_row_is_never_applied_to_a_patch() -> None:
    case = make_case([site("app.py", 1, "import", IMPORT)], review=Review(human_edits=0, patch_correct=True))
    m = measure(case, arts())
    assert (m.human_edits, m.patch_correct) == (None, None)


def test_tests_cover_change_comes_from_the_key() -> None:
    assert measure(make_case(covers=False), arts()).tests_cover_change is False


def test_suites_and_compile_are_kept_as_given() -> None:
    after = SuiteResult(status="fail", passed=1, failed=2, skipped=0)
    m = measure(make_case(), arts(), baseline=NOT_RUN, after=after, patch_compiles=False, runtime_seconds=None)
    assert (m.tests_baseline, m.tests_after, m.patch_compiles, m.runtime_seconds) == (NOT_RUN, after, False, None)


def test_a_model_run_reports_what_the_folder_says() -> None:
    m = measure(make_case(), arts(model_used=True, tokens=(100, 20, None)))
    assert (m.llm_tokens_in, m.llm_tokens_out, m.llm_cost_usd) == (100, 20, None)
    m = measure(make_case(), arts(model_used=True, tokens=(None, None, 0.5)))
    assert (m.llm_tokens_in, m.llm_tokens_out, m.llm_cost_usd) == (None, None, 0.5)


def test_null_artefacts_give_nulls_never_zeros() -> None:
    case = make_case(
        [site("app.py", 1, "import", IMPORT)],
        [pin("requirements.txt", 1)],
    )
    baseline = SuiteResult(status="pass", passed=4, failed=0, skipped=1)
    review = Review(human_edits=0, patch_correct=True)
    m = measure(case, None, baseline=baseline, after=NOT_RUN, patch_compiles=True, runtime_seconds=900.0, review=review)
    for field in (
        "detected",
        "false_positive",
        "missed_call_site",
        "forbidden_reported",
        "patch_applied",
        "patch_compiles",
        "unmigrated",
        "false_positive_edit",
        "llm_tokens_in",
        "llm_tokens_out",
        "llm_cost_usd",
        "pr_opened",
        "pr_merged",
    ):
        assert getattr(m, field) is None, field
    assert m.tests_baseline == baseline and m.tests_after == NOT_RUN
    assert (m.tests_cover_change, m.human_edits, m.patch_correct, m.runtime_seconds) == (True, 0, True, 900.0)


def test_grade_is_pure() -> None:
    case = make_case([site("app.py", 1, "import", IMPORT)])
    artefacts = arts([found("app.py", 1, "import", IMPORT)], [auto("app.py", 1)], ["app.py"])
    assert measure(case, artefacts) == measure(case, artefacts)
    assert artefacts.findings == (found("app.py", 1, "import", IMPORT),)
