"""Build small, valid case files for plugin tests; each test breaks exactly what it needs."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

SHA = "0123456789abcdef0123456789abcdef01234567"


def case_row(owner: str, name: str, **overrides: Any) -> dict[str, Any]:
    """A valid corpus case row for ``owner/name`` with one auto import row."""
    row: dict[str, Any] = {
        "id": f"{owner}__{name}",
        "provider": "gemini",
        "change": "google-generativeai-to-google-genai",
        "from_version": "0.8.6",
        "to_version": "2.24.0",
        "full_name": f"{owner}/{name}",
        "owner": owner,
        "repo": f"https://github.com/{owner}/{name}",
        "sha": SHA,
        "license": "MIT",
        "split": "dev",
        "pattern_key": ["google.generativeai"],
        "python": "cpython-3.12.9-macos-aarch64-none",
        "install": [],
        "test_cmd": None,
        "tests_require_network": False,
        "has_test_files": False,
        "ground_truth": {
            "what_it_is": "A test repository.",
            "files_read": ["app.py"],
            "call_sites": [
                {"path": "app.py", "line": 1, "kind": "import", "symbol": "google.generativeai", "label": "auto"}
            ],
            "manifests": [],
            "must_not_report": [],
            "tests_cover_change": False,
            "tests_cover_change_why": "No tests.",
        },
        "reviewer": "tester",
        "reviewed_at": "2026-12-01",
        "notes": "Built for a test.",
    }
    for key, value in overrides.items():
        row[key] = value
    return row


def control_row(owner: str, name: str, **overrides: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "control": "already-migrated",
        "shape": "already on the new SDK",
        "full_name": f"{owner}/{name}",
        "owner": owner,
        "repo": f"https://github.com/{owner}/{name}",
        "sha": SHA,
        "license": "MIT",
        "witness": "app.py:1",
        "query": "from google import genai",
        "must_produce": "no finding of an actionable kind and no dependency pin",
        "reviewer": "tester",
        "reviewed_at": "2026-12-01",
        "notes": "Already migrated.",
    }
    row.update(overrides)
    return row


def case_file(
    cases: list[dict[str, Any]], controls: list[dict[str, Any]] | None = None, round: int = 2
) -> dict[str, Any]:
    return {
        "round": round,
        "reviewer": "tester",
        "reviewed_at": "2026-12-01",
        "from_version": "0.8.6",
        "to_version": "2.24.0",
        "cases": copy.deepcopy(cases),
        "controls": copy.deepcopy(controls or []),
    }


def write(path: Path, data: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def standard(round: int = 2) -> dict[str, Any]:
    """Three cases (two dev, one holdout, one with tests) and one control."""
    return case_file(
        [
            case_row("zeta", "app", split="holdout"),
            case_row("alpha", "navamai"),
            case_row(
                "beta",
                "tested",
                test_cmd="python -m pytest -q",
                install=["uv pip install pytest"],
                has_test_files=True,
            ),
        ],
        [control_row("gamma", "migrated")],
        round=round,
    )
