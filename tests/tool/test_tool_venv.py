"""A tool venv (``--obelize=obelize==X``) is kept across sessions, keyed on the spec and ``exclude_newer``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_obelize_bench.tool.info import ToolInfo
from pytest_obelize_bench.tool.venv import MARKER, key_digest, read_marker, resolve_tool, venv_key

EARLY = "2026-11-01T00:00:00Z"
LATE = "2099-01-01T00:00:00Z"


def test_the_key_names_the_spec_the_cutoff_and_the_interpreter() -> None:
    key = venv_key("obelize==0.7.0", EARLY)
    assert key == {
        "spec": "obelize==0.7.0",
        "exclude_newer": EARLY,
        "python": sys.executable,
        "python_version": sys.version,
    }
    assert key_digest(key) == key_digest(venv_key("obelize==0.7.0", EARLY))
    digests = {
        key_digest(venv_key(spec, cutoff))
        for spec in ("obelize==0.7.0", "obelize==0.8.0")
        for cutoff in (EARLY, LATE, None)
    }
    assert len(digests) == 6
    assert all(len(digest) == 12 and int(digest, 16) >= 0 for digest in digests)


def test_an_unfinished_or_foreign_marker_is_no_venv(tmp_path: Path) -> None:
    assert read_marker(tmp_path) is None
    (tmp_path / MARKER).write_text("{half")
    assert read_marker(tmp_path) is None
    (tmp_path / MARKER).write_text("[1]")
    assert read_marker(tmp_path) is None
    (tmp_path / MARKER).write_text(json.dumps(venv_key("obelize==0.7.0", EARLY)))
    assert read_marker(tmp_path) == venv_key("obelize==0.7.0", EARLY)


def _resolve_in_another_process(root: Path, cutoff: str) -> ToolInfo:
    """A second session: a fresh interpreter resolving the same spec over the same tool root."""
    program = (
        "import sys; from pathlib import Path; from pytest_obelize_bench.tool.venv import resolve_tool; "
        "print(resolve_tool(sys.argv[1], tool_root=Path(sys.argv[2]), exclude_newer=sys.argv[3]).to_json())"
    )
    env = {k: v for k, v in os.environ.items() if k != "UV_EXCLUDE_NEWER"}
    done = subprocess.run(
        [sys.executable, "-c", program, "obelize==0.7.0", str(root), cutoff],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return ToolInfo.from_json(done.stdout.strip().splitlines()[-1])


@pytest.mark.usefixtures("index_uv_cache")
def test_a_tool_venv_is_kept_across_sessions_and_keyed_on_exclude_newer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("UV_EXCLUDE_NEWER", raising=False)
    root = tmp_path / "tools"
    first = resolve_tool("obelize==0.7.0", tool_root=root, exclude_newer=LATE)
    venv = Path(first.python).parent.parent
    assert venv.parent == root and venv.name == f"obelize-0.7.0-{key_digest(venv_key('obelize==0.7.0', LATE))}"
    assert read_marker(venv) == venv_key("obelize==0.7.0", LATE)
    install_log = root / "logs" / f"{venv.name}.install.log"
    assert f"--exclude-newer {LATE}" in install_log.read_text().splitlines()[0]
    stamps = ((venv / MARKER).stat().st_mtime_ns, install_log.stat().st_mtime_ns)

    # another session with the same spec and cutoff: the same venv, and uv pip install never ran again
    again = _resolve_in_another_process(root, LATE)
    assert again == first
    assert ((venv / MARKER).stat().st_mtime_ns, install_log.stat().st_mtime_ns) == stamps
    assert len(list((root / "logs").glob("*.install.log"))) == 1

    # a different cutoff builds a venv of its own and leaves the first one as it was
    other = resolve_tool("obelize==0.7.0", tool_root=root, exclude_newer=EARLY)
    assert other.version == "0.7.0" and other.python != first.python
    assert read_marker(Path(other.python).parent.parent) == venv_key("obelize==0.7.0", EARLY)
    assert len(list((root / "logs").glob("*.install.log"))) == 2
    assert ((venv / MARKER).stat().st_mtime_ns, install_log.stat().st_mtime_ns) == stamps
    out = subprocess.run([*first.argv_prefix, "--version"], check=False, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "obelize 0.7.0"
