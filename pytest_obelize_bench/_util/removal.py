"""Removing a large tree: its files unlinked by several threads at once, then ``shutil.rmtree``.

Why: a finished case's checkout holds a venv of about 2,600 entries, most of them symlinks into
the uv cache, and on a disk that discards freed blocks each unlink waits on the device: one after
another they took seconds per case, the longest part of a small case. Waits on the device overlap
across threads, so the files go first, several directories at a time; what is left (the emptied
directories, and anything the first pass could not remove, such as a read-only folder a suite left)
is then removed by ``shutil.rmtree`` as before, which raises or calls ``onexc`` as it always did.

The first pass walks with ``os.fwalk`` and unlinks relative to each directory's own descriptor, so
like ``shutil.rmtree`` it never follows a symlink out of the tree: a symlink is removed, not entered.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

#: Threads unlinking at once; they wait on the device, not on the CPU.
WORKERS = 8
#: Directories handed to the threads and not yet emptied (each holds an open descriptor).
IN_FLIGHT = 64


def _is_symlink(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _unlink_each(dir_fd: int, names: list[str]) -> None:
    try:
        for name in names:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)


def _unlink_files(root: Path) -> None:
    """Unlink every non-directory under ``root`` (symlinks to directories included), best effort."""
    slots = threading.BoundedSemaphore(IN_FLIGHT)

    def release(_done: Future[None]) -> None:
        slots.release()

    with ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="remove") as pool:
        for _top, dirs, files, dir_fd in os.fwalk(root, follow_symlinks=False):
            names = files + [name for name in dirs if _is_symlink(name, dir_fd)]
            if not names:
                continue
            slots.acquire()
            own = os.dup(dir_fd)  # fwalk closes its descriptor when it moves on
            try:
                future = pool.submit(_unlink_each, own, names)
            except BaseException:
                os.close(own)
                slots.release()
                raise
            future.add_done_callback(release)


def remove_tree(path: Path, onexc: Callable[[Callable[..., Any], str, BaseException], object] | None = None) -> None:
    """Remove the directory tree at ``path`` as ``shutil.rmtree(path, onexc=onexc)`` does, sooner."""
    if Path(path).is_dir() and not Path(path).is_symlink():
        _unlink_files(Path(path))
    shutil.rmtree(path, onexc=onexc)


def remove_path(path: Path) -> None:
    """Remove whatever is at ``path``: a file or symlink (never followed), or a directory tree,
    including read-only parts a suite left in it; nothing there is no error."""

    def retry(function: Callable[[str], object], target: str, _error: BaseException) -> None:
        parent = os.path.dirname(target)
        for each in (parent, target):
            with contextlib.suppress(OSError):
                os.chmod(each, os.stat(each).st_mode | stat.S_IRWXU)
        function(target)

    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        remove_tree(path, onexc=retry)


__all__ = ["remove_path", "remove_tree"]
