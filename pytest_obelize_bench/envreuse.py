"""Environment reuse: a pinned install whose environment another case already resolved runs offline.

Measured on a 2-core machine with a warm uv cache: ``uv pip install google-generativeai==0.8.6``
into a fresh venv takes about 2.3 s online (uv revalidates every index page) and 0.15 s with
``--offline`` (the same wheels hard-linked from the cache); copying a finished 180 MB venv took
longer than either.  So cases share the *resolution*, not the venv: each case still gets its own
venv, its own install and its own ``importlib.metadata`` check.

Offline is only as good as the cached index pages.  A page fetched after the round's
``exclude_newer`` lists every file an online install at that cutoff could choose, so an offline
install resolves the same.  The first online install of an environment writes a mark (its
environment key, and when it ran); a later install with the same key, a mark no older than
``exclude_newer`` and the same uv cache goes offline.  If the offline install fails (a pruned
cache), the install runs online as before.

Identical environments: the same interpreter used, the same ``exclude_newer``, the same install
commands (only ones that cannot read the checkout: ``uv pip install name==version``), and the
same pins installed before this one.  Anything else has no key and always installs online.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from .errors import CaseError
from .locks import exclusive_lock

_PINNED = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9,._-]+\])?==[A-Za-z0-9][A-Za-z0-9.+!_-]*")
_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
MARKS_DIR = "env-marks"


def commands_are_shareable(commands: Sequence[str]) -> bool:
    """True when no install command can read the checkout: each is ``uv pip install`` of exact pins."""
    for command in commands:
        try:
            words = shlex.split(command)
        except ValueError:
            return False
        if words[:3] != ["uv", "pip", "install"] or len(words) == 3:
            return False
        if not all(_PINNED.fullmatch(word) for word in words[3:]):
            return False
    return True


def environment_key(
    *,
    interpreter_used: str,
    exclude_newer: str | None,
    uv_cache: str | None,
    commands: Sequence[str],
    installs: Sequence[str],
) -> str | None:
    """The key of the environment ``installs`` (``dist==version``, in order) produce; None if unshared."""
    if not interpreter_used or not exclude_newer or not commands_are_shareable(commands):
        return None
    text = json.dumps(
        {
            "interpreter": interpreter_used,
            "exclude_newer": exclude_newer,
            "uv_cache": uv_cache or "",
            "commands": list(commands),
            "installs": list(installs),
        },
        sort_keys=True,
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def resolved_after(mark_text: str, exclude_newer: str) -> bool:
    """Whether a mark's online install ran at or after ``exclude_newer`` (so its pages are complete)."""
    try:
        at = datetime.strptime(json.loads(mark_text)["at"], _FORMAT).replace(tzinfo=UTC)
        cutoff = datetime.strptime(exclude_newer, _FORMAT).replace(tzinfo=UTC)
    except (ValueError, KeyError, TypeError):
        return False
    return at >= cutoff


class Marks:
    """The marks of online installs, one small file per environment key under ``<work>/env-marks``."""

    def __init__(self, work_root: Path) -> None:
        self.root = Path(work_root) / MARKS_DIR

    def _path(self, key: str) -> Path:
        if not re.fullmatch(r"[0-9a-f]{64}", key):
            raise ValueError(f"{key!r} is not an environment key")
        return self.root / f"{key}.json"

    def can_go_offline(self, key: str, exclude_newer: str) -> bool:
        path = self._path(key)
        if path.is_symlink() or not path.is_file():
            return False
        try:
            with path.open("rb") as handle:
                text = handle.read(4096).decode("utf-8", "replace")
        except OSError:
            return False
        return resolved_after(text, exclude_newer)

    def mark(self, key: str, at: str) -> None:
        """Record an online install of ``key`` that started at ``at`` (written atomically)."""
        path = self._path(key)
        self.root.mkdir(parents=True, exist_ok=True)
        with exclusive_lock(self.root / ".lock"):
            temporary = path.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_text(json.dumps({"at": at}) + "\n", encoding="utf-8")
            os.replace(temporary, path)


def utc_now() -> str:
    return datetime.now(UTC).strftime(_FORMAT)


def reuse_install(install: Callable[[bool], str], *, marks: Marks, key: str | None, exclude_newer: str | None) -> str:
    """Run ``install(offline)`` offline when ``key`` was resolved online at or after the cutoff.

    An online install marks its key once the install itself succeeded, even when the version
    check that follows fails: the cache then holds what that resolution chose either way.
    """
    offline = key is not None and exclude_newer is not None and marks.can_go_offline(key, exclude_newer)
    started = utc_now()
    try:
        observed = install(offline)
    except CaseError as error:
        if key is not None and not offline and error.reason == "version_mismatch":
            marks.mark(key, started)
        raise
    if key is not None and not offline:
        marks.mark(key, started)
    return observed


__all__ = [
    "MARKS_DIR",
    "Marks",
    "commands_are_shareable",
    "environment_key",
    "resolved_after",
    "reuse_install",
    "utc_now",
]
