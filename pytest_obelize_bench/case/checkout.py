"""Step 1: the repository at its pinned commit, fetched shallow, optionally through a local cache.

The checkout is fetched by SHA, never by branch, and verified afterwards, so a record always names
the code that was measured.  With a cache, each repository is kept as a bare repository under
``<cache>/<owner>/<name>.git`` holding every pinned commit under ``refs/obelize-bench/<sha>``;
a rerun, or a second case of the same repository, then touches no network.  The ref keeps the
commit advertised to a fetching client (protocol v0 and v2 alike) and safe from ``git gc``.

Beside it, ``<cache>/<owner>/<name>.pins/<sha>`` keeps a copy of what the first shallow fetch of
that pin wrote (``.git/objects`` and ``.git/shallow``), taken before anything else touches the
checkout.  Every later checkout of the pin copies it in and checks the commit out: no fetch, whose
upload-pack rebuilds the shallow pack every time (a third of a second for a 27 MB repository).  It
is a copy, never a link, so nothing a case does to its own ``.git`` reaches the cache; a copy that
does not check out is removed and the pin fetched again.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench._util.locks import exclusive_lock
from pytest_obelize_bench._util.safe_io import read_bounded_file
from pytest_obelize_bench.isolation.policy import DEFAULT_LIMITS, Step
from pytest_obelize_bench.isolation.steps import StepRunner
from pytest_obelize_bench.isolation.workspace import safe_component

FETCH_TIMEOUT_S = DEFAULT_LIMITS["fetch"]
_SHA = re.compile(r"[0-9a-f]{40}")
#: A cache's packed-refs: one line a pinned commit.
PACKED_REFS_BYTES = 4 << 20


def cache_repository(cache: Path, owner: str, name: str) -> Path:
    """The bare repository that caches ``owner/name``."""
    safe_component(owner, "repository owner")
    safe_component(name, "repository name")
    return Path(cache) / owner / f"{name}.git"


def kept_pin(bare: Path, sha: str) -> Path:
    """Where the cache keeps the objects of ``sha``'s shallow checkout (see the module docstring)."""
    return bare.with_name(bare.name.removesuffix(".git") + ".pins") / sha


def fetch_checkout(
    runner: StepRunner,
    *,
    url: str,
    sha: str,
    dest: Path,
    cache: Path | None,
    owner: str,
    name: str,
    timeout: float = FETCH_TIMEOUT_S,
) -> None:
    """Fetch ``url`` at ``sha`` into ``dest`` (which must not hold a repository yet).

    Every command is step 1 ``fetch`` with reason ``fetch_failed``; git runs under the runner's
    environment (its isolated HOME) with ``GIT_TERMINAL_PROMPT=0``, so a private or missing
    repository fails instead of waiting for a password.  The commands run from ``dest``'s parent,
    because ``dest`` does not exist before ``git init``.
    """
    if not _SHA.fullmatch(sha):
        raise CaseError("fetch", "fetch_failed", f"{sha!r} is not a full 40-character commit SHA")
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    env = {**runner.env, "GIT_TERMINAL_PROMPT": "0"}

    def git(*args: str) -> str:
        completed = runner.run(
            Step.FETCH,
            "fetch",
            ["git", *args],
            timeout=timeout,
            reason="fetch_failed",
            cwd=dest.parent,
            env=env,
        )
        lines = completed.output().split()
        return lines[-1] if lines else ""

    source, kept = url, None
    if cache is not None:
        bare = cache_repository(cache, owner, name)
        with exclusive_lock(bare.with_name(bare.name + ".lock")):
            if not (bare / "HEAD").is_file():
                git("init", "--bare", "-q", str(bare))
            if not _has_pin_ref(bare, sha):  # a commit fetched under its ref is there: no probe needed
                _probe_or_fetch(runner, git, bare, url, sha, timeout, cwd=dest.parent, env=env)
        source, kept = bare.resolve().as_uri(), kept_pin(bare, sha)
    git("init", "-q", str(dest))
    if kept is not None and _from_kept(runner, kept, dest, sha, timeout, env):
        return
    # --end-of-options: a URL or ref from the case file can never be read as a git option.
    git("-C", str(dest), "fetch", "-q", "--depth", "1", "--end-of-options", source, sha)
    git("-C", str(dest), "checkout", "-q", "FETCH_HEAD")
    _check_head(dest, sha)
    if kept is not None:
        _keep(dest, kept)


