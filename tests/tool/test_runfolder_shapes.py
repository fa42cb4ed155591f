"""A run folder's documents: each missing, linked, oversized or wrongly shaped one is one CaseError,
and a copy of the evidence reads back checked."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench.grading.graded_facts import (
    Artefacts,
)
from pytest_obelize_bench.tool import runfolder
from pytest_obelize_bench.tool.evidence_copy import copy_artefacts, patch_publishable
from pytest_obelize_bench.tool.runfolder import load_artefacts_dir, locate_run_folder, read_artefacts
from tests.helpers.runfolder_docs import RUN_ID, documents, make_run, reason_of


def unreadable(tmp_path: Path, docs: dict[str, Any]) -> CaseError:
    folder = make_run(tmp_path, docs)
    with pytest.raises(CaseError) as excinfo:
        read_artefacts(folder, tmp_path)
    assert reason_of(excinfo) == ("fix", "run_folder_unreadable")
    return excinfo.value


def test_runs_folder_a_symlink(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    make_run(outside)
    checkout = tmp_path / "checkout"
    (checkout / ".obelize").mkdir(parents=True)
    (checkout / ".obelize" / "latest").write_text(RUN_ID + "\n")
    (checkout / ".obelize" / "runs").symlink_to(outside / ".obelize" / "runs")
    with pytest.raises(CaseError) as excinfo:
        locate_run_folder(checkout)
    assert reason_of(excinfo) == ("fix", "no_run_folder")


def test_run_folder_a_file(tmp_path: Path) -> None:
    (tmp_path / ".obelize" / "runs").mkdir(parents=True)
    (tmp_path / ".obelize" / "latest").write_text(RUN_ID)
    (tmp_path / ".obelize" / "runs" / RUN_ID).write_text("{}")
    with pytest.raises(CaseError) as excinfo:
        locate_run_folder(tmp_path)
    assert reason_of(excinfo) == ("fix", "no_run_folder")


def test_findings_not_json(tmp_path: Path) -> None:
    docs = documents()
    docs["findings.json"] = "{not json"
    error = unreadable(tmp_path, docs)
    assert error.detail.startswith(f".obelize/runs/{RUN_ID}/findings.json: not JSON")


def test_findings_not_utf8(tmp_path: Path) -> None:
    docs = documents()
    docs["findings.json"] = b"\xff\xfe{}"
    assert "not UTF-8" in unreadable(tmp_path, docs).detail


def test_findings_too_large(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runfolder, "MAX_DOCUMENT_BYTES", 100)
    error = unreadable(tmp_path, documents())
    assert "findings.json" in error.detail and "cap" in error.detail


def test_document_missing(tmp_path: Path) -> None:
    docs = documents()
    del docs["plan.json"]
    assert "plan.json: missing" in unreadable(tmp_path, docs).detail


def test_document_a_symlink(tmp_path: Path) -> None:
    folder = make_run(tmp_path)
    elsewhere = tmp_path / "run.json.real"
    (folder / "run.json").rename(elsewhere)
    (folder / "run.json").symlink_to(elsewhere)
    with pytest.raises(CaseError) as excinfo:
        read_artefacts(folder, tmp_path)
    assert reason_of(excinfo) == ("fix", "run_folder_unreadable")
    assert "run.json: is a symlink" in excinfo.value.detail


def test_document_a_directory(tmp_path: Path) -> None:
    folder = make_run(tmp_path)
    (folder / "plan.json").unlink()
    (folder / "plan.json").mkdir()
    with pytest.raises(CaseError) as excinfo:
        read_artefacts(folder, tmp_path)
    assert reason_of(excinfo) == ("fix", "run_folder_unreadable")


@pytest.mark.parametrize(
    "bad_path",
    ["../outside.py", "/etc/passwd", "a/../../b.py", "..\\outside.py", "C:\\x.py", "\\\\server\\x.py", "", "a\x00b"],
)
def test_finding_path_outside_the_checkout(tmp_path: Path, bad_path: str) -> None:
    docs = documents()
    docs["findings.json"]["findings"][0]["path"] = bad_path
    error = unreadable(tmp_path, docs)
    assert "findings.json: findings[0].path" in error.detail


@pytest.mark.parametrize("document,key", [("plan.json", "edits"), ("run.json", "withheld"), ("run.json", "file_edits")])
def test_paths_are_checked_in_every_document(tmp_path: Path, document: str, key: str) -> None:
    docs = documents()
    docs[document][key][0]["path"] = "../../etc/passwd"
    error = unreadable(tmp_path, docs)
    assert f"{document}: {key}[0].path" in error.detail
    assert "leaves the checkout" in error.detail


def test_written_path_through_a_symlinked_directory_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "pkg").symlink_to(outside)
    docs = documents()
    docs["run.json"]["file_edits"][0]["path"] = "pkg/app.py"
    folder = make_run(checkout, docs)
    with pytest.raises(CaseError) as excinfo:
        read_artefacts(folder, checkout)
    assert "resolves outside the checkout" in excinfo.value.detail


def test_written_path_through_a_symlink_loop_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    docs = documents()
    docs["run.json"]["file_edits"][0]["path"] = "a/app.py"
    error = unreadable(tmp_path, docs)
    assert "cannot be resolved" in error.detail


@pytest.mark.parametrize(
    "mutate,expected",
    [
        (lambda d: d.__setitem__("findings.json", []), "findings.json: top level: expected an object"),
        (lambda d: d["findings.json"].pop("findings"), "findings.json: findings: missing"),
        (lambda d: d["findings.json"].__setitem__("findings", {}), "findings: expected a list"),
        (lambda d: d["findings.json"]["findings"].__setitem__(0, "x"), "findings[0]: expected an object"),
        (lambda d: d["findings.json"]["findings"][0].__setitem__("line", "3"), "findings[0].line"),
        (lambda d: d["findings.json"]["findings"][0].__setitem__("line", 0), "findings[0].line"),
        (lambda d: d["findings.json"]["findings"][0].__setitem__("line", True), "findings[0].line"),
        (lambda d: d["findings.json"]["findings"][0].__setitem__("symbol", 5), "findings[0].symbol"),
        (lambda d: d["findings.json"]["findings"][0].pop("kind"), "findings[0].kind"),
        (lambda d: d["plan.json"]["edits"][0].__setitem__("status", None), "edits[0].status"),
        (lambda d: d["run.json"].pop("file_edits"), "run.json: file_edits: missing"),
        (lambda d: d["run.json"]["withheld"][0].__setitem__("bail", None), "withheld[0].bail"),
        (lambda d: d["run.json"].__setitem__("exit_code", "6"), "run.json: exit_code"),
        (lambda d: d["run.json"].__setitem__("model", []), "run.json: model"),
        (lambda d: d["run.json"].__setitem__("run_id", "20261202T000000Z-ffffffff"), "run_id"),
        (
            lambda d: d["run.json"].__setitem__("model", {"provider": "openai_compat", "tokens_in": -1}),
            "model.tokens_in",
        ),
    ],
)
def test_wrong_shapes(tmp_path: Path, mutate: Any, expected: str) -> None:
    docs = documents()
    mutate(docs)
    assert expected in unreadable(tmp_path, docs).detail


def test_deeply_nested_json_is_an_error_not_a_crash(tmp_path: Path) -> None:
    docs = documents()
    docs["findings.json"] = "[" * 100000 + "]" * 100000
    unreadable(tmp_path, docs)


def test_copy_without_patch_then_read_back(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    folder = make_run(checkout)
    (folder / "patch.diff").write_text("diff --git a/app.py b/app.py\n")
    (folder / "REPORT.md").write_text("# report")
    dest = tmp_path / "artefacts"
    assert copy_artefacts(folder, dest, publish_patch=False) == ["findings.json", "plan.json", "run.json"]
    assert sorted(p.name for p in dest.iterdir()) == ["findings.json", "plan.json", "run.json"]
    assert load_artefacts_dir(dest) == read_artefacts(folder, checkout)


def test_copy_with_patch(tmp_path: Path) -> None:
    folder = make_run(tmp_path / "checkout")
    (folder / "patch.diff").write_text("diff\n")
    dest = tmp_path / "artefacts"
    assert copy_artefacts(folder, dest, publish_patch=True) == ["findings.json", "plan.json", "run.json", "patch.diff"]
    assert (dest / "patch.diff").read_text() == "diff\n"


def test_copy_skips_symlinks_and_missing_files(tmp_path: Path) -> None:
    folder = make_run(tmp_path / "checkout")
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    (folder / "patch.diff").symlink_to(secret)
    (folder / "plan.json").unlink()
    dest = tmp_path / "artefacts"
    assert copy_artefacts(folder, dest, publish_patch=True) == ["findings.json", "run.json"]
    assert not (dest / "patch.diff").exists()


def test_copy_refuses_a_symlinked_folder(tmp_path: Path) -> None:
    folder = make_run(tmp_path / "checkout")
    link = tmp_path / "link"
    link.symlink_to(folder)
    with pytest.raises(CaseError) as excinfo:
        copy_artefacts(link, tmp_path / "dest", publish_patch=False)
    assert excinfo.value.reason == "run_folder_unreadable"


def test_reading_back_a_corrupt_copy_is_a_regrade_error(tmp_path: Path) -> None:
    dest = tmp_path / "artefacts"
    dest.mkdir()
    for name, data in documents().items():
        (dest / name).write_text(json.dumps(data))
    (dest / "run.json").write_text("nope")
    with pytest.raises(CaseError) as excinfo:
        load_artefacts_dir(dest)
    assert reason_of(excinfo) == ("regrade", "run_folder_unreadable")
    assert "run.json: not JSON" in excinfo.value.detail


def test_read_back_checks_paths_lexically(tmp_path: Path) -> None:
    dest = tmp_path / "artefacts"
    dest.mkdir()
    docs = documents()
    docs["plan.json"]["edits"][0]["path"] = "/abs.py"
    for name, data in docs.items():
        (dest / name).write_text(json.dumps(data))
    with pytest.raises(CaseError, match="is absolute"):
        load_artefacts_dir(dest)


def test_artefacts_is_frozen() -> None:
    artefacts = Artefacts((), (), (), (), None, False, None, None, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        artefacts.exit_code = 1  # type: ignore[misc]
    assert artefacts.refused == ()


@pytest.mark.parametrize(
    "license,publishable",
    [
        ("MIT", True),
        ("BSD-2-Clause", True),
        ("BSD-3-Clause", True),
        ("BSD-4-Clause", True),
        ("Apache-2.0", True),
        ("ISC", True),
        ("mit", True),
        (" MIT ", True),
        ("MIT OR GPL-3.0-only", True),
        ("MIT AND Apache-2.0", True),
        ("MIT AND GPL-3.0-only", False),
        ("GPL-3.0-only", False),
        ("AGPL-3.0", False),
        ("LGPL-2.1", False),
        ("MPL-2.0", False),
        ("Apache-1.1", False),
        ("MIT-0", False),
        ("0BSD", False),
        ("BSD", False),
        ("Unlicense", False),
        ("none", False),
        ("NOASSERTION", False),
        ("", False),
        (None, False),
        ("(MIT OR GPL-3.0)", False),
        ("Apache-2.0 WITH LLVM-exception", False),
    ],
)
def test_patch_publishable(license: str | None, publishable: bool) -> None:
    assert patch_publishable(license) is publishable


def test_no_file_is_left_half_written(tmp_path: Path) -> None:
    folder = make_run(tmp_path / "checkout")
    dest = tmp_path / "artefacts"
    copy_artefacts(folder, dest, publish_patch=False)
    assert not [name for name in os.listdir(dest) if name.startswith(".")]
