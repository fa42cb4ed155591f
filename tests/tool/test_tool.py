"""The tool seam (its environment, the adapter, the fix step), against the real obelize 0.8.0 beside the harness."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_obelize_bench.isolation.policy import uv_binary
from pytest_obelize_bench.tool.adapter import DOCUMENTED_EXIT_CODES
from pytest_obelize_bench.tool.fix_step import fix_argv
from pytest_obelize_bench.tool.info import ToolError, ToolInfo
from pytest_obelize_bench.tool.packs import PackInfo, pack_provenance
from pytest_obelize_bench.tool.venv import resolve_tool
from tests.helpers.packs import GEMINI, GEMINI_SHA


def test_installed_tool(installed: ToolInfo) -> None:
    assert installed.source == "installed"
    assert installed.version == "0.8.0"
    assert installed.python == sys.executable
    assert installed.argv_prefix == (sys.executable, "-I", "-m", "obelize")
    assert (installed.commit, installed.tree_dirty, installed.spec) == (None, None, None)
    out = subprocess.run([*installed.argv_prefix, "--version"], check=False, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "obelize 0.8.0"


def test_tool_info_json_round_trip(installed: ToolInfo) -> None:
    text = installed.to_json()
    assert json.loads(text)["argv_prefix"] == list(installed.argv_prefix)
    assert ToolInfo.from_json(text) == installed
    checkout = installed.model_copy(
        update={"source": "checkout", "commit": "a" * 40, "tree_dirty": True, "spec": "../obelize"}
    )
    assert ToolInfo.from_json(checkout.to_json()) == checkout


@pytest.mark.parametrize(
    "text",
    [
        "nope",
        "[]",
        '{"argv_prefix": []}',
        json.dumps(
            {
                "argv_prefix": [],
                "python": "p",
                "version": "1",
                "commit": None,
                "tree_dirty": None,
                "source": "installed",
                "spec": None,
            }
        ),
        json.dumps(
            {
                "argv_prefix": ["p"],
                "python": "p",
                "version": "1",
                "commit": None,
                "tree_dirty": "no",
                "source": "installed",
                "spec": None,
            }
        ),
        json.dumps(
            {
                "argv_prefix": ["p"],
                "python": "p",
                "version": "1",
                "commit": None,
                "tree_dirty": None,
                "source": "pypi",
                "spec": None,
            }
        ),
    ],
)
def test_tool_info_from_bad_json(text: str) -> None:
    with pytest.raises(ToolError):
        ToolInfo.from_json(text)


@pytest.mark.parametrize(
    "spec,words",
    [
        ("", "empty"),
        ("   ", "empty"),
        ("requests==2.0", "not obelize"),
        ("obelize", "not pinned"),
        ("obelize>=0.7", "not pinned"),
        ("obelize==0.7.*", "not pinned"),
        ("obelize==0.7,<1", "not pinned"),
        ("obelize[mcp]==0.7.0", "plain pin"),
        ("obelize==0.7.0; python_version>'3'", "plain pin"),
        ("obelize @ https://example.invalid/o.whl", "plain pin"),
        ("obelize==", "neither a requirement"),
        ("some thing", "neither a requirement"),
        ("./does-not-exist", "not a directory"),
    ],
)
def test_bad_specs_are_one_line_tool_errors(tmp_path: Path, spec: str, words: str) -> None:
    with pytest.raises(ToolError) as excinfo:
        resolve_tool(spec, tool_root=tmp_path / "tools")
    message = str(excinfo.value)
    assert words in message
    assert "\n" not in message
    assert not (tmp_path / "tools").exists()  # nothing was built for a bad spec


def test_a_directory_that_is_not_an_obelize_checkout(tmp_path: Path) -> None:
    (tmp_path / "proj" / "src" / "other").mkdir(parents=True)
    (tmp_path / "proj" / "pyproject.toml").write_text("[project]\nname='other'\n")
    with pytest.raises(ToolError, match="not an obelize source checkout"):
        resolve_tool(str(tmp_path / "proj"), tool_root=tmp_path / "tools")


def test_pack_provenance_from_obelize_own_loader(installed: ToolInfo) -> None:
    provenance = pack_provenance(installed, GEMINI)
    assert provenance.pack == GEMINI
    assert provenance.pack_sha256 == GEMINI_SHA
    assert provenance.spec_sha256 is not None and len(provenance.spec_sha256) == 64
    assert set(provenance.model_dump()) == {"pack", "pack_sha256", "spec_sha256", "bundled"}
    assert provenance.bundled is True


def test_a_pack_the_release_does_not_ship_is_told_apart_from_a_path(installed: ToolInfo) -> None:
    """``bundled`` is False for a well-formed id the release does not ship, None for what is no id."""
    assert pack_provenance(installed, "nosuch/pack-id").bundled is False
    assert pack_provenance(installed, "gemini").bundled is None


def test_pack_provenance_of_an_unknown_pack_is_null(installed: ToolInfo) -> None:
    assert pack_provenance(installed, "gemini") == PackInfo(pack="gemini", pack_sha256=None, spec_sha256=None)
    assert pack_provenance(installed, "gemini").bundled is None


def test_pack_provenance_without_the_api_is_null_not_a_crash(tmp_path: Path, installed: ToolInfo) -> None:
    missing = installed.model_copy(update={"python": str(tmp_path / "no-such-python")})
    assert pack_provenance(missing, GEMINI) == PackInfo(pack=GEMINI, pack_sha256=None, spec_sha256=None)
    # an interpreter with no obelize at all: no loader API to ask
    subprocess.run(
        [uv_binary(), "venv", "-q", "--python", sys.executable, str(tmp_path / "bare")],
        check=True,
        capture_output=True,
        timeout=120,
    )
    bare = installed.model_copy(update={"python": str(tmp_path / "bare" / "bin" / "python")})
    assert pack_provenance(bare, GEMINI) == PackInfo(pack=GEMINI, pack_sha256=None, spec_sha256=None)


def test_fix_argv(installed: ToolInfo) -> None:
    assert fix_argv(installed, checkout=Path("/w/case"), pack=GEMINI) == [
        sys.executable,
        "-I",
        "-m",
        "obelize",
        "fix",
        "--repo",
        "/w/case",
        "--pack",
        GEMINI,
        "--apply",
        "--non-interactive",
        "--model",
        "none",
        "--json",
    ]
    assert "--verify" not in fix_argv(installed, checkout=Path("/w/case"), pack=GEMINI)


def test_documented_exit_codes() -> None:
    assert DOCUMENTED_EXIT_CODES == (0, 3, 4, 5, 6)
