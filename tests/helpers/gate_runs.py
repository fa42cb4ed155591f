"""The gate run through its console entry on a promotion project, and what it decided."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pytest_obelize_bench.promotion.gate import run_gate

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def gate(project: Path, incumbent: str = "round-2:old", *candidates: str) -> tuple[int, str]:
    out = io.StringIO()
    status = run_gate(
        project / "cases" / "promotion.yaml",
        incumbent,
        list(candidates or ["round-2:new"]),
        results_dir=project / "results",
        cases_path=project / "cases" / "cases.yaml",
        out=out,
        now=NOW,
    )
    return status, out.getvalue()


def decisions(project: Path) -> dict[str, dict[str, Any]]:
    folder = project / "results" / "decisions"
    return {p.name: json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))}


def decision(project: Path) -> dict[str, Any]:
    (document,) = decisions(project).values()
    return document


def reason_text(document: dict[str, Any], rule: str) -> str:
    checks = [r for r in document["reasons"] if r["rule"] == rule]
    return str(next((r["text"] for r in checks if not r["holds"]), checks[0]["text"]))


def half_verified(extra: dict[int, str] | None = None) -> dict[int, str]:
    """Cases 0-9 verified on every attempt (the gated half), and any changes."""
    return {**dict.fromkeys(range(10), "v"), **(extra or {})}


__all__ = ["NOW", "decision", "decisions", "gate", "half_verified", "reason_text"]
