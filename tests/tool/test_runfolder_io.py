"""The bounded, no-symlink readers and the run-folder document models, on hostile input."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pytest_obelize_bench._util.safe_io import (
    UntrustedFileError,
    entry_kind,
    read_untrusted_json,
    read_untrusted_text,
    write_atomically,
)
from pytest_obelize_bench.grading.graded_facts import Finding, Withheld
from pytest_obelize_bench.tool.run_documents import (
    DocumentError,
    FindingsDocument,
    RunDocument,
    artefacts,
    parse_document,
)
from pytest_obelize_bench.tool.run_documents import PlanDocument as Plan


def one_line_naming(error: BaseException, path: Path) -> str:
    text = str(error)
    assert "\n" not in text and str(path) in text
    return text


def test_text_refuses_a_symlink_even_to_a_good_file(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(good)
    with pytest.raises(UntrustedFileError) as caught:
        read_untrusted_text(link, 100)
    assert "is a symlink" in one_line_naming(caught.value, link)
    assert caught.value.problem == "is a symlink"


@pytest.mark.parametrize(
    "content,problem",
    [
        (b"x" * 101, "larger than the 100 byte cap (101 bytes)"),
        (b"\xff{}", "is not UTF-8 text (line 1, byte 0)"),
    ],
)
def test_text_problems_are_one_line(tmp_path: Path, content: bytes, problem: str) -> None:
    path = tmp_path / "doc.json"
    path.write_bytes(content)
    with pytest.raises(UntrustedFileError) as caught:
        read_untrusted_text(path, 100)
    assert one_line_naming(caught.value, path) == f"{path}: {problem}"


def test_a_fifo_is_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "doc.json"
    os.mkfifo(fifo)
    with pytest.raises(UntrustedFileError, match="not a regular file"):
        read_untrusted_text(fifo, 100)


def test_missing_is_named(tmp_path: Path) -> None:
    with pytest.raises(UntrustedFileError) as caught:
        read_untrusted_text(tmp_path / "absent.json", 100)
    assert caught.value.problem == "missing"


@pytest.mark.parametrize(
    "content,problem",
    [("[1]", "expected a JSON object"), ("{", "not JSON"), ("[" * 100000, "not JSON")],
)
def test_json_must_be_one_object(tmp_path: Path, content: str, problem: str) -> None:
    path = tmp_path / "doc.json"
    path.write_text(content)
    with pytest.raises(UntrustedFileError) as caught:
        read_untrusted_json(path, 1 << 20)
    assert problem in one_line_naming(caught.value, path)


def test_json_object_is_returned(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    path.write_text('{"a": [1, 2]}')
    assert read_untrusted_json(path, 100) == {"a": [1, 2]}


def test_write_atomically_writes_text_and_bytes_and_leaves_no_temporary(tmp_path: Path) -> None:
    write_atomically(tmp_path / "sub" / "a.txt", "caf\u00e9\n")
    write_atomically(tmp_path / "sub" / "b.bin", b"\x00\xff")
    assert (tmp_path / "sub" / "a.txt").read_bytes() == "caf\u00e9\n".encode()
    assert (tmp_path / "sub" / "b.bin").read_bytes() == b"\x00\xff"
    assert sorted(os.listdir(tmp_path / "sub")) == ["a.txt", "b.bin"]


def test_write_atomically_gives_a_new_file_0644_and_keeps_a_replaced_file_s_mode(tmp_path: Path) -> None:
    write_atomically(tmp_path / "new.json", "{}\n")
    assert (tmp_path / "new.json").stat().st_mode & 0o777 == 0o644  # never mkstemp's private 0600
    (tmp_path / "kept.sh").write_text("old\n")
    (tmp_path / "kept.sh").chmod(0o750)
    write_atomically(tmp_path / "kept.sh", "new\n")
    assert (tmp_path / "kept.sh").stat().st_mode & 0o777 == 0o750
    (tmp_path / "link").symlink_to(tmp_path / "kept.sh")  # a link's own mode (0777) is never taken
    write_atomically(tmp_path / "link", "file\n")
    assert not (tmp_path / "link").is_symlink() and (tmp_path / "link").stat().st_mode & 0o777 == 0o644


def test_entry_kind_does_not_follow_links(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "f").write_text("")
    (tmp_path / "l").symlink_to(tmp_path / "d")
    kinds = [entry_kind(tmp_path / name) for name in ("d", "f", "l", "absent")]
    assert kinds == ["directory", "file", "symlink", "missing"]


# -- the document models ------------------------------------------------------------------------


def finding_row(**changes: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "path": "app.py",
        "line": 3,
        "kind": "call",
        "symbol": "google.generativeai.configure",
        "scan_status": "eligible",
        "bail": None,
        "evidence": "genai.configure(...)",  # a field obelize adds that grading never reads
    }
    row.update(changes)
    return row


def problem(model: Any, data: Any, document: str = "findings.json") -> str:
    with pytest.raises(DocumentError) as caught:
        parse_document(model, document, data)
    assert caught.value.document == document
    return caught.value.problem


def test_unread_fields_are_ignored_and_facts_come_out() -> None:
    findings = parse_document(FindingsDocument, "findings.json", {"findings": [finding_row()], "tool": "x"})
    plan = parse_document(Plan, "plan.json", {"edits": []})
    run = parse_document(
        RunDocument,
        "run.json",
        {
            "file_edits": [{"path": "app.py", "lines": [3]}],
            "withheld": [{"path": "b.py", "line": 2, "bail": "file_not_fully_migrated", "caused_by": ["x"]}],
            "model": {"provider": "none", "tokens_in": "not read"},
            "pack": "old-release field",
        },
    )
    facts = artefacts(findings, plan, run)
    assert facts.findings == (Finding("app.py", 3, "call", "google.generativeai.configure", "eligible", None),)
    assert facts.withheld == (Withheld("b.py", 2, None, "file_not_fully_migrated", ("x",)),)
    assert facts.written == ("app.py",)
    assert (facts.model_used, facts.llm_tokens_in, facts.refused, facts.run_id) == (False, None, (), None)


@pytest.mark.parametrize(
    "row,expected",
    [
        (finding_row(line=True), "findings[0].line: expected an integer >= 1, got a boolean"),
        (finding_row(line=2.0), "findings[0].line: expected an integer >= 1, got the number 2.0"),
        (finding_row(kind=None), "findings[0].kind: expected a string, got null"),
        (finding_row(path="C:/x.py"), "findings[0].path 'C:/x.py' is absolute"),
        (finding_row(path="a\\..\\b.py"), "findings[0].path 'a\\\\..\\\\b.py' leaves the checkout ('..')"),
        (finding_row(path=""), "findings[0].path '' is empty"),
    ],
)
def test_a_wrong_field_is_one_line_naming_it(row: dict[str, Any], expected: str) -> None:
    assert problem(FindingsDocument, {"findings": [row]}) == expected


def test_missing_field_of_a_row_reads_as_null() -> None:
    row = finding_row()
    del row["scan_status"]
    assert problem(FindingsDocument, {"findings": [row]}) == "findings[0].scan_status: expected a string, got null"


def test_counts_are_read_only_when_a_model_was_used() -> None:
    base: dict[str, Any] = {"file_edits": [], "withheld": []}
    used = {**base, "model": {"provider": "openai_compat", "tokens_in": 5, "tokens_out": 1, "cost_usd": 2}}
    run = parse_document(RunDocument, "run.json", used)
    facts = artefacts(
        parse_document(FindingsDocument, "f", {"findings": []}), parse_document(Plan, "p", {"edits": []}), run
    )
    assert (facts.model_used, facts.llm_tokens_in, facts.llm_tokens_out, facts.llm_cost_usd) == (True, 5, 1, 2.0)
    assert isinstance(facts.llm_cost_usd, float)
    bad = {**base, "model": {"provider": "openai_compat", "cost_usd": True}}
    assert problem(RunDocument, bad, "run.json") == "model.cost_usd: expected a non-negative number, got a boolean"


def test_run_id_must_be_one_path_component() -> None:
    data: dict[str, Any] = {"run_id": "../x", "file_edits": [], "withheld": []}
    assert problem(RunDocument, data, "run.json") == "run_id: expected a run id, got the string '../x'"
    data["run_id"] = 7
    assert problem(RunDocument, data, "run.json") == "run_id: expected a run id, got the number 7"
