"""What an arm left in its tree: changes against the pin, compile check, deleted key files, stamps.

Git never runs inside an arm's tree: the untouched ``base`` copy's repository is used with the
arm's tree as its work tree and a throw-away index, so nothing the arm wrote under ``.git`` (a
hook, a config, an external diff) is read.  Files are compiled in this process with ``compile``,
which parses and never executes, after a bounded, no-symlink read.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path

from pytest_obelize_bench._util.safe_io import UntrustedFileError, read_untrusted
from pytest_obelize_bench.comparison.rows import Change

MAX_SOURCE_BYTES = 8 * 1024 * 1024
MAX_STAMP_BYTES = 64
GIT_TIMEOUT_S = 120.0


def _git(base: Path, tree: Path, index: Path, *args: str) -> str:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "GIT_DIR": os.fspath(base / ".git"),
        "GIT_WORK_TREE": os.fspath(tree),
        "GIT_INDEX_FILE": os.fspath(index),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "HOME": os.fspath(index.parent),
        "LC_ALL": "C",
    }
    argv = ["git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "core.quotepath=off", *args]
    done = subprocess.run(
        argv, cwd=tree, env=env, capture_output=True, timeout=GIT_TIMEOUT_S, check=False, stdin=subprocess.DEVNULL
    )
    if done.returncode != 0:
        raise OSError(f"git {args[0]} failed: {done.stderr.decode('utf-8', 'replace').strip()[:300]}")
    return done.stdout.decode("utf-8", "replace")


#: The most of an arm's diff a comparison record keeps; a larger one is named, not kept.
MAX_DIFF_BYTES = 256 * 1024


def changes_against_pin(
    base: Path, tree: Path, sha: str, *, exclude: str, with_diff: bool = False
) -> tuple[list[Change], str | None]:
    """``git diff --numstat`` of ``tree`` against ``sha``, new files included, ``exclude`` left out;
    with ``with_diff``, the unified diff too (None over ``MAX_DIFF_BYTES``)."""
    with tempfile.TemporaryDirectory(prefix="index-") as scratch:
        index = Path(scratch) / "index"
        source = base / ".git" / "index"
        if source.is_file():
            shutil.copyfile(source, index)
        _git(base, tree, index, "add", "-A", "-N", "--", ".", f":(exclude){exclude}")
        common = ["--no-ext-diff", "--no-textconv", "--no-renames", "-z", sha, "--", ".", f":(exclude){exclude}"]
        numstat = _git(base, tree, index, "diff", "--numstat", *common)
        statuses = _git(base, tree, index, "diff", "--name-status", *common)
        diff = None
        if with_diff:
            text = _git(base, tree, index, "diff", *[arg for arg in common if arg != "-z"])
            diff = text if len(text.encode("utf-8")) <= MAX_DIFF_BYTES else None
    status_of: dict[str, str] = {}
    parts = statuses.split("\0")
    for code, path in zip(parts[0::2], parts[1::2], strict=False):
        if path:
            status_of[path] = "A" if code.startswith("A") else code[:1]
    changes = []
    for line in numstat.split("\0"):
        if not line:
            continue
        added, removed, path = line.split("\t", 2)
        changes.append(
            Change(
                path=path,
                added=None if added == "-" else int(added),
                removed=None if removed == "-" else int(removed),
                status=status_of.get(path, "M"),
            )
        )
    return sorted(changes, key=lambda change: change.path), diff


def compiles(tree: Path, written: Iterable[str]) -> bool:
    """Whether every written ``.py`` file parses; an unreadable or symlinked one does not."""
    for path in written:
        try:
            source = read_untrusted(tree / path, MAX_SOURCE_BYTES)
            compile(source, path, "exec", dont_inherit=True)
        except (UntrustedFileError, SyntaxError, ValueError):
            return False
    return True


def missing_files(tree: Path, paths: Iterable[str]) -> list[str]:
    """Key files no longer in the tree."""
    return sorted(path for path in set(paths) if not os.path.lexists(tree / path))


def read_stamp(path: Path) -> int | str:
    """A stamp's Unix time, or a one-line reason it is not one (missing, unreadable, not a number)."""
    if not os.path.lexists(path):
        return "no stamp was written"
    try:
        text = read_untrusted(path, MAX_STAMP_BYTES).decode("ascii").strip()
    except (UntrustedFileError, UnicodeDecodeError):
        return "the stamp is not a short ASCII file"
    if not text.isdigit():
        return f"the stamp {text[:20]!r} is not a Unix time"
    return int(text)


__all__ = ["MAX_DIFF_BYTES", "changes_against_pin", "compiles", "missing_files", "read_stamp"]
