"""A step's process group and its output pipe: the low-level parts ``ProcessExecutor`` is made of.

Kept apart from the executor so the seam (``executor.py``) reads as what a step gets, and this
module as how a group of untrusted processes is watched, drained and stopped.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

#: Bytes read from a step's pipe at a time.
CHUNK = 64 * 1024


class Pump:
    """Copies a pipe into the log up to a cap, then drains and counts the rest."""

    def __init__(self, fd: int, sink: BinaryIO, cap: int) -> None:
        self.fd = fd
        self.sink = sink
        self.cap = cap
        self.written = 0
        self.dropped = 0
        self.last_byte = b"\n"
        self.stop = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._loop, name="obelize-bench-pump", daemon=True)

    def _wait_readable(self) -> bool:
        if hasattr(select, "poll"):
            poller = select.poll()
            poller.register(self.fd, select.POLLIN | select.POLLHUP | select.POLLERR)
            return bool(poller.poll(50))
        ready, _, _ = select.select([self.fd], [], [], 0.05)
        return bool(ready)

    def _loop(self) -> None:
        try:
            while not self.stop.is_set():
                if not self._wait_readable():
                    continue
                chunk = os.read(self.fd, CHUNK)
                if not chunk:
                    return
                room = self.cap - self.written
                if room > 0:
                    kept = chunk[:room]
                    self.sink.write(kept)
                    self.written += len(kept)
                    self.last_byte = kept[-1:]
                    self.dropped += len(chunk) - len(kept)
                else:
                    self.dropped += len(chunk)
        except BaseException as error:  # reported by the caller, never lost
            self.error = error


HAVE_PROC = Path("/proc/self/stat").exists()
#: Enough of ``/proc/PID/stat`` for its state and process group, which follow only the pid and
#: the bracketed name (at most 64 bytes).
STAT_PREFIX_BYTES = 1024


def group_has_live_member(pgid: int) -> bool:
    """Whether any process of group ``pgid`` is alive, read from /proc (zombies do not count).

    Zombies are excluded because an orphan killed in a container whose PID 1 does not reap stays a
    zombie forever, and ``killpg(pgid, 0)`` would call its group alive for good.
    """
    # Runs after every step: bare descriptors and one short read a process take it from 0.7 ms
    # to 0.3 ms on a machine of 70 processes (the fields it needs come first, after the name).
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fd = os.open(f"/proc/{name}/stat", os.O_RDONLY)
        except OSError:
            continue
        try:
            stat = os.read(fd, STAT_PREFIX_BYTES)
        except OSError:
            continue
        finally:
            os.close(fd)
        fields = stat[stat.rfind(b")") + 2 :].split(None, 3)
        if len(fields) < 3:
            continue
        state, group = fields[0], fields[2]
        if state not in (b"Z", b"X") and int(group) == pgid:
            return True
    return False


def group_answers_signal(pgid: int) -> bool:
    """Without /proc (macOS): whether signal 0 reaches anything in group ``pgid``."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def has_exited(pid: int) -> bool:
    """Whether ``pid`` has exited, without reaping it (so its pid and group id stay reserved)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def wait_for_exit(pid: int, deadline: float) -> bool:
    """Whether ``pid`` exited by ``deadline``, without reaping it.

    Woken by the kernel through a pidfd where there is one (Linux 5.3 and newer), so a step's end
    is seen when it happens rather than at the next tick of a poll; polled otherwise.
    """
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # no pidfd here, or the pid is gone already
        return wait_until(lambda: has_exited(pid), deadline)
    try:
        watch = select.poll()
        watch.register(pidfd, select.POLLIN)
        while not has_exited(pid):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            watch.poll(max(1, min(remaining, 60.0) * 1000))
        return True
    finally:
        os.close(pidfd)


def wait_until(predicate: Callable[[], bool], deadline: float) -> bool:
    delay = 0.001
    while True:
        if predicate():
            return True
        now = time.monotonic()
        if now >= deadline:
            return False
        time.sleep(min(delay, deadline - now))
        delay = min(delay * 2, 0.02)


__all__ = [
    "CHUNK",
    "HAVE_PROC",
    "Pump",
    "group_answers_signal",
    "group_has_live_member",
    "has_exited",
    "signal_group",
    "wait_for_exit",
    "wait_until",
]
