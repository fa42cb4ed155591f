"""One tree laid over another, entry by entry: the copy view's copy of a template, and a copy layer.

Both need the same rules, so both use this one walk: folders made, regular files copied (bytes,
mode, times), each symlink a hard link of the source's (a new symlink where the filesystem refuses
one: a symlink's target cannot be changed in place, so sharing it is safe), nothing followed;
anything else (a socket, a device) is not copied, as a venv holds none. Bytecode caches are
copied, skipped (``without-bytecode``: a case with no suite imports nothing) or linked
(``linked-bytecode``: each regular file in a ``__pycache__`` a symlink to the source's by its real
path, which only a sandbox that shows the source read-only makes safe,
``SandboxExecutor.expose``).

Step ``venv`` runs this file as a program on the harness's interpreter, outside the sandbox
(``python -I tree_copy.py SOURCE TARGET [MODE]``), so it imports nothing but the standard library;
the harness imports it to lay a copy layer over a case's copy (``copy_layer.apply_layer``).
``os.scandir`` entries know their kind, so a template's 4,400 entries need no second look each.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys

CACHE = "__pycache__"
#: What a walk does with bytecode caches.
MODES = ("with-bytecode", "without-bytecode", "linked-bytecode")


def bytecode_mode(bytecode: bool, *, linked: bool) -> str:
    """The mode of a walk whose caches are wanted (``bytecode``), and then ``linked`` or copied."""
    return ("linked-bytecode" if linked else "with-bytecode") if bytecode else "without-bytecode"


def _clear(target: str) -> None:
    """Make room for an entry: a file or link already there goes (never followed); a folder stays."""
    try:
        kind = os.lstat(target).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(kind) or stat.S_ISREG(kind):
        os.unlink(target)


def lay_tree(source: str, target: str, mode: str = "with-bytecode", *, replace: bool = False) -> list[tuple[str, str]]:
    """Every entry of ``source`` at the same place under ``target``; with ``replace`` an entry
    already there is replaced (a copy layer over a copy), else ``target`` is new. Returns each
    (source folder, folder made), parents before their children."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; known: {', '.join(MODES)}")
    real = os.path.realpath(source)
    folders: list[tuple[str, str]] = []
    pending = [""]  # folders relative to ``source``, each made before its entries are laid
    while pending:
        relative = pending.pop()
        folder, made = os.path.join(source, relative), os.path.join(target, relative)
        os.makedirs(made, exist_ok=True)
        folders.append((folder, made))
        linked = mode == "linked-bytecode" and os.path.basename(relative) == CACHE
        with os.scandir(folder) as listing:
            entries = list(listing)
        for entry in entries:
            if entry.name == CACHE and mode == "without-bytecode":
                continue
            if entry.is_dir(follow_symlinks=False):
                pending.append(os.path.join(relative, entry.name))
                continue
            placed = os.path.join(made, entry.name)
            if replace:
                _clear(placed)
            if entry.is_symlink():
                try:
                    os.link(entry.path, placed, follow_symlinks=False)
                except OSError:
                    os.symlink(os.readlink(entry.path), placed)
            elif entry.is_file(follow_symlinks=False):
                if linked:
                    os.symlink(os.path.join(real, relative, entry.name), placed)
                else:
                    shutil.copy2(entry.path, placed, follow_symlinks=False)
    return folders


def copy_tree(source: str, target: str, mode: str = "with-bytecode") -> None:
    """``source`` at the new ``target``, each folder's times too (set last, children first, as
    making an entry changes its folder's)."""
    for folder, made in reversed(lay_tree(source, target, mode)):
        shutil.copystat(folder, made, follow_symlinks=False)


def main(argv: list[str]) -> int:
    if len(argv) not in (3, 4):
        print("usage: tree_copy.py SOURCE TARGET [MODE]", file=sys.stderr)
        return 2
    copy_tree(argv[1], argv[2], *argv[3:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
