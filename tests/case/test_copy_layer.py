"""The copy view's layer: what an install changed in a copy of its template, found, kept and applied."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_obelize_bench.case import tree_copy
from pytest_obelize_bench.case.copy_layer import DELETED, apply_layer, changes, compiled_into, snapshot, write_layer


def _template(root: Path) -> Path:
    venv = root / "template"
    site = venv / "lib" / "site-packages"
    (site / "legacy").mkdir(parents=True)
    (site / "legacy" / "__init__.py").write_text("VERSION = '0.8.6'\n")
    (site / "shared.py").write_text("OLD = True\n")
    (site / "gone.py").write_text("x = 1\n")
    (site / "cached").symlink_to("/uv-cache/archive/cached")
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    return venv


def _copy(template: Path, target: Path) -> Path:
    subprocess.run([sys.executable, "-I", tree_copy.__file__, str(template), str(target)], check=True)
    return target


def _install(copy: Path) -> None:
    """What an install of the new SDK does to a copy: adds, replaces, deletes."""
    site = copy / "lib" / "site-packages"
    (site / "genai").mkdir()
    (site / "genai" / "__init__.py").write_text("VERSION = '2.24.0'\n")
    (site / "genai_link").symlink_to("/uv-cache/archive/genai")
    (site / "shared.py").unlink()
    (site / "shared.py").write_text("OLD = False  # upgraded\n")
    (site / "gone.py").unlink()


def test_a_snapshot_names_every_entry_by_kind_and_enters_no_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "secret.py").write_text("x = 1\n")
    tree = tmp_path / "tree"
    (tree / "pkg" / "__pycache__").mkdir(parents=True)
    (tree / "pkg" / "__pycache__" / "mod.cpython-312.pyc").write_bytes(b"\0")
    (tree / "pkg" / "mod.py").write_text("y = 2\n")
    (tree / "to_folder").symlink_to(outside)
    (tree / "dangling").symlink_to(tmp_path / "nowhere")
    found = snapshot(tree)
    mtime = (tree / "pkg" / "mod.py").stat().st_mtime_ns
    assert found == {
        "pkg": ("d", 0, 0),
        "pkg/mod.py": ("f", 6, mtime),
        "to_folder": ("l", 0, str(outside)),
        "dangling": ("l", 0, str(tmp_path / "nowhere")),
    }
    assert snapshot(tmp_path / "absent") == {}


def test_a_fresh_copy_and_one_with_bytecode_caches_only_are_unchanged(tmp_path: Path) -> None:
    template = _template(tmp_path)
    copy = _copy(template, tmp_path / "copy")
    assert changes(copy, template).empty
    cache = copy / "lib" / "site-packages" / "legacy" / "__pycache__"
    cache.mkdir()
    (cache / "__init__.cpython-312.pyc").write_bytes(b"\0")
    assert changes(copy, template).empty  # a cache, and the time of the folder it sits in, do not count
    (copy / "lib" / "site-packages" / "written.py").write_text("by a suite\n")
    assert changes(copy, template).written == ("lib/site-packages/written.py",)


def test_an_install_is_kept_as_a_layer_and_a_later_copy_becomes_what_the_install_left(tmp_path: Path) -> None:
    template = _template(tmp_path)
    installed = _copy(template, tmp_path / "installed")
    _install(installed)
    change = changes(installed, template)
    assert change.deleted == ("lib/site-packages/gone.py",)
    assert set(change.written) == {
        "lib/site-packages/genai",
        "lib/site-packages/genai/__init__.py",
        "lib/site-packages/genai_link",
        "lib/site-packages/shared.py",
    }
    layer = tmp_path / "key" / "delta"
    write_layer(installed, change, layer)
    assert json.loads((tmp_path / "key" / DELETED).read_text()) == ["lib/site-packages/gone.py"]
    later = _copy(template, tmp_path / "later")
    apply_layer(layer, later)
    assert snapshot(later).keys() == snapshot(installed).keys()
    assert (later / "lib" / "site-packages" / "shared.py").read_text() == "OLD = False  # upgraded\n"
    link = later / "lib" / "site-packages" / "genai_link"
    assert os.readlink(link) == "/uv-cache/archive/genai"
    # the copy's link is the layer's (a hard link of it), so replacing it leaves the layer alone
    assert link.lstat().st_ino == (layer / "lib" / "site-packages" / "genai_link").lstat().st_ino
    link.unlink()
    link.symlink_to("/elsewhere")
    assert os.readlink(layer / "lib" / "site-packages" / "genai_link") == "/uv-cache/archive/genai"
    # a file of the copy is its own: writing it changes neither the layer nor the template
    (later / "lib" / "site-packages" / "shared.py").write_text("written by the after suite\n")
    assert (layer / "lib" / "site-packages" / "shared.py").read_text() == "OLD = False  # upgraded\n"
    assert (template / "lib" / "site-packages" / "shared.py").read_text() == "OLD = True\n"


@pytest.mark.parametrize("hostile", ["../outside.py", "/etc/passwd", "", 7])
def test_a_deleted_list_naming_anything_outside_the_venv_is_refused(tmp_path: Path, hostile: object) -> None:
    template = _template(tmp_path)
    layer = tmp_path / "key" / "delta"
    layer.mkdir(parents=True)
    (tmp_path / "key" / DELETED).write_text(json.dumps([hostile]))
    (tmp_path / "outside.py").write_text("kept\n")
    with pytest.raises(ValueError, match="is not a path inside the venv"):
        apply_layer(layer, _copy(template, tmp_path / "copy"))
    assert (tmp_path / "outside.py").read_text() == "kept\n"


def _compiled(prefix: Path, venv: Path, relative: str, tag: str = "cpython-312") -> Path:
    """Where step ``compile_sources`` puts the bytecode of ``venv/relative``: at the source's own
    absolute path below ``prefix``."""
    folder, _, name = relative.rpartition("/")
    target = prefix / os.fspath(venv.absolute()).lstrip(os.sep) / folder / f"{name.removesuffix('.py')}.{tag}.pyc"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"compiled " + relative.encode())
    return target


def test_only_bytecode_compiled_into_the_prefix_for_a_listed_source_is_kept(tmp_path: Path) -> None:
    """The copy's own caches are never read (a suite could have planted them for a source the
    install writes); in the prefix, a link, an unlisted module and a name of another shape are left."""
    template = _template(tmp_path)
    installed = _copy(template, tmp_path / "installed")
    _install(installed)
    site = installed / "lib" / "site-packages"
    planted = site / "__pycache__" / "shared.cpython-312.pyc"
    planted.parent.mkdir()
    planted.write_bytes(b"planted by the baseline suite")
    prefix = tmp_path / "prefix"
    sources = ["lib/site-packages/genai/__init__.py", "lib/site-packages/shared.py"]
    genai = _compiled(prefix, installed, sources[0])
    _compiled(prefix, installed, "lib/site-packages/unlisted.py")
    linked = genai.parent / "other.cpython-312.pyc"
    linked.symlink_to(genai)
    (genai.parent / "__init__.cpython-312.opt-1.pyc").write_bytes(b"optimised")
    found = compiled_into(prefix, installed, sources)
    # shared.py was listed, but the prefix holds nothing for it: the planted cache is not taken
    assert found == {"lib/site-packages/genai/__pycache__/__init__.cpython-312.pyc": genai}

    layer = tmp_path / "key" / "delta"
    write_layer(installed, changes(installed, template), layer, found)
    assert [p.relative_to(layer).as_posix() for p in layer.rglob("*.pyc")] == [
        "lib/site-packages/genai/__pycache__/__init__.cpython-312.pyc"
    ]
    assert (layer / "lib/site-packages/genai/__pycache__/__init__.cpython-312.pyc").read_bytes() == genai.read_bytes()

    with_suite, without = _copy(template, tmp_path / "with-suite"), _copy(template, tmp_path / "without")
    apply_layer(layer, with_suite)
    apply_layer(layer, without, bytecode=False)
    assert (with_suite / "lib/site-packages/genai/__pycache__/__init__.cpython-312.pyc").is_file()
    assert not (without / "lib/site-packages/genai/__pycache__").exists()
    assert (without / "lib/site-packages/genai/__init__.py").read_text() == "VERSION = '2.24.0'\n"


def test_linked_bytecode_points_at_the_template_and_at_the_layer_by_their_real_paths(tmp_path: Path) -> None:
    """For a sandbox that shows both read-only: a copy's caches, and a layer's applied to it, are
    links to their files; sources, links and other files are what they were."""
    template = _template(tmp_path / "real")
    cache = template / "lib" / "site-packages" / "legacy" / "__pycache__"
    cache.mkdir()
    (cache / "__init__.cpython-312.pyc").write_bytes(b"template bytecode")
    (tmp_path / "seen").symlink_to(tmp_path / "real")  # the template reached through a link
    copy = tmp_path / "copy"
    subprocess.run(
        [sys.executable, "-I", tree_copy.__file__, str(tmp_path / "seen" / "template"), str(copy), "linked-bytecode"],
        check=True,
    )
    linked = copy / "lib" / "site-packages" / "legacy" / "__pycache__" / "__init__.cpython-312.pyc"
    assert linked.is_symlink() and os.readlink(linked) == str(cache / "__init__.cpython-312.pyc")
    assert not (copy / "lib" / "site-packages" / "legacy" / "__init__.py").is_symlink()  # a source is copied
    assert os.readlink(copy / "lib" / "site-packages" / "cached") == "/uv-cache/archive/cached"
    assert changes(copy, template).empty  # caches are not what a case changed

    layer = tmp_path / "key" / "delta"
    layer_cache = layer / "lib" / "site-packages" / "genai" / "__pycache__"
    layer_cache.mkdir(parents=True)
    (layer / "lib" / "site-packages" / "genai" / "__init__.py").write_text("VERSION = '2.24.0'\n")
    (layer_cache / "__init__.cpython-312.pyc").write_bytes(b"layer bytecode")
    (tmp_path / "key" / DELETED).write_text("[]\n")
    apply_layer(layer, copy, link_bytecode=True)
    applied = copy / "lib" / "site-packages" / "genai" / "__pycache__" / "__init__.cpython-312.pyc"
    assert applied.is_symlink() and applied.resolve() == (layer_cache / "__init__.cpython-312.pyc").resolve()
    assert applied.read_bytes() == b"layer bytecode"
    assert not (copy / "lib" / "site-packages" / "genai" / "__init__.py").is_symlink()
    plain = _copy(template, tmp_path / "plain")  # without the mode, bytecode is copied, as before
    assert not (plain / "lib" / "site-packages" / "legacy" / "__pycache__" / "__init__.cpython-312.pyc").is_symlink()
