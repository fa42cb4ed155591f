"""A run folder as obelize writes one, built document by document, for the tests that corrupt it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_obelize_bench._util.case_error import CaseError

RUN_ID = "20261202T101927Z-1234d9ad"


def finding(
    path: str = "app.py",
    line: int = 1,
    kind: str = "import",
    symbol: str | None = "google.generativeai",
    status: str = "eligible",
    bail: str | None = None,
) -> dict[str, Any]:
    return {
        "path": path,
        "line": line,
        "column": 0,
        "kind": kind,
        "confidence_reason": "alias_resolved",
        "symbol": symbol,
        "evidence": None,
        "scan_status": status,
        "bail": bail,
        "caused_by": None,
    }


def edit(
    path: str = "app.py",
    line: int = 1,
    status: str = "auto",
    rule: str | None = "p:rename-import",
    reason: str | None = None,
) -> dict[str, Any]:
    return {
        "path": path,
        "line": line,
        "status": status,
        "rule_id": rule,
        "reason": reason,
        "caused_by": None,
        "warnings": [],
    }


def documents() -> dict[str, Any]:
    return {
        "findings.json": {
            "obelize_version": "0.8.0",
            "packs": [],
            "counts": {},
            "findings": [
                finding(),
                finding(
                    "requirements.txt", 1, "manifest", "google-generativeai", "needs_review", "repo_not_fully_migrated"
                ),
                finding("broken.py", 4, "parse_error", None, "unsupported", "input_does_not_parse"),
            ],
        },
        "plan.json": {
            "obelize_version": "0.8.0",
            "packs": [],
            "files": [],
            "edits": [
                edit(),
                edit("requirements.txt", 1, "auto", "p:manifest-dependency"),
                edit("requirements.txt", 1, "needs_review", "p:manifest-dependency", "repo_not_fully_migrated"),
            ],
        },
        "run.json": {
            "run_id": RUN_ID,
            "obelize_version": "0.8.0",
            "mode": "apply",
            "exit_code": 6,
            "file_edits": [
                {
                    "path": "app.py",
                    "before_sha256": "0" * 64,
                    "after_sha256": "1" * 64,
                    "hunks": 1,
                    "rules": [],
                    "proposals": [],
                },
                {"path": "requirements.txt"},
            ],
            "refused": [],
            "withheld": [
                {
                    "path": "requirements.txt",
                    "line": 1,
                    "symbol": "google-generativeai",
                    "bail": "repo_not_fully_migrated",
                    "caused_by": None,
                },
                {"path": "broken.py", "line": 4, "symbol": None, "bail": "input_does_not_parse", "caused_by": None},
            ],
            "model": None,
        },
    }


def make_run(checkout: Path, docs: dict[str, Any] | None = None, run_id: str = RUN_ID) -> Path:
    folder = checkout / ".obelize" / "runs" / run_id
    folder.mkdir(parents=True)
    (checkout / ".obelize" / "latest").write_text(run_id + "\n")
    for name, data in (documents() if docs is None else docs).items():
        if isinstance(data, bytes):
            (folder / name).write_bytes(data)
        else:
            (folder / name).write_text(data if isinstance(data, str) else json.dumps(data))
    return folder


def reason_of(excinfo: pytest.ExceptionInfo[CaseError]) -> tuple[str, str]:
    return excinfo.value.step, excinfo.value.reason


__all__ = ["RUN_ID", "documents", "edit", "finding", "make_run", "reason_of"]
