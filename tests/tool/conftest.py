"""Fixtures the tests of tool/ share."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_obelize_bench.tool.info import ToolInfo
from pytest_obelize_bench.tool.venv import resolve_tool


@pytest.fixture(scope="module")
def installed() -> ToolInfo:
    return resolve_tool(None, tool_root=Path("/nonexistent-tool-root"))
