"""Exclusive locks across processes: for what xdist workers must not build twice, and one publisher
of a round at a time (waiting a bounded time, then naming the holder)."""

from __future__ import annotations

import fcntl
import os
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pytest_obelize_bench._util.clock import utc_now


@contextmanager
def exclusive_lock(path: Path) -> Iterator[None]:
    """Hold an advisory lock on ``path`` (created if missing) for the block: one holder at a time."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


class LockBusy(Exception):
    """Another process held the lock for the whole wait; the message names it."""


#: How long a publisher waits for another to finish before it says who holds the lock.
DEFAULT_WAIT_S = 120.0


@contextmanager
def holder_lock(path: Path, what: str, wait: float = DEFAULT_WAIT_S) -> Iterator[None]:
    """Hold ``path`` exclusively for the block, waiting at most ``wait`` seconds for it.

    The holder writes who it is (pid, host, command, since when) into the file, so a process
    that gives up can say who holds it (``LockBusy``). The lock is the kernel's (``flock``): a
    holder that dies releases it, and a stale line in the file means nothing.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = os.pread(fd, 500, 0).decode("utf-8", "replace").strip() or "an unknown process"
                    raise LockBusy(f"{what} is locked by {holder} ({path}); gave up after {wait:g}s") from None
                time.sleep(0.05)
        stamp = utc_now()
        command = " ".join(sys.argv)[:200]
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()} ({command}) since {stamp}\n".encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
