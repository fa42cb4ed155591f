"""Asking git about a tree the harness did not fetch: its own, or a tool's source checkout.

Read-only queries (``rev-parse``, ``status``) for provenance, run through the executor like every
other program.  ``None`` whenever git cannot say, so a missing git or a folder that is no
repository becomes a null field, never a crash.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from pytest_obelize_bench import __version__
from pytest_obelize_bench.isolation.executor import run_program
from pytest_obelize_bench.isolation.policy import BASE_ENVIRONMENT, GIT_QUERY_S, GIT_QUIET, inherited


def git_output(repo: Path, *args: str, own_home: bool = False, timeout: float = GIT_QUERY_S) -> str | None:
    """``git -C <repo> <args>``'s output, or None when git fails or cannot be run.

    By default git sees the user's HOME, so their own configuration (global ignores among it)
    decides what ``status`` reports, as it does at their prompt.  ``own_home`` gives git a scratch
    HOME, no system configuration and ``safe.directory`` for ``repo`` instead: for a tree that
    belongs to someone else, whose answer must not depend on this user's settings.
    """
    env = inherited(BASE_ENVIRONMENT)
    argv = ["git", "-C", os.fspath(repo), *args]
    with tempfile.TemporaryDirectory(prefix="obelize-bench-git-") as scratch:
        if own_home:
            env.update({"HOME": scratch, **GIT_QUIET})
            argv[1:1] = ["-c", f"safe.directory={repo}"]
        elif "HOME" in os.environ:
            env["HOME"] = os.environ["HOME"]
        try:
            answer = run_program(argv, env=env, timeout=timeout, cwd=Path(scratch), log=Path(scratch) / "git.log")
        except OSError:
            return None
    return answer.output if answer.ok else None


class HarnessInfo(BaseModel):
    """The harness that ran: its version, commit and whether its tree was dirty.

    Computed once on the controller, carried to the workers in the round context, named by every
    record and by ``run.json``. Each field is null when it is not known (an imported round's run
    knows none of them).
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    version: str | None = None
    commit: str | None = None
    tree_dirty: bool | None = None


def harness_provenance(root: Path) -> HarnessInfo:
    """The harness's own version, commit and whether its tree (results/ aside) is dirty."""
    commit = git_output(root, "rev-parse", "HEAD")
    status = git_output(root, "status", "--porcelain", "--", ".", ":(exclude)results")
    return HarnessInfo(
        version=__version__,
        commit=commit.strip() if commit else None,
        tree_dirty=None if status is None else bool(status.strip()),
    )


__all__ = ["HarnessInfo", "git_output", "harness_provenance"]
