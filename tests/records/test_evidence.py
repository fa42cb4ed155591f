"""Reading run folders as untrusted evidence: bounded, no symlinks, one clear line per problem."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_obelize_bench.grading.record import parse_record, read_round, read_round_attempts
from pytest_obelize_bench.records import evidence
from pytest_obelize_bench.records.evidence import (
    EvidenceError,
    read_decision_documents,
    read_run,
    resolve_run,
)
from tests.helpers import runs

CASES = ["ann__a", "bob__b"]


def make_run(root: Path, **manifest: Any) -> Path:
    records = [runs.record(c, attempt=1) for c in CASES] + [runs.record("ann__a", "partial", attempt=2, unmigrated=1)]
    return runs.write_run(root / "round-2" / "runs" / "r1", records, runs.manifest_data(CASES, "r1", **manifest))


def test_a_run_folder_reads_every_attempt_and_its_manifest(tmp_path: Path) -> None:
    folder = make_run(tmp_path)
    run = read_run(folder, "r1", {"ann__a": 2, "bob__b": 2})
    assert run.run_id == "r1" and run.tool_version == "0.8.0"
    assert run.manifest is not None and run.manifest.interrupted is False
    assert [(a.case, a.attempt, a.tier) for a in run.attempts] == [
        ("ann__a", 1, "verified_success"),
        ("ann__a", 2, "partial"),
        ("bob__b", 1, "verified_success"),
    ]
    assert run.attempts[0].rows_migrated == 2


def test_a_tier_is_recomputed_never_read_and_a_review_applies_only_to_its_patch(tmp_path: Path) -> None:
    from pytest_obelize_bench.casefile.schema import Review

    planted = runs.record("ann__a", "verified_success", unmigrated=1)
    reviewed = runs.record("bob__b", "patched_unverified")
    reviewed = reviewed.model_copy(
        update={"provenance": reviewed.provenance.model_copy(update={"patch_sha256": "a" * 64})}
    )
    folder = runs.write_run(tmp_path / "run", [planted, reviewed], runs.manifest_data(CASES, "run"))
    answer = Review(human_edits=0, patch_correct=True, reviewer="r", reviewed_at="2026-12-02")
    tiers = {a.case: a.tier for a in read_run(folder, "run", {}, reviews={("bob__b", "a" * 64): answer}).attempts}
    assert tiers == {"ann__a": "partial", "bob__b": "verified_success"}
    other = {("bob__b", "b" * 64): answer}
    tiers = {a.case: a.tier for a in read_run(folder, "run", {}, reviews=other).attempts}
    assert tiers["bob__b"] == "patched_unverified"


def test_a_manifest_missing_optional_fields_and_carrying_unknown_ones_loads(tmp_path: Path) -> None:
    folder = tmp_path / "round-3" / "runs" / "x"
    runs.write_run(folder, [runs.record("ann__a")], {"run_id": "x", "something_new": [1, 2], "interrupted": None})
    run = read_run(folder, "x", {})
    assert run.manifest is not None and run.run_id == "x"
    assert run.manifest.round == 3  # from the folder it is in
    assert run.manifest.cases_expected == [] and run.manifest.interrupted is False
    assert run.manifest.unfinished() == ["it has no ended_at: its session never finished"]
    assert run.attempts[0].rows_migrated is None  # no key row count given


def test_a_manifest_naming_no_round_outside_a_round_folder_is_one_line_naming_the_field(tmp_path: Path) -> None:
    folder = runs.write_run(tmp_path / "run", [runs.record("ann__a")], {"run_id": "x"})
    with pytest.raises(EvidenceError, match=r"run\.json: round: a value is required$"):
        read_run(folder, "x", {})


def test_an_older_harness_s_names_are_read_into_the_one_model(tmp_path: Path) -> None:
    data = {
        "run_id": "old",
        "round": 2,
        "harness_version": "0.0.9",
        "complete": False,
        "ended_at": "2026-01-01T00:00:00Z",
    }
    data |= {"sandbox": {"mode": "bwrap", "program": "/usr/bin/bwrap"}, "selection": {"k": "x", "lf": True}}
    folder = runs.write_run(tmp_path / "run", [runs.record("ann__a")], data)
    manifest = read_run(folder, "old", {}).manifest
    assert manifest is not None and manifest.run == "old"
    assert manifest.field("harness.version") == "0.0.9" and manifest.field("sandbox") == "bwrap"
    assert manifest.unfinished() == ["complete is false"]
    assert "complete" not in manifest.to_json()  # read from old files, never written


def test_no_manifest_reads_as_none(tmp_path: Path) -> None:
    folder = runs.write_run(tmp_path / "run", [runs.record("ann__a")], None)
    run = read_run(folder, "run", {})
    assert run.manifest is None and run.run_id == "run"


def test_a_symlinked_record_is_refused(tmp_path: Path) -> None:
    folder = make_run(tmp_path)
    outside = tmp_path / "planted.json"
    outside.write_text(runs.record("cat__c").to_json(), encoding="utf-8")
    os.symlink(outside, folder / "cat__c.json")
    with pytest.raises(EvidenceError, match=r"cat__c\.json: a symlinked record is refused"):
        read_run(folder, "r1", {})


def test_a_symlinked_run_folder_and_manifest_are_refused(tmp_path: Path) -> None:
    folder = make_run(tmp_path)
    link = tmp_path / "link"
    os.symlink(folder, link)
    with pytest.raises(EvidenceError, match="is a symlink; refused"):
        read_run(link, "r1", {})
    manifest = folder / "run.json"
    real = tmp_path / "real-run.json"
    manifest.rename(real)
    os.symlink(real, manifest)
    with pytest.raises(EvidenceError, match="symlinked"):
        read_run(folder, "r1", {})


def test_a_record_under_another_cases_name_is_refused(tmp_path: Path) -> None:
    folder = make_run(tmp_path)
    (folder / "bob__b.json").write_text(runs.record("ann__a").to_json(), encoding="utf-8")
    with pytest.raises(EvidenceError, match=r"bob__b\.json: holds case 'ann__a' attempt 1, whose file is ann__a\.json"):
        read_run(folder, "r1", {})


def test_an_attempt_file_must_hold_that_attempt(tmp_path: Path) -> None:
    folder = make_run(tmp_path)
    (folder / "ann__a.attempt-3.json").write_text(runs.record("ann__a", attempt=2).to_json(), encoding="utf-8")
    with pytest.raises(EvidenceError, match=r"whose file is ann__a\.attempt-2\.json"):
        read_run(folder, "r1", {})


def test_an_oversized_record_is_refused_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = make_run(tmp_path)
    monkeypatch.setattr(evidence, "RECORD_BYTES", 100)
    with pytest.raises(EvidenceError, match="larger than the 100 byte cap"):
        read_run(folder, "r1", {})


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\xff\xfe", "not UTF-8"),
        (b"{", "not JSON"),
        (b"[]", "expected a JSON object"),
        (b'{"interrupted": "maybe"}', "run.json: interrupted: Input should be a valid boolean"),
        (b'{"cases_expected": "ann__a"}', "run.json: cases_expected: Input should be a valid list"),
    ],
)
def test_a_hostile_manifest_is_one_line_naming_the_field(tmp_path: Path, content: bytes, message: str) -> None:
    folder = make_run(tmp_path)
    (folder / "run.json").write_bytes(content)
    with pytest.raises(EvidenceError, match=message) as caught:
        read_run(folder, "r1", {})
    assert "run.json" in str(caught.value) and "\n" not in str(caught.value)


def test_a_bad_record_names_its_file(tmp_path: Path) -> None:
    folder = make_run(tmp_path)
    data = json.loads((folder / "bob__b.json").read_text(encoding="utf-8"))
    data["tier"] = "splendid"
    (folder / "bob__b.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(EvidenceError, match=r"bob__b\.json"):
        read_run(folder, "r1", {})


def test_graded_facts_beside_the_records_give_files_and_lines(tmp_path: Path) -> None:
    from pytest_obelize_bench.grading.graded_facts import Artefacts, PlanEdit, artefacts_to_json

    folder = make_run(tmp_path)
    artefacts = Artefacts(
        findings=(),
        edits=(PlanEdit("app.py", 1, "auto", None, None), PlanEdit("app.py", 2, "auto", None, None)),
        written=("app.py",),
        withheld=(),
        exit_code=0,
        model_used=False,
        llm_tokens_in=None,
        llm_tokens_out=None,
        llm_cost_usd=None,
    )
    (folder / "artefacts").mkdir()
    (folder / "artefacts" / "ann__a.attempt-2.json").write_text(artefacts_to_json(artefacts), encoding="utf-8")
    run = read_run(folder, "r1", {})
    by_key = {(a.case, a.attempt): a for a in run.attempts}
    assert by_key[("ann__a", 2)].files_touched == ("app.py",) and by_key[("ann__a", 2)].lines_changed == 2
    assert by_key[("ann__a", 1)].files_touched is None


def test_runs_are_named_as_folders_or_round_and_id(tmp_path: Path) -> None:
    assert resolve_run("round-2:20261201T0900Z-ab12", tmp_path) == tmp_path / "round-2" / "runs" / "20261201T0900Z-ab12"
    assert resolve_run("3:r", tmp_path) == tmp_path / "round-3" / "runs" / "r"
    assert resolve_run("some/folder", tmp_path) == Path("some/folder")
    assert resolve_run("2:../escape", tmp_path) == Path("2:../escape")  # not a run id: taken as a path


def test_missing_folder_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(EvidenceError, match="run folder does not exist"):
        read_run(tmp_path / "nothing", "x", {})


def test_decision_documents_are_read_bounded_and_never_through_a_link(tmp_path: Path) -> None:
    assert read_decision_documents(tmp_path / "absent") == []
    folder = tmp_path / "decisions"
    folder.mkdir()
    (folder / "2026-12-01-new.json").write_text('{"decision": "promote"}', encoding="utf-8")
    assert [d for _, d in read_decision_documents(folder)] == [{"decision": "promote"}]
    os.symlink(folder / "2026-12-01-new.json", folder / "2026-12-02-new.json")
    with pytest.raises(EvidenceError, match="symlinked decision"):
        read_decision_documents(folder)


def test_old_records_load_and_a_round_folder_keeps_one_headline_record_per_case(tmp_path: Path) -> None:
    data = json.loads(runs.record("ann__a").to_json())
    del data["attempt"]
    assert parse_record(json.dumps(data)).attempt is None
    (tmp_path / "ann__a.json").write_text(json.dumps(data), encoding="utf-8")
    (tmp_path / "ann__a.attempt-2.json").write_text(
        runs.record("ann__a", "partial", attempt=2).to_json(), encoding="utf-8"
    )
    (tmp_path / "bob__b.attempt-2.json").write_text(runs.record("bob__b", attempt=2).to_json(), encoding="utf-8")
    headline = read_round(tmp_path)
    assert list(headline) == ["ann__a"] and headline["ann__a"].tier == "verified_success"
    attempts = read_round_attempts(tmp_path)
    assert [r.attempt_number for r in attempts["ann__a"]] == [1, 2]
