"""The answers of the obelize beside the harness are reused only while nothing it imports changed."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_obelize_bench.tool.answers import ANSWERS, keep_answer
from pytest_obelize_bench.tool.info import ToolInfo
from pytest_obelize_bench.tool.installed_answers import (
    PACKAGE_BYTES_CAP,
    answers_folder,
    installed_marker,
    keep_probe,
    kept_probe,
)
from pytest_obelize_bench.tool.packs import PackInfo, pack_provenance
from pytest_obelize_bench.tool.venv import resolve_tool

PYTHON = "/venv/bin/python"


def _installed(root: Path) -> tuple[Path, Path, dict[str, Any]]:
    """A site-packages folder with an obelize package in it, and the probe answer that names it."""
    site = root / "site-packages"
    package = site / "obelize"
    (package / "packs" / "gemini").mkdir(parents=True)
    (package / "__init__.py").write_text('__version__ = "0.8.0"\n')
    (package / "packs" / "gemini" / "pack.yaml").write_text("rules: []\n")
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "__init__.cpython-312.pyc").write_bytes(b"compiled")
    (site / "obelize-0.8.0.dist-info").mkdir()
    probe = {"file": str(package / "__init__.py"), "main": True, "module_version": "0.8.0", "version": "0.8.0"}
    return site, package, probe


def test_a_kept_probe_holds_until_a_file_obelize_imports_changes(tmp_path: Path) -> None:
    site, package, probe = _installed(tmp_path)
    folder = tmp_path / "venv"
    folder.mkdir()
    assert kept_probe(PYTHON, folder, [site]) is None  # nothing kept yet
    marker = keep_probe(PYTHON, probe, folder, [site])
    assert marker is not None
    assert kept_probe(PYTHON, folder, [site]) == (probe, marker)

    # Bytecode caches are not what obelize answers from.
    (package / "__pycache__" / "other.cpython-312.pyc").write_bytes(b"more")
    assert kept_probe(PYTHON, folder, [site]) == (probe, marker)

    changes: list[Callable[[], object]] = [
        lambda: (package / "packs" / "gemini" / "pack.yaml").write_text("rules: [one]\n"),  # an edited pack
        lambda: (package / "packs" / "new.yaml").write_text("x: 1\n"),  # a new file
        lambda: (site / "obelize-0.8.0.dist-info").rename(site / "obelize-0.8.1.dist-info"),  # a reinstall
        (site / "pydantic-2.99.0.dist-info").mkdir,  # a dependency beside it
        lambda: (site / "editable.pth").write_text("/elsewhere\n"),  # an editable install's path
        lambda: (site / "editable.pth").write_text("/another\n"),
    ]
    for change in changes:
        change()
        assert kept_probe(PYTHON, folder, [site]) is None
        marker = keep_probe(PYTHON, probe, folder, [site])
        assert kept_probe(PYTHON, folder, [site]) == (probe, marker)
    # Another interpreter's answers are not this one's.
    assert kept_probe("/other/bin/python", folder, [site]) is None


def test_answers_of_another_marker_go_and_bad_files_are_not_reused(tmp_path: Path) -> None:
    site, package, probe = _installed(tmp_path)
    folder = tmp_path / "venv"
    folder.mkdir()
    keep_probe(PYTHON, probe, folder, [site])
    kept = json.loads((folder / ANSWERS).read_text())
    kept["pack:gemini"] = {"pack": "gemini"}
    (folder / ANSWERS).write_text(json.dumps(kept))
    (package / "packs" / "gemini" / "pack.yaml").write_text("rules: [edited]\n")
    keep_probe(PYTHON, probe, folder, [site])
    assert "pack:gemini" not in json.loads((folder / ANSWERS).read_text())  # answered of the old files
    for text in ("not json", "[]", json.dumps({"marker": kept["marker"], "probe": {"file": 7}})):
        (folder / ANSWERS).write_text(text)
        assert kept_probe(PYTHON, folder, [site]) is None
    # What cannot be read has no marker: nothing is kept under it.
    assert installed_marker(PYTHON, str(probe["file"]), [tmp_path / "no-site"]) is None


def test_a_package_over_the_cap_is_asked_every_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site, _, probe = _installed(tmp_path)
    monkeypatch.setattr("pytest_obelize_bench.tool.installed_answers.PACKAGE_BYTES_CAP", 4)
    assert PACKAGE_BYTES_CAP > 4
    assert installed_marker(PYTHON, str(probe["file"]), [site]) is None
    folder = tmp_path / "venv"
    folder.mkdir()
    assert keep_probe(PYTHON, probe, folder, [site]) is None
    assert not (folder / ANSWERS).exists()


def test_only_the_harness_interpreter_in_a_venv_keeps_answers() -> None:
    assert answers_folder("/usr/bin/python3") is None
    expected = Path(sys.prefix) if sys.prefix != sys.base_prefix else None
    assert answers_folder(sys.executable) == expected


def test_a_session_reuses_the_answers_it_kept_and_they_are_the_tools(tmp_path: Path) -> None:
    """Through the real resolver and the real obelize beside the harness: the kept answers are
    what asking gives, and a second resolution does not ask."""
    if answers_folder(sys.executable) is None:
        pytest.skip("the harness does not run in a venv")
    asked = resolve_tool(None, tool_root=tmp_path / "tools")
    kept = kept_probe(sys.executable)
    assert kept is not None and kept[0]["version"] == asked.version
    pack = "gemini/google-generativeai-to-google-genai"
    first = pack_provenance(asked, pack)
    assert first.pack_sha256 is not None
    stored = json.loads((Path(sys.prefix) / ANSWERS).read_text())
    assert stored["marker"] == kept[1] and stored[f"pack:{pack}"] == first.model_dump(mode="json")
    assert resolve_tool(None, tool_root=tmp_path / "tools") == asked
    assert pack_provenance(asked, pack) == first
    # The resolution carries the marker it kept its answers under, for the pack answers to use.
    assert asked.answers_marker == tuple(sorted(kept[1].items()))


def test_the_pack_answers_are_kept_under_the_marker_the_session_resolved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The package is hashed once a session: the pack answers key to the marker the resolution kept
    (travelling in ``ToolInfo``), and an installed obelize resolved without one is asked."""
    folder = tmp_path / "venv"
    folder.mkdir()
    monkeypatch.setattr("pytest_obelize_bench.tool.packs.answers_folder", lambda python: folder)

    def hashed_again(*_: object) -> None:
        raise AssertionError("the package was hashed a second time")

    monkeypatch.setattr("pytest_obelize_bench.tool.installed_answers.installed_marker", hashed_again)
    pack = "gemini/google-generativeai-to-google-genai"
    marker = {"installed_obelize": "ab" * 32}
    kept = PackInfo(pack=pack, pack_sha256="cd" * 32, spec_sha256="ef" * 32, bundled=True)
    keep_answer(folder, marker, f"pack:{pack}", kept.model_dump(mode="json"))
    tool = _installed_tool(marker)
    assert pack_provenance(tool, pack) == kept
    other = tool.model_copy(update={"answers_marker": (("installed_obelize", "00" * 32),)})
    asked = pack_provenance(other, pack)  # kept under another marker: obelize is asked
    assert asked.pack_sha256 is not None and asked != kept
    unmarked = pack_provenance(tool.model_copy(update={"answers_marker": None}), pack)
    assert unmarked == asked  # nothing to key to: asked, and nothing kept under it
    assert json.loads((folder / ANSWERS).read_text())["marker"] == {"installed_obelize": "00" * 32}


def test_an_answer_kept_before_bundled_was_asked_is_asked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "venv"
    folder.mkdir()
    monkeypatch.setattr("pytest_obelize_bench.tool.packs.answers_folder", lambda python: folder)
    pack = "gemini/google-generativeai-to-google-genai"
    marker = {"installed_obelize": "ab" * 32}
    keep_answer(folder, marker, f"pack:{pack}", {"pack": pack, "pack_sha256": "cd" * 32, "spec_sha256": "ef" * 32})
    tool = _installed_tool(marker)
    asked = pack_provenance(tool, pack)
    assert asked.bundled is True and asked.pack_sha256 != "cd" * 32


def _installed_tool(marker: dict[str, str]) -> ToolInfo:
    """The obelize installed beside the harness, its answers kept under ``marker``."""
    return ToolInfo(
        argv_prefix=(sys.executable, "-I", "-m", "obelize"),
        python=sys.executable,
        version="0.8.0",
        commit=None,
        tree_dirty=None,
        source="installed",
        spec=None,
        answers_marker=tuple(marker.items()),
    )
