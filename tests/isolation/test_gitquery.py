"""git asked about a tree the harness did not fetch: the harness's own, or a tool checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_obelize_bench.isolation.gitquery import git_output, harness_provenance
from tests.helpers.gitrepo import make_repo


def test_head_and_status_of_a_real_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"app.py": "x = 1\n"})
    for own_home in (False, True):
        assert (git_output(repo.path, "rev-parse", "HEAD", own_home=own_home) or "").strip() == repo.head
        assert git_output(repo.path, "status", "--porcelain", own_home=own_home) == ""
    (repo.path / "app.py").write_text("x = 2\n")
    assert "app.py" in (git_output(repo.path, "status", "--porcelain", own_home=True) or "")
    provenance = harness_provenance(repo.path)
    assert (provenance.commit, provenance.tree_dirty) == (repo.head, True)


def test_no_repository_and_no_git_are_null(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "plain").mkdir()
    assert git_output(tmp_path / "plain", "rev-parse", "HEAD") is None
    assert harness_provenance(tmp_path / "plain").commit is None
    repo = make_repo(tmp_path / "repo")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no git to run at all
    assert git_output(repo.path, "rev-parse", "HEAD") is None
    assert harness_provenance(repo.path).tree_dirty is None


def test_only_the_users_own_query_reads_their_configuration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo", {"app.py": "x = 1\n"})
    (repo.path / "editor.swp").write_text("scratch\n")
    home = tmp_path / "home"
    home.mkdir()
    (home / "ignores").write_text("*.swp\n")
    (home / ".gitconfig").write_text(f"[core]\n\texcludesFile = {home / 'ignores'}\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    # the user's prompt would say clean: their global ignores apply to their own tree
    assert git_output(repo.path, "status", "--porcelain") == ""
    # a checkout of someone else's tool is asked with no user settings at all
    assert "editor.swp" in (git_output(repo.path, "status", "--porcelain", own_home=True) or "")
