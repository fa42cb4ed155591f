"""The copy view's program: symlinks hard-linked, the rest copied, nothing of the template writable through it."""

from __future__ import annotations

import ast
import os
import socket
import subprocess
import sys
from pathlib import Path

from pytest_obelize_bench.case import tree_copy
from pytest_obelize_bench.case.copy_layer import changes
from tests.helpers.sandbox import tree_digest


def _template(root: Path) -> Path:
    """A venv's shapes: a cache the SDK links point into, a config file, a script, nested folders."""
    cache = root / "uv-cache" / "sdk"
    cache.mkdir(parents=True)
    (cache / "__init__.py").write_text("VERSION = '0.8.6'\n")
    venv = root / "template" / "venv"
    site = venv / "lib" / "python3.12" / "site-packages"
    (site / "google" / "generativeai").mkdir(parents=True)
    (site / "google" / "generativeai" / "__init__.py").symlink_to(cache / "__init__.py")
    (site / "linked-folder").symlink_to(cache, target_is_directory=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "bin").mkdir()
    (venv / "bin" / "tool").write_text("#!/bin/sh\n")
    (venv / "bin" / "tool").chmod(0o755)
    (venv / "bin" / "python").symlink_to(sys.executable)
    return venv


def _copy(template: Path, target: Path, *extra: str) -> None:
    done = subprocess.run(
        [sys.executable, "-I", tree_copy.__file__, str(template), str(target), *extra],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


def test_the_copy_is_the_template_entry_for_entry(tmp_path: Path) -> None:
    template = _template(tmp_path)
    _copy(template, tmp_path / "case" / ".venv")
    assert tree_digest(tmp_path / "case" / ".venv") == tree_digest(template)
    assert os.access(tmp_path / "case" / ".venv" / "bin" / "tool", os.X_OK)


def test_the_bytecode_is_copied_unless_the_case_runs_nothing_in_its_venv(tmp_path: Path) -> None:
    template = _template(tmp_path)
    cache = template / "lib" / "python3.12" / "site-packages" / "google" / "generativeai" / "__pycache__"
    cache.mkdir()
    (cache / "__init__.cpython-312.pyc").write_bytes(b"compiled")
    with_caches, without = tmp_path / "suite" / ".venv", tmp_path / "no-suite" / ".venv"
    _copy(template, with_caches, "with-bytecode")
    _copy(template, without, "without-bytecode")
    relative = cache.relative_to(template) / "__init__.cpython-312.pyc"
    assert (with_caches / relative).read_bytes() == b"compiled"
    assert (with_caches / relative).lstat().st_ino != (template / relative).lstat().st_ino  # a copy, not a link
    assert not (without / relative.parent).exists()
    assert (without / relative.parent.parent / "__init__.py").is_symlink()  # the rest as before
    assert changes(without, template).empty and changes(with_caches, template).empty


def test_symlinks_are_hard_links_of_the_templates_and_files_are_copies(tmp_path: Path) -> None:
    template = _template(tmp_path)
    copy = tmp_path / "case" / ".venv"
    _copy(template, copy)
    for relative in ("lib/python3.12/site-packages/google/generativeai/__init__.py", "bin/python"):
        assert (copy / relative).lstat().st_ino == (template / relative).lstat().st_ino
        assert (copy / relative).is_symlink()
    for relative in ("pyvenv.cfg", "bin/tool"):
        assert (copy / relative).lstat().st_ino != (template / relative).lstat().st_ino


def test_what_a_case_does_to_its_copy_leaves_the_template_as_it_was(tmp_path: Path) -> None:
    template = _template(tmp_path)
    before = tree_digest(template)
    copy = tmp_path / "case" / ".venv"
    _copy(template, copy)
    with open(copy / "pyvenv.cfg", "a", encoding="utf-8") as handle:
        handle.write("# written by the case\n")
    link = copy / "lib/python3.12/site-packages/google/generativeai/__init__.py"
    link.unlink()  # a deleted SDK file: the case's own entry goes, the template's stays
    (copy / "bin" / "python").unlink()
    (copy / "bin" / "python").symlink_to("/elsewhere")  # a replaced link: a new entry of its own
    (copy / "lib/python3.12/site-packages/leaked.py").write_text("WHO = 'case'\n")
    assert tree_digest(template) == before


def test_a_filesystem_that_refuses_the_hard_link_gets_a_symlink_of_the_same_target(tmp_path: Path) -> None:
    template = _template(tmp_path)
    copy = tmp_path / "case" / ".venv"
    # Where a symlink cannot be hard-linked (another filesystem, say), the copy still holds a symlink
    # to the same target: shown with every hard link refused.
    shim = tmp_path / "shim.py"
    shim.write_text(
        "import os, runpy, sys\n"
        "def refuse(*args, **kwargs):\n"
        "    raise OSError(18, 'Invalid cross-device link')\n"
        "os.link = refuse\n"
        f"sys.argv = [{tree_copy.__file__!r}, {str(template)!r}, {str(copy)!r}]\n"
        f"runpy.run_path({tree_copy.__file__!r}, run_name='__main__')\n"
    )
    done = subprocess.run([sys.executable, "-I", str(shim)], capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert tree_digest(copy) == tree_digest(template)
    relative = "bin/python"
    assert (copy / relative).lstat().st_ino != (template / relative).lstat().st_ino


def test_the_program_imports_only_the_standard_library_and_refuses_a_bad_call(tmp_path: Path) -> None:
    """Step ``venv`` runs the file on the harness's interpreter with ``-I``: it can lean on nothing
    of the harness, and a mode it does not know, or a missing argument, stops it before it writes."""
    tree = ast.parse(Path(tree_copy.__file__).read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}, imported
    template = _template(tmp_path)
    program = [sys.executable, "-I", tree_copy.__file__]
    target = str(tmp_path / "a")
    wrong = subprocess.run([*program, str(template), target, "bytecode"], check=False, capture_output=True, text=True)
    assert wrong.returncode != 0 and "unknown mode 'bytecode'" in wrong.stderr
    short = subprocess.run([*program, str(template)], check=False, capture_output=True, text=True)
    assert short.returncode == 2 and "usage:" in short.stderr
    assert not (tmp_path / "a").exists()


def test_a_socket_or_a_fifo_is_not_copied_nor_laid_from_a_layer(tmp_path: Path) -> None:
    """A venv holds neither; one planted in a template or a layer is left out, never read from
    (a fifo would block a copy that opened it) and never an error."""
    template = _template(tmp_path)
    os.mkfifo(template / "pipe")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(template / "bin" / "listening"))
    try:
        _copy(template, tmp_path / "case" / ".venv")
        layer = tmp_path / "layer"
        layer.mkdir()
        os.mkfifo(layer / "layer-pipe")
        (layer / "added.txt").write_text("added\n")
        tree_copy.lay_tree(str(layer), str(tmp_path / "case" / ".venv"), replace=True)
    finally:
        server.close()
    copy = tmp_path / "case" / ".venv"
    assert not (copy / "pipe").exists() and not (copy / "bin" / "listening").exists()
    assert not (copy / "layer-pipe").exists() and (copy / "added.txt").read_text() == "added\n"
    assert (copy / "bin" / "tool").is_file()
