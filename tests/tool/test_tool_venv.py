"""A tool venv (``--obelize=obelize==X``) is kept across sessions, keyed on the spec and ``exclude_newer``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_obelize_bench.isolation.executor import Answer
from pytest_obelize_bench.tool import venv as tool_venv
from pytest_obelize_bench.tool.info import ToolInfo
from pytest_obelize_bench.tool.venv import (
    EXEMPT_FIELD,
    MARKER,
    exempt_argv,
    key_digest,
    read_marker,
    resolve_tool,
    venv_key,
)

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
    assert first.exclude_newer_tool is not None
    assert read_marker(venv) == {**venv_key("obelize==0.7.0", LATE), EXEMPT_FIELD: first.exclude_newer_tool}
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
    marker = read_marker(Path(other.python).parent.parent)
    assert marker == {**venv_key("obelize==0.7.0", EARLY), EXEMPT_FIELD: other.exclude_newer_tool}
    assert len(list((root / "logs").glob("*.install.log"))) == 2
    assert ((venv / MARKER).stat().st_mtime_ns, install_log.stat().st_mtime_ns) == stamps
    out = subprocess.run([*first.argv_prefix, "--version"], check=False, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "obelize 0.7.0"


# -- the named release is exempt from the cutoff, its dependencies are not --------------------


def test_the_exemption_argv_names_the_cutoff_and_the_release_moment() -> None:
    assert exempt_argv(None, "obelize", "2026-12-03T00:00:00Z") == []
    assert exempt_argv(EARLY, None, None) == ["--exclude-newer", EARLY]
    assert exempt_argv(EARLY, "obelize", "2026-12-03T00:00:00Z") == [
        "--exclude-newer",
        EARLY,
        "--exclude-newer-package",
        "obelize=2026-12-03T00:00:00Z",
    ]


class _RecordingInstall:
    """Stands in for uv: records each argv, makes the venv's python, answers success."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, argv: list[str], *, timeout: float, cwd: Path, env: dict[str, str], log: Path) -> Answer:
        self.calls.append(list(argv))
        if argv[1] == "venv":
            python = Path(argv[-1]) / "bin" / "python"
            python.parent.mkdir(parents=True, exist_ok=True)
            python.write_text("")
        return Answer(exit_code=0, output="", timed_out=False, launch_error=None)


def test_a_pinned_release_installs_exempt_and_a_reused_venv_keeps_its_moment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install = _RecordingInstall()
    monkeypatch.setattr(tool_venv, "_execute", install)
    monkeypatch.setattr(tool_venv, "utc_moment", lambda: "2026-12-03T10:00:00Z")
    key = venv_key("obelize==0.1.0", EARLY)
    venv = tmp_path / "tools" / "v"
    python, built = tool_venv._ensure_venv(venv, key, ["obelize==0.1.0"], what="t", exempt="obelize")
    pip = next(call for call in install.calls if call[1:3] == ["pip", "install"])
    assert pip[pip.index("--exclude-newer") + 1] == EARLY
    assert pip[pip.index("--exclude-newer-package") + 1] == "obelize=2026-12-03T10:00:00Z"
    assert built == read_marker(venv) == {**key, EXEMPT_FIELD: "2026-12-03T10:00:00Z"}

    # a later session reuses the venv: nothing installs, and the moment is the first build's
    monkeypatch.setattr(tool_venv, "utc_moment", lambda: "2026-12-04T10:00:00Z")
    install.calls.clear()
    again, kept = tool_venv._ensure_venv(venv, key, ["obelize==0.1.0"], what="t", exempt="obelize")
    assert (again, kept) == (python, built) and install.calls == []

    # a source checkout (nothing exempt) and a venv with no cutoff pass no exemption at all
    for marker, exempt in ((venv_key("/src/obelize", EARLY), None), (venv_key("obelize==0.1.0", None), "obelize")):
        install.calls.clear()
        _, plain = tool_venv._ensure_venv(
            tmp_path / "tools" / key_digest(marker), marker, ["x"], what="t", exempt=exempt
        )
        assert EXEMPT_FIELD not in plain
        assert not any("--exclude-newer-package" in call for call in install.calls)


ROUND_1_CUTOFF = "2026-09-29T00:00:00Z"


@pytest.mark.usefixtures("index_uv_cache")
def test_round_1s_tool_installs_at_round_1s_cutoff(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """obelize 0.1.0 was uploaded after round 1's cutoff: only the exemption lets the replay install it."""
    monkeypatch.delenv("UV_EXCLUDE_NEWER", raising=False)
    root = tmp_path / "tools"
    info = resolve_tool("obelize==0.1.0", tool_root=root, exclude_newer=ROUND_1_CUTOFF)
    assert info.version == "0.1.0" and info.exclude_newer_tool is not None
    venv = Path(info.python).parent.parent
    command = (root / "logs" / f"{venv.name}.install.log").read_text().splitlines()[0]
    assert f"--exclude-newer {ROUND_1_CUTOFF}" in command
    assert f"--exclude-newer-package obelize={info.exclude_newer_tool}" in command

    # the same install without the exemption is refused by the cutoff: the exemption is what works
    from pytest_obelize_bench.isolation.policy import uv_binary

    plain = tmp_path / "plain"
    env = tool_venv.install_environment(tmp_path)
    subprocess.run([uv_binary(), "venv", "-q", "--python", sys.executable, str(plain)], check=True, env=env)
    python = str(plain / "bin" / "python")
    refused = subprocess.run(
        [uv_binary(), "pip", "install", "--python", python, "--exclude-newer", ROUND_1_CUTOFF, "obelize==0.1.0"],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert refused.returncode != 0 and "exclude-newer" in refused.stderr


def test_a_release_venv_is_asked_once_and_answers_under_another_marker_are_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The probe and a pack's digests are asked of a release's venv once, then read from it."""
    from pytest_obelize_bench.tool import packs
    from pytest_obelize_bench.tool.answers import ANSWERS
    from pytest_obelize_bench.tool.packs import pack_provenance

    monkeypatch.delenv("UV_EXCLUDE_NEWER", raising=False)
    root = tmp_path / "tools"
    gemini = "gemini/google-generativeai-to-google-genai"
    first = resolve_tool("obelize==0.8.0", tool_root=root, exclude_newer=LATE)
    pack = pack_provenance(first, gemini)
    assert pack.pack_sha256 is not None and pack.spec_sha256 is not None
    venv = Path(first.python).parent.parent
    kept = json.loads((venv / ANSWERS).read_text(encoding="utf-8"))
    assert kept["marker"] == read_marker(venv) and kept["probe"]["file"]
    assert kept[f"pack:{gemini}"] == pack.model_dump(mode="json")

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the tool was asked again")

    monkeypatch.setattr(tool_venv, "_probe", refuse)
    monkeypatch.setattr(packs, "run_program", refuse)
    assert resolve_tool("obelize==0.8.0", tool_root=root, exclude_newer=LATE) == first
    assert pack_provenance(first, gemini) == pack
    # Answers kept under another marker (or edited to name another pack) are not this venv's.
    (venv / ANSWERS).write_text(json.dumps({**kept, "marker": {"spec": "obelize==9.9.9"}}), encoding="utf-8")
    with pytest.raises(AssertionError, match="asked again"):
        resolve_tool("obelize==0.8.0", tool_root=root, exclude_newer=LATE)
    (venv / ANSWERS).write_text(
        json.dumps({**kept, f"pack:{gemini}": {**kept[f"pack:{gemini}"], "pack": "other"}}), encoding="utf-8"
    )
    with pytest.raises(AssertionError, match="asked again"):
        pack_provenance(first, gemini)
