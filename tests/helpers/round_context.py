"""A round's context for tests of the pure and step-level parts, without a session to build it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_obelize_bench.case.context import RoundContext
from pytest_obelize_bench.tool.info import ToolInfo


def tool(version: str = "0.8.0", **fields: Any) -> ToolInfo:
    """The tool as a release from the index names it, with ``fields`` over the defaults."""
    given: dict[str, Any] = {
        "argv_prefix": ("python",),
        "python": "python",
        "version": version,
        "commit": None,
        "tree_dirty": None,
        "source": "requirement",
        "spec": f"obelize=={version}",
        **fields,
    }
    return ToolInfo(**given)


def round_context(tmp_path: Path, **fields: Any) -> RoundContext:
    """Round 2 of a project at ``tmp_path`` (work root ``work``, results ``results``), ``fields`` over it."""
    given: dict[str, Any] = {
        "mode": "round",
        "round": 2,
        "project_root": str(tmp_path),
        "cases_path": str(tmp_path / "cases.yaml"),
        "fixtures_dir": str(tmp_path),
        "results_dir": str(tmp_path / "results"),
        "work_root": str(tmp_path / "work"),
        "tool": tool(),
        **fields,
    }
    return RoundContext(**given)
