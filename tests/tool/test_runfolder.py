"""The run folder is untrusted input: every corrupt shape is one CaseError, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench.grading.graded_facts import (
    Finding,
    PlanEdit,
    Withheld,
    artefacts_from_json,
    artefacts_to_json,
)
from pytest_obelize_bench.tool import runfolder
from pytest_obelize_bench.tool.runfolder import locate_run_folder, read_artefacts
from tests.helpers.runfolder_docs import RUN_ID, documents, make_run, reason_of


def test_a_well_formed_folder_reads_into_artefacts(tmp_path: Path) -> None:
    folder = make_run(tmp_path)
    assert locate_run_folder(tmp_path) == folder
    artefacts = read_artefacts(folder, tmp_path)
    assert artefacts.findings[0] == Finding(
        "app.py", 1, "import", "google.generativeai", "eligible", None, "alias_resolved"
    )
    assert artefacts.findings[2].symbol is None
    assert artefacts.edits[1] == PlanEdit("requirements.txt", 1, "auto", "p:manifest-dependency", None)
    assert artefacts.written == ("app.py", "requirements.txt")
    assert artefacts.withheld == (
        Withheld("requirements.txt", 1, "google-generativeai", "repo_not_fully_migrated"),
        Withheld("broken.py", 4, None, "input_does_not_parse"),
    )
    assert artefacts.exit_code == 6
    assert artefacts.model_used is False
    assert (artefacts.llm_tokens_in, artefacts.llm_tokens_out, artefacts.llm_cost_usd) == (None, None, None)
    assert artefacts.refused == ()
    assert artefacts.run_id == RUN_ID


def test_caused_by_is_read_and_must_be_a_list_of_codes(tmp_path: Path) -> None:
    docs = documents()
    docs["run.json"]["withheld"].append(
        {
            "path": "app.py",
            "line": 2,
            "symbol": "google.generativeai.configure",
            "bail": "file_not_fully_migrated",
            "caused_by": ["local_import", "receiver_unresolved"],
        }
    )
    artefacts = read_artefacts(make_run(tmp_path / "good", docs), tmp_path / "good")
    assert artefacts.withheld[-1].caused_by == ("local_import", "receiver_unresolved")
    assert artefacts.withheld[0].caused_by is None
    docs["run.json"]["withheld"][-1]["caused_by"] = "local_import"
    with pytest.raises(CaseError, match=r"withheld\[2\]\.caused_by: expected a list of codes"):
        read_artefacts(make_run(tmp_path / "bad", docs), tmp_path / "bad")


def test_graded_facts_keep_what_the_error_analysis_needs_and_version_1_still_loads(tmp_path: Path) -> None:
    docs = documents()
    docs["run.json"]["withheld"][1]["caused_by"] = ["star_import"]
    artefacts = read_artefacts(make_run(tmp_path, docs), tmp_path)
    text = artefacts_to_json(artefacts)
    assert json.loads(text)["graded_facts_version"] == 2
    assert artefacts_from_json(text) == artefacts
    old = json.loads(text)
    old["graded_facts_version"] = 1
    del old["run_id"]
    for row in old["findings"]:
        del row["confidence_reason"]
    for row in old["withheld"]:
        del row["caused_by"]
    loaded = artefacts_from_json(json.dumps(old))
    assert loaded.run_id is None
    assert {f.confidence_reason for f in loaded.findings} == {None}
    assert {w.caused_by for w in loaded.withheld} == {None}
    assert loaded.findings[0].path == artefacts.findings[0].path
    with pytest.raises(ValueError, match="graded_facts_version 7"):
        artefacts_from_json(json.dumps({**old, "graded_facts_version": 7}), "facts.json")


def test_a_consulted_model_gives_its_tokens_and_no_invented_cost(tmp_path: Path) -> None:
    docs = documents()
    docs["run.json"]["model"] = {
        "provider": "openai_compat",
        "host": "h",
        "model": "m",
        "proposals": 1,
        "accepted": 0,
        "tokens_in": 120,
        "tokens_out": 30,
    }
    artefacts = read_artefacts(make_run(tmp_path, docs), tmp_path)
    assert artefacts.model_used is True
    assert (artefacts.llm_tokens_in, artefacts.llm_tokens_out, artefacts.llm_cost_usd) == (120, 30, None)


def test_refusals_are_read(tmp_path: Path) -> None:
    docs = documents()
    docs["run.json"]["refused"] = [{"code": "tree_dirty", "path": None, "detail": "x"}]
    docs["run.json"]["file_edits"] = []
    assert read_artefacts(make_run(tmp_path, docs), tmp_path).refused == ("tree_dirty",)


def test_older_obelize_documents_without_packs_still_read(tmp_path: Path) -> None:
    docs = documents()
    for name in docs:
        docs[name].pop("packs", None)
        docs[name]["pack"] = {"id": "gemini/x", "version": "0.1.0"}
    assert read_artefacts(make_run(tmp_path, docs), tmp_path).written == ("app.py", "requirements.txt")


def test_no_obelize_folder(tmp_path: Path) -> None:
    with pytest.raises(CaseError) as excinfo:
        locate_run_folder(tmp_path)
    assert reason_of(excinfo) == ("fix", "no_run_folder")
    assert "does not exist" in excinfo.value.detail


def test_latest_missing(tmp_path: Path) -> None:
    make_run(tmp_path)
    (tmp_path / ".obelize" / "latest").unlink()
    with pytest.raises(CaseError) as excinfo:
        locate_run_folder(tmp_path)
    assert reason_of(excinfo) == ("fix", "no_run_folder")
    assert ".obelize/latest does not exist" in excinfo.value.detail


def test_latest_a_directory(tmp_path: Path) -> None:
    make_run(tmp_path)
    latest = tmp_path / ".obelize" / "latest"
    latest.unlink()
    latest.mkdir()
    with pytest.raises(CaseError) as excinfo:
        locate_run_folder(tmp_path)
    assert reason_of(excinfo) == ("fix", "no_run_folder")
    assert "not a regular file" in excinfo.value.detail


def test_latest_a_symlink(tmp_path: Path) -> None:
    make_run(tmp_path)
    latest = tmp_path / ".obelize" / "latest"
    target = tmp_path / "pointer"
    target.write_text(RUN_ID)
    latest.unlink()
    latest.symlink_to(target)
    with pytest.raises(CaseError) as excinfo:
        locate_run_folder(tmp_path)
    assert reason_of(excinfo) == ("fix", "no_run_folder")
    assert "symlink" in excinfo.value.detail


def test_obelize_folder_a_symlink(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    make_run(elsewhere)
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".obelize").symlink_to(elsewhere / ".obelize")
    with pytest.raises(CaseError) as excinfo:
        locate_run_folder(checkout)
    assert reason_of(excinfo) == ("fix", "no_run_folder")


@pytest.mark.parametrize("run_id", ["../outside", "..", ".", "a/b", "", "  ", ".hidden", "x\x00y", "a\\b"])
def test_run_id_that_is_not_one_safe_component(tmp_path: Path, run_id: str) -> None:
    make_run(tmp_path)
    (tmp_path / ".obelize" / "latest").write_text(run_id + "\n")
    with pytest.raises(CaseError) as excinfo:
        locate_run_folder(tmp_path)
    assert reason_of(excinfo) == ("fix", "no_run_folder")


def test_latest_too_large_or_not_text(tmp_path: Path) -> None:
    make_run(tmp_path)
    latest = tmp_path / ".obelize" / "latest"
    latest.write_bytes(b"x" * (runfolder.MAX_POINTER_BYTES + 1))
    with pytest.raises(CaseError) as excinfo:
        locate_run_folder(tmp_path)
    assert reason_of(excinfo) == ("fix", "no_run_folder")
    latest.write_bytes(b"\xff\xfe")
    with pytest.raises(CaseError):
        locate_run_folder(tmp_path)


def test_run_folder_named_but_missing(tmp_path: Path) -> None:
    make_run(tmp_path)
    (tmp_path / ".obelize" / "latest").write_text("20261202T000000Z-00000000\n")
    with pytest.raises(CaseError) as excinfo:
        locate_run_folder(tmp_path)
    assert reason_of(excinfo) == ("fix", "no_run_folder")


def test_run_folder_a_symlink_pointing_outside(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    make_run(outside)
    checkout = tmp_path / "checkout"
    (checkout / ".obelize" / "runs").mkdir(parents=True)
    (checkout / ".obelize" / "latest").write_text(RUN_ID + "\n")
    (checkout / ".obelize" / "runs" / RUN_ID).symlink_to(outside / ".obelize" / "runs" / RUN_ID)
    with pytest.raises(CaseError) as excinfo:
        locate_run_folder(checkout)
    assert reason_of(excinfo) == ("fix", "no_run_folder")
    assert "symlink" in excinfo.value.detail
    assert str(tmp_path) not in excinfo.value.detail  # details carry no machine path
