"""remove_tree: what shutil.rmtree removes, and nothing it would not, with the files unlinked in parallel."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_obelize_bench._util import removal
from pytest_obelize_bench._util.removal import remove_tree


def venv_like(root: Path, outside: Path) -> None:
    """Many folders of files and symlinks, as a venv linked into a cache is, with links out of the tree."""
    for package in range(150):
        folder = root / ".venv" / "lib" / "site-packages" / f"pkg{package}"
        folder.mkdir(parents=True)
        for module in range(6):
            (folder / f"m{module}.py").write_text("x = 1\n", encoding="utf-8")
        (folder / "linked.py").symlink_to(outside / "kept.txt")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print(1)\n", encoding="utf-8")
    (root / "to-a-folder").symlink_to(outside, target_is_directory=True)
    (root / "dangling").symlink_to(root / "nowhere")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "kept.txt").write_text("keep me\n", encoding="utf-8")
    return folder


def test_a_tree_goes_and_nothing_a_symlink_points_at_does(tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "checkout"
    venv_like(root, outside)
    assert len(list(root.rglob("*"))) > removal.IN_FLIGHT * 10  # more folders than the threads hold at once
    remove_tree(root)
    assert not root.exists() and not root.is_symlink()
    assert sorted(p.name for p in outside.iterdir()) == ["kept.txt"]
    assert (outside / "kept.txt").read_text(encoding="utf-8") == "keep me\n"


def test_a_read_only_folder_is_left_to_rmtree_and_its_onexc(tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "checkout"
    venv_like(root, outside)
    locked = root / "src"
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
    calls: list[str] = []

    def retry(function: Callable[[str], object], target: str, _error: BaseException) -> None:
        calls.append(target)
        os.chmod(os.path.dirname(target), stat.S_IRWXU)
        function(target)

    try:
        remove_tree(root, onexc=retry)
    finally:
        if locked.exists():
            locked.chmod(stat.S_IRWXU)
    if os.geteuid() != 0:  # root unlinks in a read-only folder: no error to hand on
        assert calls, "the read-only folder's file reached onexc"
    assert not root.exists()


def test_a_symlink_is_refused_as_rmtree_refuses_it(tmp_path: Path, outside: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(outside, target_is_directory=True)
    with pytest.raises(OSError):
        remove_tree(link)
    assert (outside / "kept.txt").is_file()


def test_a_missing_tree_raises_as_rmtree_does(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        remove_tree(tmp_path / "missing")
