"""Fixtures the tests of plugin/ share: one real round of every fixture kind, run once per session
for every test that reads it (``tests/helpers/groups.py`` keeps those tests on one worker)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.helpers import rounds
from tests.helpers.round_project import build_project
from tests.helpers.rounds import run_pytest


@pytest.fixture(scope="session")
def serial_round(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    root = tmp_path_factory.mktemp("round")
    project = build_project(root)
    done = run_pytest(
        project,
        "--bench-round=2",
        "--bench-allow-dirty",
        "--bench-interpreter=minor",
        f"--bench-work={root / 'work'}",
        # Its own templates, not the suite run's: its first case builds one, so its record holds
        # every step of the protocol whatever ran before it (test_round.py reads them in order).
        rounds.own_templates(root / "work"),
        f"--junitxml={root / 'junit.xml'}",
        "-v",
        "-rT",
    )
    return project, done
