"""``errors collect`` from a round's stored records and graded facts, and the figures the
results document and summary.json then carry."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_obelize_bench.error_analysis.collected import read_collected
from pytest_obelize_bench.grading.graded_facts import Artefacts, Finding, PlanEdit, Withheld, artefacts_to_json
from pytest_obelize_bench.grading.record import ErrorInfo, Measurements, Provenance, Record
from pytest_obelize_bench.records.runs import RunManifest, write_manifest
from tests.helpers.bench_cli import obelize_bench
from tests.helpers.error_rounds import round_1_copy

PACK = "5017c6856ceb122c86fd13377b2ee4e8156741433d484ad46aa1ea4c97f728f7"


def record(case: str, *, error: bool = False, version: str = "0.8.0") -> Record:
    return Record(
        case=case,
        origin="corpus",
        control=False,
        split="dev",
        error=ErrorInfo(step="venv", reason="venv_failed", detail="no interpreter") if error else None,
        measurements=Measurements(),
        provenance=Provenance(obelize_version=version, pack_sha256=PACK),
        tier="error" if error else "partial",
    )


def facts(run_id: str | None = "20261203T100000Z-0000abcd", bail: str = "local_import") -> Artefacts:
    return Artefacts(
        findings=(
            Finding("a.py", 1, "import", "google.generativeai", "needs_review", bail, "alias_resolved"),
            Finding("b.py", 1, "import", "google.generativeai", "eligible", None, "alias_resolved"),
        ),
        edits=(PlanEdit("b.py", 1, "auto", "p:import", None),),
        written=("b.py",),
        withheld=(Withheld("a.py", 1, "google.generativeai", bail),),
        exit_code=6,
        model_used=False,
        llm_tokens_in=None,
        llm_tokens_out=None,
        llm_cost_usd=None,
        run_id=run_id,
    )


def store(folder: Path, case: str, rec: Record, artefacts: Artefacts | None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{case}.json").write_text(rec.to_json(), encoding="utf-8")
    if artefacts is not None:
        (folder / "artefacts").mkdir(exist_ok=True)
        (folder / "artefacts" / f"{case}.json").write_text(artefacts_to_json(artefacts), encoding="utf-8")


def collect(results: Path, *extra: str) -> tuple[int, str]:
    return obelize_bench("errors", "collect", "--round", "3", "--results", results, *extra)


@pytest.fixture
def results(tmp_path: Path) -> Path:
    folder = tmp_path / "results" / "round-3"
    store(folder, "ann__one", record("ann__one"), facts())
    store(folder, "bob__two", record("bob__two", version="0.8.0"), facts(bail="star_import"))
    store(folder, "cat__broke", record("cat__broke", error=True), None)
    return tmp_path / "results"


def test_collect_writes_the_file_once_from_the_graded_facts(results: Path) -> None:
    code, out = collect(results)
    assert code == 0, out
    assert "cat__broke: left out, it errored at venv (venv_failed)" in out
    target = results / "errors" / "round-3.json"
    assert f"{target}: 2 cases, 2 withheld rows" in out
    collected = read_collected(target)
    assert (collected.round, collected.schema_version) == (3, 1)
    assert collected.obelize_version == ["0.8.0"] and collected.pack_sha256 == [PACK]
    assert collected.cases["ann__one"].applied == [("b.py", 1)]
    assert collected.cases["bob__two"].withheld[0].bail == "star_import"
    assert "evidence" not in target.read_text(encoding="utf-8")

    code, out = collect(results)
    assert code == 0 and "unchanged" in out


def test_a_collect_that_would_change_the_file_is_refused_unless_forced(results: Path) -> None:
    assert collect(results)[0] == 0
    target = results / "errors" / "round-3.json"
    before = target.read_bytes()
    store(results / "round-3", "ann__one", record("ann__one"), facts(bail="lazy_import"))
    code, out = collect(results)
    assert code == 1 and "refused (--force replaces it)" in out
    assert target.read_bytes() == before
    code, out = collect(results, "--force")
    assert code == 0
    assert read_collected(target).cases["ann__one"].withheld[0].bail == "lazy_import"


def test_a_damaged_collected_file_is_not_silently_replaced(results: Path) -> None:
    target = results / "errors" / "round-3.json"
    target.parent.mkdir(parents=True)
    target.write_text("{half", encoding="utf-8")
    code, out = collect(results)
    assert code == 1 and "not JSON" in out and target.read_text(encoding="utf-8") == "{half"
    assert collect(results, "--force")[0] == 0
    assert len(read_collected(target).cases) == 2


def test_missing_or_old_facts_stop_the_collect_and_write_nothing(results: Path) -> None:
    folder = results / "round-3"
    (folder / "artefacts" / "ann__one.json").unlink()
    old = json.loads(artefacts_to_json(facts(run_id=None)))
    old["graded_facts_version"] = 1
    (folder / "artefacts" / "bob__two.json").write_text(json.dumps(old), encoding="utf-8")
    code, out = collect(results)
    assert code == 1
    lines = out.strip().splitlines()
    assert any("ann__one.json: missing; ann__one has a record without an error" in line for line in lines)
    assert any("bob__two.json: the graded facts name no run_id" in line for line in lines)
    assert lines[-1] == "round 3: nothing written (2 problems)"
    assert not (results / "errors").exists()


def test_hostile_inputs_to_collect(results: Path, tmp_path: Path) -> None:
    folder = results / "round-3" / "artefacts"
    outside = tmp_path / "outside.json"
    shutil.move(folder / "ann__one.json", outside)
    os.symlink(outside, folder / "ann__one.json")
    code, out = collect(results)
    assert code == 1 and "ann__one.json is a symlink; refused" in out
    (folder / "ann__one.json").unlink()
    (folder / "ann__one.json").write_text("[1, 2", encoding="utf-8")
    code, out = collect(results)
    assert code == 1 and "not a graded-facts document" in out
    code, out = collect(results, "--run", "../round-3")
    assert code == 2 and "is not a run id" in out
    code, out = collect(tmp_path / "nowhere")
    assert code == 1 and "holds no record with graded facts" in out


def test_collect_from_one_run_of_the_round(tmp_path: Path) -> None:
    results = tmp_path / "results"
    run = results / "round-3" / "runs" / "20261203T1000Z-a"
    store(run, "ann__one", record("ann__one"), facts())
    # every run folder holds its manifest beside the records; the collect reads past it
    write_manifest(run, RunManifest(run="20261203T1000Z-a", round=3, cases_expected=["ann__one"]))
    code, out = collect(results, "--run", "20261203T1000Z-a")
    assert code == 0, out
    assert list(read_collected(results / "errors" / "round-3.json").cases) == ["ann__one"]


# -- the figures in the results document and summary.json ----------------------------------------


def summarize(cases: Path, results: Path, *extra: str) -> tuple[int, str]:
    return obelize_bench("summarize", "--cases", cases, "--results", results, *extra)


def test_summary_json_carries_the_same_figures(tmp_path: Path) -> None:
    cases_file, results = round_1_copy(tmp_path)
    summary = results / "round-1" / "summary.json"
    summary.write_text(json.dumps({"round": 1}), encoding="utf-8")
    code, out = summarize(cases_file, results)
    assert code == 0, out
    data: dict[str, Any] = json.loads(summary.read_text(encoding="utf-8"))
    figures = data["error_analysis"]
    assert data["round"] == 1
    assert figures["key_rows"] == 277
    assert figures["states"] == {"migrated": 25, "withheld": 129, "derived": 98, "missed": 25}
    assert figures["dispositions"] == {
        "rule_change": {"causes": 4, "rows": 34},
        "scan_change": {"causes": 4, "rows": 5},
        "limitation": {"causes": 21, "rows": 213},
    }
    assert (figures["levers_are_upper_bounds"], figures["levers_add_up"]) == (True, False)
    assert len(figures["misses"]) == 25 and len(figures["unexpected"]) == 3
    document = (results / "BENCHMARK_RESULTS.md").read_text(encoding="utf-8")
    assert "| migrated | 25 | 9.0% [4.0%, 19.2%] |" in document and "| limitation | 21 | 213 |" in document
    assert "| total | 277 | 277 rows in 20 repositories |" in document
    assert "| `local_import` | withheld | 18 | 29 | +26 | rule_change | COVERAGE 28 |" in document
    assert summarize(cases_file, results, "--check")[0] == 0

    figures["states"]["migrated"] = 26
    summary.write_text(json.dumps(data), encoding="utf-8")
    code, out = summarize(cases_file, results, "--check")
    assert code == 1 and "error_analysis differs" in out

    (results / "errors" / "round-1.json").write_text("{}", encoding="utf-8")
    code, out = summarize(cases_file, results, "--check")
    assert code == 1 and "round-1.json" in out and len(out.strip().splitlines()) == 1


def test_an_unreadable_reviewer_file_never_costs_a_round_its_block(tmp_path: Path) -> None:
    from pytest_obelize_bench.casefile.cases import load_case_file
    from pytest_obelize_bench.report.round.round_files import write_round_outputs

    cases_file, results = round_1_copy(tmp_path)
    (cases_file.parent / "errors-round-1.yaml").write_text("causes: [broken\n", encoding="utf-8")
    document, summary = write_round_outputs(results, load_case_file(cases_file), 1)
    text = document.read_text(encoding="utf-8")
    assert "### Round 1" in text and "#### Error analysis" not in text
    assert "error_analysis" not in json.loads(summary.read_text(encoding="utf-8"))
    code, out = summarize(cases_file, results, "--check")
    assert code == 1 and out.count("\n") == 1 and "errors-round-1.yaml: is not valid YAML (line 2)" in out
