"""Runs, publication and the published round as untrusted input: built on disk by hand, no round run.

Every record here is written as a round would write it; the tests then break one thing each (a
missing case, a second tool, a forged file, a stored tier that lies) and check what is refused.
"""

from __future__ import annotations

import json
import os
import shutil
from io import StringIO
from pathlib import Path

import pytest

from pytest_obelize_bench._util.caps import RECORD_BYTES
from pytest_obelize_bench.casefile.cases import CaseFile, load_case_file
from pytest_obelize_bench.grading.error_classes import error_class
from pytest_obelize_bench.grading.graded_facts import Artefacts, artefacts_to_json
from pytest_obelize_bench.records.publication import record_imported_round
from pytest_obelize_bench.records.publication_note import read_publication
from pytest_obelize_bench.records.published import read_published
from pytest_obelize_bench.records.reruns import rerun_cases
from pytest_obelize_bench.records.results_document import DOCUMENT_NAME
from pytest_obelize_bench.records.runs import (
    RunManifest,
    add_record,
    check_run_id,
    incomplete_reasons,
    new_run_id,
    read_run_records,
    run_folder,
)
from pytest_obelize_bench.report.round.publish_round import publish_round
from pytest_obelize_bench.report.summarize import summarize
from tests.helpers import casefile
from tests.helpers.project import PROJECT
from tests.helpers.runs import all_cases, errored, make_run, unsupported


@pytest.fixture
def project(tmp_path: Path) -> tuple[CaseFile, Path]:
    path = casefile.write(tmp_path / "cases.yaml", casefile.standard())
    return load_case_file(path), tmp_path / "results"


def check(results: Path, case_file: CaseFile) -> tuple[int, str]:
    out = StringIO()
    return summarize(results, case_file.path, check=True, out=out), out.getvalue()


# -- runs ----------------------------------------------------------------------------------


def test_run_ids_sort_by_time_and_differ_within_a_second() -> None:
    first, second = new_run_id(1_800_000_000.0), new_run_id(1_800_000_000.0)
    assert first.startswith("20270115T080000Z-") and first != second
    assert new_run_id(1_800_000_001.0) > first
    assert check_run_id(first) == first
    for bad in ("../x", ".hidden", "a/b", ""):
        with pytest.raises(ValueError):
            check_run_id(bad)


