"""``errors check``: round 1 passes; each rule, broken on purpose, gives its one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_obelize_bench.error_analysis.check import check_review, reference_problems
from pytest_obelize_bench.error_analysis.commands import adrs_in, gaps_in
from pytest_obelize_bench.error_analysis.review import ReviewFile
from pytest_obelize_bench.error_analysis.states import Analysis, analyse
from tests.helpers.bench_cli import obelize_bench
from tests.helpers.error_rounds import REVIEW_1, round_1, round_1_copy
from tests.helpers.project import PROJECT

SOURCE = "cases/errors-round-1.yaml"


def review(**changes: Any) -> ReviewFile:
    data = yaml.safe_load(REVIEW_1.read_text(encoding="utf-8"))
    for key, value in changes.items():
        data[key] = value(data[key]) if callable(value) else value
    return ReviewFile.model_validate(data)


def without(mapping: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if k != key}


def analysis_for(current: ReviewFile) -> Analysis:
    """Round 1 as the check sees it with this reviewer file: its misses name the missed rows' causes."""
    base = round_1()
    misses = {(m.case, m.path, m.line, m.symbol): m.cause for m in current.misses}
    from pytest_obelize_bench.casefile.cases import load_case_file
    from pytest_obelize_bench.error_analysis.collected import read_collected

    collected = read_collected(PROJECT / "results" / "errors" / "round-1.json")
    cases = [c for c in load_case_file(PROJECT / "cases" / "cases.yaml").cases if c.id in collected.cases]
    analysis = analyse(1, cases, collected, misses, current.unexpected)
    assert analysis.counts == base.counts
    return analysis


def test_round_1_passes() -> None:
    assert check_review(review(), round_1(), SOURCE) == []


def test_a_cause_with_no_disposition() -> None:
    problems = check_review(review(causes=lambda c: without(c, "local_import")), round_1(), SOURCE)
    assert problems == [
        (
            f"{SOURCE}: cause 'local_import' (withheld, 18 rows in ImprintLab__Medical-Graph-RAG, "
            "LotusSerene__Gemini-Novel-Maker, LucasHJin__vit and 2 more) has no disposition"
        )
    ]


def test_a_disposition_with_no_cause() -> None:
    extra = {"class": "withheld", "disposition": "limitation", "recorded": "ADR-099", "why": "Never seen."}
    problems = check_review(review(causes=lambda c: {**c, "lazy_import": extra}), round_1(), SOURCE)
    assert problems == [f"{SOURCE}: causes.lazy_import: has a disposition but no row of round 1 has this cause"]


