"""A case's upper layer: bytecode caches are dropped, anything else keeps the view the case's own."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from pytest_obelize_bench.case.upper_layer import drop_caches

SITE = "lib/python3.12/site-packages"


def _cache(upper: Path, package: str) -> Path:
    path = upper / SITE / package / "__pycache__" / "__init__.cpython-312.pyc"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\x00cache")
    return path


def test_caches_and_the_folders_they_leave_empty_are_dropped(tmp_path: Path) -> None:
    upper = tmp_path / "upper"
    _cache(upper, "google")
    _cache(upper, "grpc")
    assert drop_caches(upper) is True
    assert upper.is_dir() and not any(upper.iterdir())


def test_an_empty_upper_layer_is_clean_and_a_missing_one_is_not(tmp_path: Path) -> None:
    (tmp_path / "upper").mkdir()
    assert drop_caches(tmp_path / "upper") is True
    assert drop_caches(tmp_path / "missing") is False


@pytest.mark.parametrize(
    "written",
    [
        f"{SITE}/leaked.py",  # a module the suite wrote
        "pyvenv.cfg",  # a file of the template it changed (copied up)
        f"{SITE}/pkg/__pycache__/notes.txt",  # not bytecode, though in a cache folder
        f"{SITE}/pkg/stray.pyc",  # bytecode outside a cache folder: imported as a module
    ],
)
def test_a_file_of_the_case_keeps_the_view_its_own_and_its_caches_still_go(tmp_path: Path, written: str) -> None:
    upper = tmp_path / "upper"
    cache = _cache(upper, "google")
    (upper / written).parent.mkdir(parents=True, exist_ok=True)
    (upper / written).write_text("the case's\n")
    assert drop_caches(upper) is False
    assert (upper / written).read_text() == "the case's\n"
    assert not cache.exists()


def test_a_symlink_is_content_and_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    _cache(outside, "elsewhere")
    upper = tmp_path / "upper"
    (upper / SITE).mkdir(parents=True)
    (upper / SITE / "link").symlink_to(outside / SITE, target_is_directory=True)
    assert drop_caches(upper) is False
    assert (outside / SITE / "elsewhere" / "__pycache__" / "__init__.cpython-312.pyc").is_file()


def test_a_whiteout_of_a_deleted_file_is_content(tmp_path: Path) -> None:
    upper = tmp_path / "upper"
    (upper / SITE).mkdir(parents=True)
    try:  # how overlayfs records a deletion: a character device 0/0
        os.mknod(upper / SITE / "METADATA", stat.S_IFCHR | 0o000, os.makedev(0, 0))
    except PermissionError:
        pytest.skip("this user may not make a whiteout here")
    assert drop_caches(upper) is False
    assert stat.S_ISCHR(os.lstat(upper / SITE / "METADATA").st_mode)


def test_an_empty_folder_marked_opaque_hides_the_template_and_is_kept(tmp_path: Path) -> None:
    upper = tmp_path / "upper"
    replaced = upper / SITE / "google"
    replaced.mkdir(parents=True)
    try:  # a folder the suite deleted and made again: in a user namespace, the user.* name
        os.setxattr(replaced, "user.overlay.opaque", b"y")
    except OSError as error:
        pytest.skip(f"no user extended attributes here: {error.strerror}")
    assert drop_caches(upper) is False
    assert replaced.is_dir()
