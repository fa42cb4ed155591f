"""Fixtures the tests of case/ share."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_obelize_bench.case.environment import (
    Interpreter,
    create_venv,
)
from pytest_obelize_bench.isolation.steps import StepRunner
from tests.helpers.environment_install import HARNESS_BIN, HARNESS_KEY, activate, make_runner, venv_of


@pytest.fixture(scope="session")
def uv_cache(index_uv_cache: Path) -> Path:
    """The shared uv cache: a test that asks for it installs from the package index (so it is slow)."""
    return index_uv_cache


@pytest.fixture
def runner(tmp_path: Path, uv_cache: Path) -> StepRunner:
    return make_runner(tmp_path / "work", "owner__repo", uv_cache)


@pytest.fixture
def venv_runner(runner: StepRunner) -> tuple[StepRunner, Interpreter]:
    interpreter = create_venv(runner, key=HARNESS_KEY, policy="exact", venv=venv_of(runner), search_path=[HARNESS_BIN])
    activate(runner, interpreter)
    return runner, interpreter
