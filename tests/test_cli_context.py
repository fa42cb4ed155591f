"""Commands that find their context, or say in one line what they need, through the console script."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_obelize_bench.casefile.cases import load_case_file
from pytest_obelize_bench.records.review_drift import review_drift
from pytest_obelize_bench.report.round.publish_round import publish_round
from tests.helpers import casefile, promotion_runs
from tests.helpers.bench_cli import obelize_bench
from tests.helpers.project import PROJECT
from tests.helpers.runs import all_cases, make_run


def run(*args: str) -> tuple[int, list[str]]:
    code, out = obelize_bench(*args)
    return code, out.splitlines()


def test_check_cases_on_a_file_it_cannot_read_is_one_line_and_status_2(tmp_path: Path) -> None:
    code, lines = run("check-cases", str(tmp_path / "nope.yaml"))
    assert code == 2 and lines == [f"obelize-bench check-cases: {tmp_path / 'nope.yaml'}: missing"]
    (tmp_path / "bad.yaml").write_text("a: [\n", encoding="utf-8")
    code, lines = run("check-cases", str(tmp_path / "bad.yaml"))
    assert code == 2 and len(lines) == 1 and "is not valid YAML" in lines[0]


def test_show_offers_the_case_id_a_half_or_a_slip_meant(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(PROJECT)
    for given in ("navamai", "navamia__navamai"):
        code, lines = run("show", given, "--round", "1")
        assert code == 2 and lines[-1].endswith("; did you mean navamai__navamai?"), lines
    code, lines = run("show", "zzzzzz", "--round", "1")
    assert code == 2 and "did you mean" not in lines[-1]


@pytest.mark.parametrize("command", [["runs"], ["show", "navamai__navamai"], ["summarize", "--check"]])
def test_from_another_folder_a_command_says_to_run_from_the_project_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code, lines = run(*command)
    assert code == 2 and len(lines) == 1
    assert f"no cases/cases.yaml and no results/ in {tmp_path}: run it from the project root" in lines[0]
    assert not (tmp_path / "results").exists()


def test_publishing_the_imported_round_or_a_published_run_says_so_and_rewrites_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(PROJECT)
    code, lines = run("publish", "--round", "1", "--run", "imported-upstream")
    assert code == 0 and lines == [
        "run imported-upstream is round 1's imported run: its records were published when it was imported "
        "(they live in the round folder, not the run folder); nothing to publish"
    ]
    case_file = load_case_file(casefile.write(tmp_path / "cases" / "cases.yaml", casefile.standard()))
    results = tmp_path / "results"
    run_id = make_run(results, case_file, all_cases(case_file))
    assert publish_round(results, case_file, 2, run_id).published
    before = {p: p.stat().st_mtime_ns for p in results.rglob("*") if p.is_file()}
    code, lines = run("publish", "--round", "2", "--run", run_id, "--results", str(results),
                      "--cases", str(case_file.path))  # fmt: skip
    assert code == 0 and lines[-1].startswith(f"run {run_id} is already round 2's published run (published at ")
    assert {p: p.stat().st_mtime_ns for p in results.rglob("*") if p.is_file()} == before


def test_summarize_with_another_results_folder_uses_the_case_file_it_was_published_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``summarize --check --results DIR`` without --cases: DIR's own case file, not the project's."""
    case_file = load_case_file(casefile.write(tmp_path / "elsewhere" / "cases" / "cases.yaml", casefile.standard()))
    results = tmp_path / "elsewhere" / "results"
    assert publish_round(results, case_file, 2, make_run(results, case_file, all_cases(case_file))).published
    monkeypatch.chdir(PROJECT)
    code, lines = run("summarize", "--check", "--results", str(results))
    assert code == 0, lines
    assert lines[0] == f"case file: {case_file.path} (round 2 of {results} was published from it)"


def test_a_review_filed_after_publication_makes_the_check_fail_until_the_round_is_regraded(tmp_path: Path) -> None:
    case_file = load_case_file(casefile.write(tmp_path / "cases" / "cases.yaml", casefile.standard()))
    first = case_file.cases[0].id
    digest = "c0" * 32
    records = all_cases(case_file)
    patched = records[0].model_copy(
        update={
            "measurements": records[0].measurements.model_copy(update={"patch_applied": True, "patch_compiles": True}),
            "provenance": records[0].provenance.model_copy(update={"patch_sha256": digest}),
            "tier": "partial",
        }
    )
    results = tmp_path / "results"
    assert publish_round(results, case_file, 2, make_run(results, case_file, [patched, *records[1:]])).published
    code, lines = run("summarize", "--check", "--results", str(results), "--cases", str(case_file.path))
    assert code == 0, lines
    promotion_runs.add_reviews(tmp_path, [(first, digest)])  # cases/reviews/round-2.yaml beside the case file
    code, lines = run("summarize", "--check", "--results", str(results), "--cases", str(case_file.path))
    assert code == 1
    assert (
        f"obelize-bench summarize --check: round 2: {first}: the reviews file says human_edits 0, patch_correct "
        "true of its patch, the published record human_edits null, patch_correct null: run `obelize-bench regrade "
        "--round 2 --write`"
    ) in lines
    assert review_drift(2, {first: patched}, {}) == []  # unreviewed on both sides: nothing drifted