def test_misses_must_be_exactly_the_missed_rows() -> None:
    def swap(misses: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [*misses[1:], {**misses[0], "line": 41}]

    current = review(misses=swap)
    problems = check_review(current, analysis_for(current), SOURCE)
    assert (
        f"{SOURCE}: misses: round 1 missed AmineChr54__CleanVision-Futury_AI-Hackathon:"
        "backend/data/gemini_helpers.py:40:google.generativeai.types.Model.supported_generation_methods, "
        "which has no entry"
    ) in problems
    assert (
        f"{SOURCE}: misses: AmineChr54__CleanVision-Futury_AI-Hackathon:backend/data/gemini_helpers.py:41:"
        "google.generativeai.types.Model.supported_generation_methods is not a row round 1 missed"
    ) in problems
    # its only row lost its cause, so attribute_read_via_getattr is a disposition with no cause now
    assert (
        f"{SOURCE}: causes.attribute_read_via_getattr: has a disposition but no row of round 1 has this cause"
        in problems
    )
    assert len(problems) == 3


def test_a_miss_listed_twice_is_one_too_many() -> None:
    problems = check_review(review(misses=lambda m: [*m, m[0]]), round_1(), SOURCE)
    assert len(problems) == 1 and "is not a row round 1 missed" in problems[0]


@pytest.mark.parametrize(
    "cause,recorded,form",
    [
        ("local_import", "ADR-028", "COVERAGE N"),
        ("multiple_configure_calls", "COVERAGE 20", "ADR-NNN"),
        ("file_not_fully_migrated", "ADR-10", "ADR-NNN"),
        ("chained_constructor_one_row", "COVERAGE 125", "COVERAGE N"),
    ],
)
def test_a_reference_of_the_wrong_form(cause: str, recorded: str, form: str) -> None:
    def change(causes: dict[str, Any]) -> dict[str, Any]:
        return {**causes, cause: {**causes[cause], "recorded": recorded}}

    problems = check_review(review(causes=change), round_1(), SOURCE)
    disposition = review().causes[cause].disposition
    assert problems == [f"{SOURCE}: causes.{cause}.recorded: a {disposition} is recorded as {form!r}, not {recorded!r}"]


def test_a_class_the_round_does_not_show() -> None:
    def change(causes: dict[str, Any]) -> dict[str, Any]:
        return {**causes, "local_import": {**causes["local_import"], "class": "derived"}}

    assert check_review(review(causes=change), round_1(), SOURCE) == [
        f"{SOURCE}: causes.local_import.class: is derived, but round 1 shows it as withheld"
    ]


def test_unexpected_findings_must_each_have_a_cause() -> None:
    key = "ImprintLab__Medical-Graph-RAG:camel/utils/token_counting.py:422"
    problems = check_review(
        review(
            unexpected=lambda u: {**without(u, key), "ImprintLab__Medical-Graph-RAG:x.py:1": "method_name_collision"}
        ),
        round_1(),
        SOURCE,
    )
    assert problems == [
        f"{SOURCE}: unexpected: {key} is a finding no key row claims, and it has no cause",
        f"{SOURCE}: unexpected.ImprintLab__Medical-Graph-RAG:x.py:1: round 1 has no unclaimed finding there",
    ]


def test_the_round_number_must_match() -> None:
    assert check_review(review(round=2), round_1(), SOURCE) == [
        f"{SOURCE}: round is 2, but it is round 1's reviewer file"
    ]


# -- an obelize checkout ---------------------------------------------------------------------------


def fake_obelize(root: Path, adrs: list[str], coverage: str) -> Path:
    for name in adrs:
        path = root / "docs" / "adr" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("# decision\n", encoding="utf-8")
    listing = root / "tests" / "fixtures" / "scan" / "COVERAGE.md"
    listing.parent.mkdir(parents=True, exist_ok=True)
    listing.write_text(coverage, encoding="utf-8")
    return root


def test_gaps_and_adrs_are_read_from_the_checkout(tmp_path: Path) -> None:
    root = fake_obelize(tmp_path, ["ADR-010-atomicity.md", "ADR-019.md", "notes.md"], "")
    (tmp_path / "docs" / "ADR-1234.md").write_text("", encoding="utf-8")
    assert adrs_in(root) == {"ADR-010", "ADR-019"}
    text = (
        "# Coverage\n\n1. open one\n2. ~~closed by a rule~~\n"
        "| 28 | local imports |\n- 29: closed in 0.3.0\n## 30. double names\n"
    )
    assert gaps_in(text) == {1: True, 2: False, 28: True, 29: False, 30: True}


def test_references_must_exist_and_gaps_be_open(tmp_path: Path) -> None:
    current = review()
    adrs = {entry.recorded for entry in current.causes.values() if entry.disposition == "limitation"} - {"ADR-031"}
    gaps = {
        int(entry.recorded.split()[1]): True for entry in current.causes.values() if entry.disposition != "limitation"
    }
    gaps[28] = False
    del gaps[33]
    problems = reference_problems(current, SOURCE, adrs, gaps, "../obelize")
    assert problems == [
        f"{SOURCE}: causes.configure_consumed_elsewhere.recorded: ADR-031 does not exist in ../obelize",
        f"{SOURCE}: causes.local_import.recorded: gap 28 is closed in ../obelize",
        f"{SOURCE}: causes.manifest_filename_case.recorded: ../obelize has no gap 33 in its coverage list",
        f"{SOURCE}: causes.usage_unmapped.recorded: ADR-031 does not exist in ../obelize",
    ]


# -- the command -----------------------------------------------------------------------------------


def run(*args: str) -> tuple[int, str]:
    return obelize_bench(*args)


def test_the_command_passes_on_the_project_and_fails_with_one_line_per_problem(tmp_path: Path) -> None:
    code, out = run(
        "errors", "check", "--cases", str(PROJECT / "cases" / "cases.yaml"), "--results", str(PROJECT / "results")
    )
    assert code == 0, out
    assert "277 key rows (25 migrated, 129 withheld, 98 derived, 25 missed)" in out

    cases, results = round_1_copy(tmp_path)
    data = yaml.safe_load((cases.parent / "errors-round-1.yaml").read_text(encoding="utf-8"))
    del data["causes"]["local_import"]
    data["causes"]["alias_collision"]["recorded"] = "ADR-031"
    (cases.parent / "errors-round-1.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    code, out = run("errors", "check", "--cases", str(cases), "--results", str(results))
    assert code == 1
    lines = out.strip().splitlines()
    assert len(lines) == 3 and lines[-1] == "round 1: 2 problems"
    assert "cause 'local_import'" in lines[0] and "causes.alias_collision.recorded" in lines[1]


def test_the_command_with_an_obelize_checkout(tmp_path: Path) -> None:
    cases, results = round_1_copy(tmp_path)
    current = review()
    adrs = sorted({e.recorded for e in current.causes.values() if e.disposition == "limitation"})
    gaps = sorted({int(e.recorded.split()[1]) for e in current.causes.values() if e.disposition != "limitation"})
    coverage = "".join(f"{n}. an open gap\n" for n in gaps if n != 22) + "22. ~~closed~~\n"
    checkout = fake_obelize(tmp_path / "obelize", [f"{a}-decision.md" for a in adrs], coverage)
    code, out = run("errors", "check", "--cases", str(cases), "--results", str(results), "--obelize", str(checkout))
    assert code == 1
    assert f"causes.attribute_read_via_getattr.recorded: gap 22 is closed in {checkout}" in out
    (checkout / COVERAGE).write_text("".join(f"{n}. open\n" for n in gaps), encoding="utf-8")
    code, out = run("errors", "check", "--cases", str(cases), "--results", str(results), "--obelize", str(checkout))
    assert code == 0 and "every reference exists" in out
    code, out = run(
        "errors", "check", "--cases", str(cases), "--results", str(results), "--obelize", str(tmp_path / "none")
    )
    assert code == 2 and "not a directory" in out


COVERAGE = Path("tests/fixtures/scan/COVERAGE.md")


def test_the_command_says_what_is_missing(tmp_path: Path) -> None:
    cases, results = round_1_copy(tmp_path)
    (results / "errors" / "round-1.json").unlink()
    code, out = run("errors", "check", "--cases", str(cases), "--results", str(results))
    assert code == 1 and "errors collect --round 1" in out
    code, out = run("errors", "check", "--round", "3", "--cases", str(cases), "--results", str(results))
    assert code == 1 and "round 3 has no reviewer file" in out
    (cases.parent / "errors-round-1.yaml").unlink()
    code, out = run("errors", "check", "--cases", str(cases), "--results", str(results))
    assert code == 0 and "nothing to check" in out