def _check_head(dest: Path, sha: str) -> None:
    head = _detached_head(dest)
    if head != sha:
        shown = head or "(nothing)"
        raise CaseError("fetch", "fetch_failed", f"HEAD is {shown}, the case pins {sha}")


def _from_kept(runner: StepRunner, kept: Path, dest: Path, sha: str, timeout: float, env: dict[str, str]) -> bool:
    """Check the pin out of the cache's kept copy; False (the copy removed, the checkout emptied again)
    when there is none or it does not check out, so the caller fetches."""
    git_dir = dest / ".git"
    if not (kept / "shallow").is_file():  # none kept yet: the usual miss
        return False
    try:
        shutil.copytree(kept / "objects", git_dir / "objects", dirs_exist_ok=True)
        shutil.copyfile(kept / "shallow", git_dir / "shallow")
    except OSError:  # removed meanwhile, or unreadable
        _empty_objects(git_dir)
        return False
    checked = runner.run(Step.FETCH, "fetch", ["git", "-C", str(dest), "checkout", "-q", sha], timeout=timeout,
                         cwd=dest.parent, env=env)  # fmt: skip
    if checked.timed_out:
        runner.raise_for("fetch", checked, reason="fetch_failed", timeout=timeout)
    if checked.exit_code == 0 and _detached_head(dest) == sha:
        return True
    shutil.rmtree(kept, ignore_errors=True)  # a bad copy would fail every later case of the pin
    _empty_objects(git_dir)
    (git_dir / "shallow").unlink(missing_ok=True)
    return False


def _empty_objects(git_dir: Path) -> None:
    """The objects folder as ``git init`` left it, before a fetch writes into it."""
    objects = git_dir / "objects"
    shutil.rmtree(objects, ignore_errors=True)
    (objects / "info").mkdir(parents=True, exist_ok=True)
    (objects / "pack").mkdir(exist_ok=True)


def _keep(dest: Path, kept: Path) -> None:
    """Copy the fresh checkout's objects into the cache under the pin, once: written beside it and
    renamed, so a reader sees a whole copy or none; a failure (disk full) only leaves it unkept."""
    if kept.is_dir():
        return
    partial = kept.with_name(f".{kept.name}.{os.getpid()}.partial")
    try:
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(partial, ignore_errors=True)
        shutil.copytree(dest / ".git" / "objects", partial / "objects")
        shutil.copyfile(dest / ".git" / "shallow", partial / "shallow")
        os.rename(partial, kept)
    except OSError:  # another case kept it first, or no room: the next checkout fetches
        shutil.rmtree(partial, ignore_errors=True)


def _has_pin_ref(bare: Path, sha: str) -> bool:
    """Whether the cache holds ``refs/obelize-bench/<sha>``, loose or packed: git's own files, read
    instead of starting ``git cat-file`` for every case (about 20 ms each)."""
    if (bare / "refs" / "obelize-bench" / sha).is_file():
        return True
    try:
        packed = read_bounded_file(bare / "packed-refs", PACKED_REFS_BYTES).decode("ascii", "replace")
    except (OSError, ValueError):
        return False
    return f"{sha} refs/obelize-bench/{sha}" in packed.splitlines()


def _detached_head(dest: Path) -> str:
    """The commit the checkout's HEAD names: after ``checkout FETCH_HEAD`` it is detached, so
    ``.git/HEAD`` holds the commit itself (what ``rev-parse HEAD`` would read); anything else is
    returned as it is and fails the comparison."""
    try:
        return read_bounded_file(dest / ".git" / "HEAD", 4096).decode("ascii", "replace").strip()
    except (OSError, ValueError):
        return ""


def _probe_or_fetch(runner: StepRunner, git: Callable[..., str], bare: Path, url: str, sha: str, timeout: float, *,
                    cwd: Path, env: dict[str, str]) -> None:  # fmt: skip
    """The cache lacks the pin's ref: a commit it holds anyway (the history of another pin) is a hit,
    anything else is fetched from the origin under the ref."""
    probe = runner.run(
        Step.FETCH,
        "fetch",
        ["git", "-C", str(bare), "cat-file", "-e", f"{sha}^{{commit}}"],
        timeout=timeout,
        cwd=cwd,
        env=env,
    )
    if probe.timed_out:
        runner.raise_for("fetch", probe, reason="fetch_failed", timeout=timeout)
    if probe.exit_code != 0:
        git("-C", str(bare), "fetch", "-q", "--end-of-options", url, f"{sha}:refs/obelize-bench/{sha}")
