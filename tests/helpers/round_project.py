"""A project whose case file holds every kind of fixture case, and the records its round writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.helpers import rounds

EXPECTED_TIERS = {
    "ann__clean": "verified_success",
    "bob__withheld-part": "partial",
    "cat__refused": "unsupported",
    "dan__breaks-suite": "wrong",
    "eve__control-migrated": "unsupported",
}


def build_project(root: Path) -> Path:
    project = root / "project"
    cases = [
        rounds.case_row_from_fixture("clean", "ann", root),
        rounds.case_row_from_fixture("withheld-part", "bob", root, split="holdout"),
        rounds.case_row_from_fixture("refused", "cat", root),
        rounds.case_row_from_fixture("breaks-suite", "dan", root, split="holdout"),
    ]
    url, sha = rounds.origin_from_fixture("control-migrated", root)
    control = {
        "control": "already-migrated",
        "shape": "already on the new SDK",
        "full_name": "eve/control-migrated",
        "owner": "eve",
        "repo": url,
        "sha": sha,
        "license": "MIT",
        "witness": "assistant.py:5",
        "query": "from google import genai",
        "must_produce": "no finding of an actionable kind and no dependency pin",
        "reviewer": "tester",
        "reviewed_at": "2026-12-01",
        "notes": "Already on the new SDK.",
    }
    rounds.write_case_file(project / "cases" / "cases.yaml", cases, [control])
    return project


def records_of(folder: Path) -> dict[str, dict[str, Any]]:
    return rounds.read_records(folder)


__all__ = ["EXPECTED_TIERS", "build_project", "records_of"]
