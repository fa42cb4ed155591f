"""Waiting for a step's process to end: real children, never reaped by the wait; and what that costs a step."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_obelize_bench.isolation import executor, process_group
from pytest_obelize_bench.isolation.process_group import has_exited, wait_for_exit


def child(seconds: float) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({seconds})"])


def test_the_end_is_seen_when_it_happens_and_the_child_stays_unreaped() -> None:
    proc = child(0.3)
    started = time.monotonic()
    assert wait_for_exit(proc.pid, started + 30)
    waited = time.monotonic() - started
    # A zombie until the executor reaps it: its pid, and so its group id, stay reserved.
    assert has_exited(proc.pid)
    assert os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    assert proc.wait() == 0
    assert 0.25 <= waited < 5


def test_a_child_still_running_at_the_deadline_is_not_over() -> None:
    proc = child(30)
    try:
        started = time.monotonic()
        assert not wait_for_exit(proc.pid, started + 0.3)
        assert 0.25 <= time.monotonic() - started < 5
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


def test_a_past_deadline_answers_at_once() -> None:
    proc = child(30)
    try:
        assert not wait_for_exit(proc.pid, time.monotonic() - 1)
    finally:
        proc.kill()
        proc.wait()


def test_a_child_reaped_already_is_over() -> None:
    proc = child(0)
    proc.wait()
    assert wait_for_exit(proc.pid, time.monotonic() + 30)


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="no pidfd on this system")
def test_without_a_pidfd_the_wait_polls_to_the_same_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "pidfd_open")
    proc = child(0.2)
    assert wait_for_exit(proc.pid, time.monotonic() + 30)
    assert proc.wait() == 0


def test_a_step_that_leaves_nothing_behind_reads_the_process_table_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each reading costs about 0.3 ms per 70 processes, at the end of every step."""
    readings: list[int] = []

    def counted(pgid: int) -> bool:
        readings.append(pgid)
        return process_group.group_has_live_member(pgid)

    monkeypatch.setattr(executor, "group_has_live_member", counted)
    done = executor.ProcessExecutor().run(
        [sys.executable, "-c", "pass"], cwd=tmp_path, env={"PATH": os.defpath}, timeout=30, log=tmp_path / "step.log"
    )
    assert done.exit_code == 0
    assert len(readings) == 1


@pytest.mark.skipif(not process_group.HAVE_PROC, reason="reads /proc")
def test_a_group_is_alive_while_a_member_runs_and_not_once_it_is_a_zombie() -> None:
    # Its name holds what a field parser could take for a zombie's state and another group.
    disguise = "import time; open('/proc/self/comm', 'w').write('x) Z 1 ('); time.sleep(60)"
    proc = subprocess.Popen([sys.executable, "-c", disguise], start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while Path(f"/proc/{proc.pid}/comm").read_text().strip() != "x) Z 1 (" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert process_group.group_has_live_member(proc.pid)
        proc.kill()
        assert wait_for_exit(proc.pid, time.monotonic() + 30)  # a zombie now: exited, not reaped
        assert not process_group.group_has_live_member(proc.pid)
    finally:
        proc.kill()
        proc.wait()
    assert not process_group.group_has_live_member(proc.pid)
