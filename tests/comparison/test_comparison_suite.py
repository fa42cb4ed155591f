"""An arm's tree swapped into the suites' checkout: its files in, the venv and the pin's history kept."""

from __future__ import annotations

from pathlib import Path

from pytest_obelize_bench.comparison.suite_run import swap_in


def test_swapping_a_tree_in_keeps_the_venv_and_history_and_nothing_else(tmp_path: Path) -> None:
    checkout, tree = tmp_path / "checkout", tmp_path / "tree"
    for folder, files in (
        (checkout, {".venv/bin/python": "venv", ".git/HEAD": "pin", "old.py": "x", "pkg/a.py": "a"}),
        (tree, {".git/HEAD": "arm's", ".obelize/latest": "run", "new.py": "y", "pkg/b.py": "b"}),
    ):
        for name, text in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
    (tree / "link.py").symlink_to("new.py")
    swap_in(checkout, tree)
    present = sorted(p.relative_to(checkout).as_posix() for p in checkout.rglob("*") if not p.is_dir())
    assert present == [".git/HEAD", ".venv/bin/python", "link.py", "new.py", "pkg/b.py"]
    assert (checkout / ".git" / "HEAD").read_text() == "pin"
    assert (checkout / "link.py").is_symlink()
