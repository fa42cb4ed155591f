"""The live status line of a real round: on a terminal, serial and under -n 2; never in a log file.

The round runs on a pseudo-terminal, as a person's shell gives it one. In a serial round the case
runs in the controller's own process, where pytest captures a running test's output: the line
must reach the terminal all the same. The case's suite outlasts one repaint, so the line is due
however quickly the rest of the round goes (a one-case round can end inside the first interval).
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_obelize_bench.session.progress import INTERVAL_S
from tests.helpers import rounds

RUNNING = "running 1: ann__clean "


def on_a_terminal(args: list[str], project: Path) -> tuple[int, str]:
    """Run ``args`` with a pseudo-terminal as its standard streams; its exit status and all it showed."""
    master, slave = pty.openpty()
    env = rounds.inner_environment()
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(args, cwd=project, env=env, stdin=slave, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    shown = bytearray()
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal's other side closed: the program ended
            break
        if not chunk:
            break
        shown += chunk
    status = proc.wait(timeout=600)
    os.close(master)
    return status, shown.decode("utf-8", errors="replace")


#: A suite that runs past one repaint of the status line, whatever the machine's speed.
SLOW_SUITE = f"import time\ntime.sleep({INTERVAL_S + 0.5})\n"


def _project(tmp_path: Path, row: dict[str, Any]) -> Path:
    """A project whose case file holds ``row`` alone."""
    rounds.write_case_file(tmp_path / "project" / "cases" / "cases.yaml", [row])
    return tmp_path / "project"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return _project(tmp_path, rounds.case_row_from_fixture("clean", "ann", tmp_path))


@pytest.fixture
def slow_project(tmp_path: Path) -> Path:
    """The one case, with a suite that outlasts a repaint."""
    row = rounds.case_row_from_fixture("clean", "ann", tmp_path, test_cmd="python slow_suite.py", has_test_files=True)
    return _project(tmp_path, rounds.with_files(row, tmp_path, {"slow_suite.py": SLOW_SUITE}))


def round_args(project: Path, *extra: str) -> list[str]:
    work = project.parent / "work"
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--bench-round=2", "--bench-allow-dirty",
            "--bench-interpreter=minor", "--bench-no-summary", f"--bench-work={work}", *extra]  # fmt: skip


@pytest.mark.usefixtures("index_uv_cache")
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "n2"])
def test_the_status_line_shows_on_a_terminal(slow_project: Path, workers: list[str]) -> None:
    status, shown = on_a_terminal(round_args(slow_project, *workers), slow_project)
    assert status == 0, shown[-3000:]
    assert RUNNING in shown, shown[-3000:]
    # drawn after what pytest printed, with the cursor put back, and cleared at the end
    assert "\x1b7  running 1: ann__clean" in shown and shown.count("\x1b7") == shown.count("\x1b8")


@pytest.mark.usefixtures("index_uv_cache")
def test_no_status_line_when_the_output_is_not_a_terminal(project: Path) -> None:
    done = subprocess.run(
        round_args(project), cwd=project, env=rounds.inner_environment(), capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert "running 1" not in done.stdout + done.stderr and "\x1b7" not in done.stdout
