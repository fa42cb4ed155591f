"""What the suite's own conftest decides for every test run: how many workers ``-n auto`` starts,
and that hypothesis's wall-clock deadline is off."""

from __future__ import annotations

import pytest
from hypothesis import settings

from tests.helpers.workers import WORKERS_PER_CORE, auto_workers, usable_cores


def test_auto_starts_two_workers_a_core_unless_the_environment_names_a_count() -> None:
    assert auto_workers(2, None, benchmark=False) == 4 and auto_workers(1, None, benchmark=False) == 2
    assert auto_workers(0, None, benchmark=False) == 2  # no usable core reported: still one core's worth
    assert auto_workers(2, "3", benchmark=False) is None  # xdist's own hook reads PYTEST_XDIST_AUTO_NUM_WORKERS
    assert auto_workers(2, None, benchmark=True) is None  # a benchmark session: xdist's one a core


def test_the_hook_that_answers_for_auto_is_the_suites(
    pytestconfig: pytest.Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    hook = pytestconfig.pluginmanager.hook.pytest_xdist_auto_num_workers
    assert hook(config=pytestconfig) == usable_cores() * WORKERS_PER_CORE
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "3")
    assert hook(config=pytestconfig) == 3  # xdist's, reading the variable


def test_hypothesis_runs_without_its_deadline() -> None:
    assert settings().deadline is None