def test_a_rerun_keeps_the_earlier_attempt(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    add_record(folder, "alpha__navamai", errored("alpha__navamai", "fetch", "fetch_failed").to_json(), "{}")
    add_record(folder, "alpha__navamai", unsupported("alpha__navamai").to_json(), "{}")
    found = read_run_records(folder, ["alpha__navamai"])
    assert found.records["alpha__navamai"].tier == "unsupported"
    assert found.attempts == {"alpha__navamai": 2}
    earlier = json.loads((folder / "attempts" / "alpha__navamai.1.json").read_text(encoding="utf-8"))
    assert earlier["tier"] == "error"
    assert (folder / "attempts" / "artefacts" / "alpha__navamai.1.json").is_file()


def test_only_errored_cases_are_rerun() -> None:
    records = {
        "a": errored("a", "fetch", "fetch_failed"),
        "b": unsupported("b"),
        "c": errored("c", "fix", "obelize_failed"),
    }
    # a tool error is a measurement of the tool: only the explicit flag runs it again
    assert rerun_cases(records) == ["a"]
    assert rerun_cases(records, tool_errors=True) == ["a", "c"]


def test_a_rerun_names_the_attempt_it_replaces_and_where_it_is_kept(tmp_path: Path) -> None:
    from pytest_obelize_bench.records.reruns import replaced_attempts

    folder = tmp_path / "run"
    add_record(folder, "alpha__navamai", errored("alpha__navamai", "fetch", "fetch_failed").to_json(), "{}")
    found = read_run_records(folder, ["alpha__navamai"]).records
    (replaced,) = replaced_attempts(folder, found, ["alpha__navamai"])
    assert (replaced.kept_as, replaced.tier, replaced.reason) == (
        "attempts/alpha__navamai.1.json",
        "error",
        "fetch_failed",
    )
    assert replaced.error_class == "infrastructure"
    add_record(folder, "alpha__navamai", unsupported("alpha__navamai").to_json(), "{}")
    assert (folder / replaced.kept_as).is_file()


def test_incomplete_reasons_name_each_defect() -> None:
    manifest = RunManifest(run="r", round=2, cases_expected=["a", "b"], interrupted=True)
    records = {"a": unsupported("a", "0.7.0"), "c": unsupported("c", "0.8.0")}
    reasons = incomplete_reasons(manifest, records, ["a", "b"])
    assert reasons[0] == "it was interrupted"
    assert reasons[1] == "1 case(s) of the case file have no record (b)"
    assert reasons[2].startswith("its records come from 2 tools (obelize 0.7.0")
    complete = RunManifest(run="r", round=2)
    assert incomplete_reasons(complete, {"a": unsupported("a"), "b": unsupported("b")}, ["a", "b"]) == []


def test_error_classes_keep_the_machine_apart_from_the_tool() -> None:
    assert error_class("fetch_failed", "fetch") == "infrastructure"
    assert error_class("venv_failed", "venv") == "infrastructure"
    assert error_class("install_failed", "install") == "infrastructure"
    assert error_class("harness_crashed", "harness") == "infrastructure"
    assert error_class("worker_lost", "fix") == "infrastructure"
    assert error_class("obelize_failed", "fix") == "tool"
    assert error_class("no_run_folder", "fix") == "tool"
    assert error_class("run_folder_unreadable", "fix") == "tool"
    assert error_class("timeout", "fix") == "tool"
    assert error_class("timeout", "fetch") == "infrastructure"
    assert error_class("timeout", "baseline") == "infrastructure"
    assert error_class("timeout", "after") == "tool"


# -- publication -------------------------------------------------------------------------------


def test_a_complete_run_publishes_and_check_holds(project: tuple[CaseFile, Path]) -> None:
    case_file, results = project
    run_id = make_run(results, case_file, all_cases(case_file))
    outcome = publish_round(results, case_file, 2, run_id)
    assert outcome.published, outcome.lines
    round_folder = results / "round-2"
    for case in case_file.cases:
        published = (round_folder / f"{case.id}.json").read_bytes()
        assert published == (run_folder(results, 2, run_id) / f"{case.id}.json").read_bytes()
    note = read_publication(round_folder)
    assert note is not None and note.run == run_id and len(note.records) == len(case_file.cases)
    assert f"| Published run | `{run_id}` |" in (results / DOCUMENT_NAME).read_text(encoding="utf-8")
    assert check(results, case_file)[0] == 0


def test_repeats_are_published_with_their_run_and_held_to_it(project: tuple[CaseFile, Path]) -> None:
    """``--bench-repeat`` attempts travel with the records; a changed or stray repeat fails the check."""
    case_file, results = project
    run_id = make_run(results, case_file, all_cases(case_file))
    case = case_file.cases[0].id
    repeat = unsupported(case).model_copy(update={"attempt": 2})
    facts = artefacts_to_json(
        Artefacts(
            findings=(),
            edits=(),
            written=(),
            withheld=(),
            exit_code=0,
            model_used=False,
            llm_tokens_in=None,
            llm_tokens_out=None,
            llm_cost_usd=None,
        )
    )
    add_record(run_folder(results, 2, run_id), f"{case}.attempt-2", repeat.to_json(), facts)
    assert publish_round(results, case_file, 2, run_id).published
    round_folder = results / "round-2"
    assert (round_folder / f"{case}.attempt-2.json").read_text(encoding="utf-8") == repeat.to_json()
    assert (round_folder / "artefacts" / f"{case}.attempt-2.json").is_file()
    note = read_publication(round_folder)
    assert note is not None and list(note.repeats) == [f"{case}.attempt-2"]
    assert check(results, case_file)[0] == 0

    forged = repeat.model_copy(update={"tier": "error"}).to_json()
    (round_folder / f"{case}.attempt-2.json").write_text(forged, encoding="utf-8")
    status, text = check(results, case_file)
    assert status == 1 and f"{case}.attempt-2.json: differs from what run {run_id} published" in text

    (round_folder / f"{case}.attempt-2.json").write_text(repeat.to_json(), encoding="utf-8")
    (round_folder / "artefacts" / f"{case}.attempt-2.json").write_text("{}", encoding="utf-8")
    status, text = check(results, case_file)
    assert status == 1 and text.count("\n") == 1 and "not a graded-facts document" in text
    (round_folder / "artefacts" / f"{case}.attempt-2.json").write_text(facts, encoding="utf-8")
    (round_folder / f"{case}.attempt-3.json").write_text(
        repeat.model_copy(update={"attempt": 3}).to_json(), encoding="utf-8"
    )
    status, text = check(results, case_file)
    assert status == 1 and f"repeat {case}.attempt-3.json was not published from run {run_id}" in text

    # Publishing again replaces the round's repeats with the run's.
    assert publish_round(results, case_file, 2, run_id).published
    assert not (round_folder / f"{case}.attempt-3.json").exists()
    assert check(results, case_file)[0] == 0


def test_a_partial_run_is_refused_and_the_block_stays_byte_for_byte(project: tuple[CaseFile, Path]) -> None:
    case_file, results = project
    first = make_run(results, case_file, all_cases(case_file))
    assert publish_round(results, case_file, 2, first).published
    before = (results / DOCUMENT_NAME).read_bytes(), (results / "round-2" / "summary.json").read_bytes()
    partial = make_run(results, case_file, [errored("alpha__navamai", "fix", "obelize_failed")])
    outcome = publish_round(results, case_file, 2, partial)
    assert not outcome.published
    assert "case(s) of the case file have no record" in outcome.lines[0]
    assert outcome.lines[1] == f"run folder: {run_folder(results, 2, partial)}"
    assert ((results / DOCUMENT_NAME).read_bytes(), (results / "round-2" / "summary.json").read_bytes()) == before
    assert check(results, case_file)[0] == 0


def test_a_run_with_two_tools_or_an_interruption_is_never_published(project: tuple[CaseFile, Path]) -> None:
    case_file, results = project
    mixed = all_cases(case_file)
    mixed[0] = unsupported(mixed[0].case, "0.7.0", control=mixed[0].control)
    outcome = publish_round(results, case_file, 2, make_run(results, case_file, mixed))
    assert not outcome.published and "come from 2 tools" in outcome.lines[0]
    outcome = publish_round(results, case_file, 2, make_run(results, case_file, all_cases(case_file), interrupted=True))
    assert not outcome.published and "it was interrupted" in outcome.lines[0]
    assert not (results / DOCUMENT_NAME).exists()


def test_infrastructure_errors_block_publication_unless_allowed(project: tuple[CaseFile, Path]) -> None:
    case_file, results = project
    records = all_cases(case_file, alpha__navamai=errored("alpha__navamai", "fetch", "fetch_failed"))
    run_id = make_run(results, case_file, records)
    outcome = publish_round(results, case_file, 2, run_id)
    assert not outcome.published and "1 case(s) errored for infrastructure reasons (alpha__navamai)" in outcome.lines[0]
    outcome = publish_round(results, case_file, 2, run_id, allow_infrastructure_errors=True)
    assert outcome.published
    document = (results / DOCUMENT_NAME).read_text(encoding="utf-8")
    assert "| Published with infrastructure errors | 1 |" in document
    assert "| Errors | 1 infrastructure, 0 tool |" in document
    summary = json.loads((results / "round-2" / "summary.json").read_text(encoding="utf-8"))
    assert summary["errors_by_class"] == {"infrastructure": 1, "tool": 0}
    assert summary["errors"][0]["class"] == "infrastructure"
    assert check(results, case_file)[0] == 0


def test_a_tool_error_does_not_block_publication(project: tuple[CaseFile, Path]) -> None:
    case_file, results = project
    records = all_cases(case_file, alpha__navamai=errored("alpha__navamai", "fix", "obelize_failed"))
    assert publish_round(results, case_file, 2, make_run(results, case_file, records)).published


# -- the published round as untrusted input ------------------------------------------------------


def published_round(project: tuple[CaseFile, Path]) -> tuple[CaseFile, Path, Path]:
    case_file, results = project
    assert publish_round(results, case_file, 2, make_run(results, case_file, all_cases(case_file))).published
    return case_file, results, results / "round-2"


def test_records_dropped_in_by_hand_fail_the_check(project: tuple[CaseFile, Path]) -> None:
    case_file, results = project
    round_folder = results / "round-2"
    round_folder.mkdir(parents=True)
    for record in all_cases(case_file):
        (round_folder / f"{record.case}.json").write_text(record.to_json(), encoding="utf-8")
    code, text = check(results, case_file)
    assert code == 1 and "no publication.json: they come from no recorded run" in text


def test_a_forged_record_is_refused_and_listed(project: tuple[CaseFile, Path]) -> None:
    case_file, results, round_folder = published_round(project)
    # a record whose case is another's, and a file for no case of the file
    forged = unsupported("beta__tested").model_copy(update={"case": "alpha__navamai"})
    (round_folder / "beta__tested.json").write_text(forged.to_json(), encoding="utf-8")
    (round_folder / "intruder__x.json").write_text(unsupported("intruder__x").to_json(), encoding="utf-8")
    found = read_published(round_folder, [case.id for case in case_file.cases])
    assert "beta__tested" not in found.records
    assert any("case beta__tested: field case says 'alpha__navamai'; refused" in p for p in found.problems)
    assert found.unknown == ["intruder__x.json"]
    code, text = check(results, case_file)
    assert code == 1
    assert "field case says 'alpha__navamai'; refused" in text
    assert f"unknown file in a round folder: {round_folder / 'intruder__x.json'}" in text


def test_a_stored_tier_that_lies_is_recomputed_and_fails_the_check(project: tuple[CaseFile, Path]) -> None:
    case_file, results, round_folder = published_round(project)
    lying = unsupported("alpha__navamai").model_copy(update={"tier": "verified_success"})
    (round_folder / "alpha__navamai.json").write_text(lying.to_json(), encoding="utf-8")
    found = read_published(round_folder, [case.id for case in case_file.cases])
    assert found.records["alpha__navamai"].tier == "unsupported"
    code, text = check(results, case_file)
    assert code == 1
    assert "case alpha__navamai: field tier: stored 'verified_success', the measurements give 'unsupported'" in text
    assert "differs from what run" in text


def test_a_symlinked_record_is_not_followed(project: tuple[CaseFile, Path], tmp_path: Path) -> None:
    case_file, _, round_folder = published_round(project)
    outside = tmp_path / "outside.json"
    outside.write_text(unsupported("alpha__navamai").to_json(), encoding="utf-8")
    target = round_folder / "alpha__navamai.json"
    target.unlink()
    os.symlink(outside, target)
    found = read_published(round_folder, [case.id for case in case_file.cases])
    assert "alpha__navamai" not in found.records
    assert any("is a symlink" in p for p in found.problems)


def test_an_oversized_record_is_not_read(project: tuple[CaseFile, Path]) -> None:
    _, _, round_folder = published_round(project)
    (round_folder / "alpha__navamai.json").write_text(" " * (RECORD_BYTES + 1), encoding="utf-8")
    found = read_published(round_folder, ["alpha__navamai"])
    assert found.records == {} and "larger than" in found.problems[0]


def test_the_shipped_round_1_is_an_imported_published_run(tmp_path: Path) -> None:
    found = read_published(
        PROJECT / "results" / "round-1", [p.stem for p in (PROJECT / "results" / "round-1").glob("*__*.json")]
    )
    assert len(found.records) == 23 and found.problems == [] and found.unknown == []
    note = read_publication(PROJECT / "results" / "round-1")
    assert note is not None and note.kind == "imported" and note.run == "imported-upstream"
    # recording the import again changes no record file, and gives the same note
    copy = tmp_path / "results"
    shutil.copytree(PROJECT / "results", copy)
    before = {p.name: p.read_bytes() for p in (copy / "round-1").glob("*__*.json")}
    assert record_imported_round(copy, 1, "imported-upstream", "again").published
    assert {p.name: p.read_bytes() for p in (copy / "round-1").glob("*__*.json")} == before
    assert read_publication(copy / "round-1") == note.model_copy(update={})
