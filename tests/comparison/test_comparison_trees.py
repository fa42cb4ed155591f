"""What an arm left in its tree, read without running git inside it: changes, compile, deletions."""

from __future__ import annotations

import shutil
from pathlib import Path

from pytest_obelize_bench.comparison.trees import changes_against_pin, compiles, missing_files
from tests.helpers.gitrepo import make_repo


def _trees(tmp_path: Path) -> tuple[Path, Path, str]:
    repo = make_repo(tmp_path / "base", {"app.py": "import os\nx = 1\n", "lib.py": "y = 2\n", "req.txt": "a==1\n"})
    tree = tmp_path / "tree"
    shutil.copytree(repo.path, tree, symlinks=True)
    return repo.path, tree, repo.head


def test_changes_against_the_pin_count_lines_and_see_new_and_deleted_files(tmp_path: Path) -> None:
    base, tree, sha = _trees(tmp_path)
    (tree / "app.py").write_text("import sys\nx = 1\nz = 3\n")
    (tree / "lib.py").unlink()
    (tree / "new.py").write_text("w = 4\n")
    (tree / ".obelize").mkdir()
    (tree / ".obelize" / "run.json").write_text("{}")
    changes, diff = changes_against_pin(base, tree, sha, exclude=".obelize", with_diff=True)
    assert [(c.path, c.added, c.removed, c.status) for c in changes] == [
        ("app.py", 2, 1, "M"),
        ("lib.py", 0, 1, "D"),
        ("new.py", 1, 0, "A"),
    ]
    assert diff is not None and "+++ b/app.py" in diff and "+++ b/new.py" in diff and ".obelize" not in diff
    assert missing_files(tree, ["lib.py", "app.py"]) == ["lib.py"]
    # The untouched copy's own index is not changed by reading another tree against it.
    assert changes_against_pin(base, base, sha, exclude=".obelize") == ([], None)


def test_nothing_an_arm_writes_under_its_own_git_folder_is_run(tmp_path: Path) -> None:
    base, tree, sha = _trees(tmp_path)
    hooks = tree / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    marker = tmp_path / "ran"
    (hooks / "post-index-change").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (hooks / "post-index-change").chmod(0o755)
    (tree / ".git" / "config").write_text(f"[core]\n\tfsmonitor = touch {marker}\n")
    (tree / "app.py").write_text("x = 2\n")
    assert [c.path for c in changes_against_pin(base, tree, sha, exclude=".obelize")[0]] == ["app.py"]
    assert not marker.exists()


def test_compiles_parses_without_running_and_refuses_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_text("raise SystemExit('never run')\n")
    (tmp_path / "bad.py").write_text("def f(:\n")
    (tmp_path / "link.py").symlink_to(tmp_path / "good.py")
    assert compiles(tmp_path, ["good.py"]) is True
    assert compiles(tmp_path, ["good.py", "bad.py"]) is False
    assert compiles(tmp_path, ["link.py"]) is False
