"""The tutorial's shell blocks, pasted as written: every offline command runs and exits 0.

Running them takes about a minute (the fixtures pass is among them), so the test that runs them
is marked ``tutorial`` and runs only when asked for with ``-m tutorial``, as ``.ci/run`` does;
the parsing test runs everywhere. Commands that need the network (the set-up, a real round) are
named below, so a new command in the tutorial is either run here or consciously left out.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers.doc_commands import shell_commands

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorial.md"

#: The tutorial's commands that need the network: PyPI for the set-up, the repositories for a round.
NEEDS_NETWORK = frozenset(
    {
        'python3 -m venv .venv && .venv/bin/pip install -e ".[test]"',
        ".venv/bin/pytest --bench-round=2 -n 8 --bench-interpreter=minor",
    }
)


def offline_commands() -> list[str]:
    return [c for c in shell_commands(TUTORIAL.read_text(encoding="utf-8")) if c not in NEEDS_NETWORK]


def test_the_tutorial_blocks_are_read_and_every_network_command_is_still_there() -> None:
    commands = shell_commands(TUTORIAL.read_text(encoding="utf-8"))
    assert set(commands) >= NEEDS_NETWORK, "a command named in NEEDS_NETWORK left the tutorial"
    assert ".venv/bin/python -m pytest --fixtures-only" in offline_commands()
    assert shell_commands("```sh\na \\\n  b   # why\n# note\n```\n```text\nc\n```\n") == ["a    b"]


@pytest.mark.tutorial
@pytest.mark.parametrize("command", offline_commands())
def test_an_offline_tutorial_command_runs_as_pasted(command: str, tmp_path: Path) -> None:
    if not (ROOT / ".venv" / "bin" / "python").exists():
        pytest.skip("the tutorial's commands use the project's .venv (the set-up of Start here)")
    # The default work root is <system temp>/obelize-bench-<uid>: a temp folder of this test's own.
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    result = subprocess.run(
        ["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    assert result.returncode == 0, f"{command}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
