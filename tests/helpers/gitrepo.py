"""A tiny builder of local git repositories for tests (file:// URLs, no network).

    repo = make_repo(tmp_path / "origin", {"pkg/mod.py": "x = 1\n"})
    first = repo.head
    second = repo.commit({"pkg/mod.py": "x = 2\n", "old.txt": None})  # None deletes a file
    url = repo.url

Commits use a fixed author and date, so the same content gives the same SHA on every machine.
Git runs with no user or system configuration. The repository lets clients fetch any commit by
SHA (uploadpack.allowAnySHA1InWant), which protocol v0 clients need for a commit that is not a
branch tip.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

_DATE = "2024-01-01T00:00:00+00:00"


def git_env() -> dict[str, str]:
    """An environment for test-side git: no user/system config, fixed identity and dates."""
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_AUTHOR_NAME": "Bench Test",
        "GIT_AUTHOR_EMAIL": "bench@example.invalid",
        "GIT_COMMITTER_NAME": "Bench Test",
        "GIT_COMMITTER_EMAIL": "bench@example.invalid",
        "GIT_AUTHOR_DATE": _DATE,
        "GIT_COMMITTER_DATE": _DATE,
    }


def git(*args: str, cwd: Path | None = None) -> str:
    """Run git with ``git_env()``; return its stripped stdout; raise on failure."""
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=git_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done.stdout.strip()


@dataclass
class GitRepo:
    """A local repository with a worktree."""

    path: Path

    @property
    def url(self) -> str:
        """The file:// URL of the repository."""
        return self.path.resolve().as_uri()

    @property
    def head(self) -> str:
        """The full SHA of HEAD."""
        return git("-C", str(self.path), "rev-parse", "HEAD")

    def commit(self, files: Mapping[str, str | bytes | None], message: str = "change") -> str:
        """Write (or, for None, delete) ``files`` relative to the root, commit, return the SHA."""
        for relative, content in files.items():
            target = self.path / relative
            if content is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")
        git("-C", str(self.path), "add", "-A")
        git("-C", str(self.path), "commit", "-q", "--allow-empty", "-m", message)
        return self.head


def make_repo(path: Path, files: Mapping[str, str | bytes | None] | None = None, message: str = "initial") -> GitRepo:
    """Create a repository at ``path`` with one commit holding ``files`` (may be empty)."""
    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", "-b", "main", str(path))
    git("-C", str(path), "config", "uploadpack.allowAnySHA1InWant", "true")
    git("-C", str(path), "config", "uploadpack.allowReachableSHA1InWant", "true")
    repo = GitRepo(path)
    repo.commit(files or {}, message)
    return repo
