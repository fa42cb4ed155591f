"""The answers of the obelize installed beside the harness, kept while what it imports is unchanged.

Why: a session asked that obelize which version it is and what each pack's digests are, two
interpreter starts importing obelize and its pack loader (about 0.36 s of every session's fixed
cost, most of a resumed round's), though between two sessions nothing it reads had changed.

Its answers depend on nothing but the files its interpreter imports under ``-I``: the obelize
package itself and what is installed beside it.  So they are kept (``answers.py``, in the
harness's venv) under a marker that is a sha256 of exactly that: the interpreter's path, every
file of the obelize package the tool reported it imports (path and bytes, bytecode caches
aside), the names of the entries of the venv's site-packages (each distribution's version is in
its ``.dist-info`` name) and the content of every ``.pth`` file there (an editable install points
elsewhere through one).  An edited pack, a reinstall, an upgraded dependency or another editable
checkout gives another marker, and the tool is asked again.  Outside a venv (a system
interpreter) nothing is kept: its prefix is not the harness's to write.  A session computes the
marker once, when it resolves the tool; its pack answers are kept under the same one
(``ToolInfo.answers_marker``), about 15 ms of hashing less at every start.
"""

from __future__ import annotations

import hashlib
import os
import sys
import sysconfig
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_obelize_bench.tool.answers import keep_answer, read_answers

#: The most bytes of package files a marker reads; a larger package is asked every session.
PACKAGE_BYTES_CAP = 64 * 1024 * 1024


def answers_folder(python: str) -> Path | None:
    """Where the answers of the obelize beside the harness are kept: the harness's venv, when
    ``python`` is the harness's own interpreter in one; None otherwise."""
    if python != sys.executable or sys.prefix == sys.base_prefix:
        return None
    return Path(sys.prefix)


def harness_site_dirs() -> list[Path]:
    """The site-packages folders of the harness's interpreter."""
    paths = sysconfig.get_paths()
    return sorted({Path(paths["purelib"]), Path(paths["platlib"])})


def installed_marker(python: str, package_file: str, site_dirs: Sequence[Path]) -> dict[str, str] | None:
    """The marker of what the obelize at ``package_file`` (its ``__init__.py``) answers from, with
    ``site_dirs`` beside it, or None when it cannot be read whole (then nothing is kept or reused)."""
    digest = hashlib.sha256(python.encode("utf-8"))
    try:
        for site in site_dirs:
            digest.update(f"\0site {site}".encode())
            for name in sorted(os.listdir(site)):
                digest.update(f"\0{name}".encode())
                if name.endswith(".pth"):
                    digest.update((site / name).read_bytes())
        package = Path(package_file).parent
        read = 0
        for folder, dirs, files in os.walk(package):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                path = Path(folder) / name
                data = path.read_bytes()
                read += len(data)
                if read > PACKAGE_BYTES_CAP:
                    return None
                digest.update(f"\0{path.relative_to(package).as_posix()}\0{len(data)}\0".encode())
                digest.update(data)
    except (OSError, ValueError):
        return None
    return {"installed_obelize": digest.hexdigest()}


def kept_probe(
    python: str, folder: Path | None = None, site_dirs: Sequence[Path] | None = None
) -> tuple[dict[str, Any], dict[str, str]] | None:
    """The kept probe answer of the obelize beside the harness and its marker, while it holds.

    ``folder`` and ``site_dirs`` default to the harness's venv and its site-packages.
    """
    folder = answers_folder(python) if folder is None else folder
    if folder is None:
        return None
    data = read_answers(folder)
    probe, marker = data.get("probe"), data.get("marker")
    if not isinstance(probe, dict) or not isinstance(probe.get("file"), str):
        return None
    current = installed_marker(python, probe["file"], harness_site_dirs() if site_dirs is None else site_dirs)
    if current is None or current != marker:
        return None
    return probe, current


def keep_probe(
    python: str, probe: dict[str, Any], folder: Path | None = None, site_dirs: Sequence[Path] | None = None
) -> dict[str, str] | None:
    """Keep a fresh probe answer under its marker (the answers of another marker go); the marker."""
    folder = answers_folder(python) if folder is None else folder
    file = probe.get("file")
    if folder is None or not isinstance(file, str):
        return None
    marker = installed_marker(python, file, harness_site_dirs() if site_dirs is None else site_dirs)
    keep_answer(folder, marker, "probe", probe)
    return marker


__all__ = ["PACKAGE_BYTES_CAP", "answers_folder", "harness_site_dirs", "installed_marker", "keep_probe", "kept_probe"]
