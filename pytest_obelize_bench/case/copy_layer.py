"""The copy view's layer of the new SDK: what an install changed in a copy of a template, kept aside
and applied to a later copy instead of installing again.

Under an overlay, a case's upper layer *is* its install's layer (``upper_layer.py``). A copy has
none, so the harness compares the copy with its template instead: the copy is the template's bytes
with the same times (``tree_copy.copy_tree``), so a file or link whose kind, size, time or target
differs, or a path one side lacks, is what the case changed. Bytecode caches are left out, and a
folder counts by its existence (a cache written inside it changes its time). Deletions are listed
in ``deleted.json``: an unprivileged copy cannot write an overlay's whiteouts, so a copy layer
serves copies only.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_obelize_bench._util.safe_io import read_bounded_file, write_atomically
from pytest_obelize_bench.case.tree_copy import CACHE, bytecode_mode, lay_tree

DELETED = "deleted.json"
_DELETED_CAP = 4 * 1024 * 1024

#: (kind, size, time or link target) of one entry: ``f`` a file, ``l`` a link, ``d`` a folder.
Entry = tuple[str, int, int | str]


def snapshot(tree: Path) -> dict[str, Entry]:
    """Every entry of ``tree`` but bytecode caches, by its path relative to it; nothing followed.

    Strings and ``os.scandir`` rather than a ``Path`` per entry: a venv has about 2,600 entries and
    a copy is compared twice per case: 0.21 s a look with a path each, 0.02 s with strings.
    """
    found: dict[str, Entry] = {}
    pending = [(os.fspath(tree), "")]
    while pending:
        folder, prefix = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:  # as os.walk does: a folder that cannot be listed is passed over
            continue
        for entry in entries:
            if entry.name == CACHE and entry.is_dir():
                continue
            relative = prefix + entry.name
            try:
                info = entry.stat(follow_symlinks=False)  # its kind and times as they are, nothing followed
                if stat.S_ISLNK(info.st_mode):
                    found[relative] = ("l", 0, os.readlink(entry.path))
                elif stat.S_ISDIR(info.st_mode):
                    found[relative] = ("d", 0, 0)
                    pending.append((entry.path, relative + "/"))
                else:
                    found[relative] = ("f", info.st_size, info.st_mtime_ns)
            except OSError:  # gone since it was listed
                continue
    return found


@dataclass(frozen=True)
class Change:
    """What a copy holds that its template does not (added or changed), and what it lost."""

    written: tuple[str, ...]
    deleted: tuple[str, ...]

    @property
    def empty(self) -> bool:
        return not self.written and not self.deleted


def changes(copy: Path, template: Path) -> Change:
    """The copy against its template, bytecode caches left out."""
    ours, theirs = snapshot(copy), snapshot(template)
    written = sorted(path for path, entry in ours.items() if theirs.get(path) != entry)
    deleted = sorted(path for path in theirs if path not in ours)
    return Change(tuple(written), tuple(deleted))


def write_layer(copy: Path, change: Change, layer: Path, bytecode: Mapping[str, Path] | None = None) -> None:
    """The written entries of ``copy`` into ``layer`` (links as links), ``bytecode``'s files where
    it says (``compiled_into``), and the deleted list beside."""
    layer.mkdir(parents=True)
    for relative in change.written:
        source, target = copy / relative, layer / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            os.symlink(os.readlink(source), target)
        elif source.is_dir():
            target.mkdir(exist_ok=True)
        else:
            shutil.copy2(source, target, follow_symlinks=False)
    for relative, compiled in (bytecode or {}).items():
        target = layer / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(compiled, target, follow_symlinks=False)
    write_atomically(layer.parent / DELETED, json.dumps(list(change.deleted)) + "\n")


def compiled_into(prefix: Path, venv: Path, sources: Sequence[str]) -> dict[str, Path]:
    """The bytecode step ``compile_sources`` wrote into ``prefix`` for ``sources`` (paths relative
    to ``venv``), by where each goes in a layer: ``<folder>/__pycache__/<module>.<tag>.pyc``.

    Only regular files under the prefix's mirror of ``venv`` named for a listed source count; the
    copy's own ``__pycache__`` folders are never read (a suite could have planted them).
    """
    mirror = prefix / os.fspath(venv.absolute()).lstrip(os.sep)
    modules: dict[str, set[str]] = {}  # folder -> the modules listed in it, so each is read once
    for relative in sources:
        folder, _, name = relative.rpartition("/")
        modules.setdefault(folder, set()).add(name.removesuffix(".py"))
    found: dict[str, Path] = {}
    for folder, listed in modules.items():
        try:
            entries = list(os.scandir(mirror / folder))
        except OSError:
            continue
        for entry in entries:
            parts = entry.name.split(".")
            if len(parts) == 3 and parts[0] in listed and parts[2] == "pyc" and entry.is_file(follow_symlinks=False):
                found[f"{folder}/{CACHE}/{entry.name}" if folder else f"{CACHE}/{entry.name}"] = Path(entry.path)
    return found


def _inside(relative: str) -> bool:
    parts = Path(relative).parts
    return bool(parts) and not Path(relative).is_absolute() and ".." not in parts


def apply_layer(layer: Path, copy: Path, *, bytecode: bool = True, link_bytecode: bool = False) -> None:
    """``copy`` as the install left the one ``layer`` was taken from: the deleted entries removed,
    then every entry of the layer laid over it (a link hard-linked, as in the copy itself, so a
    case can replace its own entry but never change the layer's); its bytecode only with
    ``bytecode`` (a case without a suite imports nothing from it), linked to the layer's with
    ``link_bytecode`` (for a sandbox that shows the layer read-only) instead of copied; the walk
    is the copy view's own (``tree_copy.lay_tree``)."""
    deleted = json.loads(read_bounded_file(layer.parent / DELETED, _DELETED_CAP).decode("utf-8"))
    for relative in deleted:
        if not isinstance(relative, str) or not _inside(relative):
            raise ValueError(f"{layer.parent / DELETED}: {relative!r} is not a path inside the venv")
        gone = copy / relative
        if gone.is_dir() and not gone.is_symlink():
            shutil.rmtree(gone)
        elif gone.exists() or gone.is_symlink():
            gone.unlink()
    lay_tree(os.fspath(layer), os.fspath(copy), bytecode_mode(bytecode, linked=link_bytecode), replace=True)


__all__ = ["CACHE", "DELETED", "Change", "Entry", "apply_layer", "changes", "compiled_into", "snapshot", "write_layer"]
