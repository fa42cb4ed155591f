"""A case whose install commands read its checkout reuses, in its next round, the environment its install
made, while nothing it read changed; a new commit or a changed requirements file installs again.

Real rounds (real git, real uv) over one local repository whose reviewed install resolves a range
from its requirements file and a name without a pin: commands no key covered before, because what
they install depends on the commit (``uv pip install .`` is keyed the same way; unit tests in
``tests/case/test_envreuse.py``). The second round runs in the same work root (the user's next
round), so it finds the template the first one built.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import rounds
from tests.helpers.rounds import run_pytest

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("index_uv_cache")]

CUTOFF = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
CASE = "q1__trap-vertex"
#: Reads the checkout (a range in its requirements file) and resolves a name without a pin.
INSTALL = ["uv pip install -r requirements.txt", "uv pip install pytest"]
REQUIREMENTS = "pytest>=8,<9\n"


def _round(root: Path, results: str, row: dict[str, Any]) -> dict[str, Any]:
    rounds.write_case_file(root / "project" / "cases" / "cases.yaml", [row])
    done = run_pytest(
        root / "project",
        "--bench-round=2",
        "--bench-allow-dirty",
        "--bench-interpreter=minor",
        "--bench-sandbox=none",
        f"--exclude-newer={CUTOFF}",
        f"--bench-work={root / 'work'}",
        f"--bench-results={root / results}",
        "-q",
    )
    folder = root / results / "round-2"
    assert folder.is_dir(), done.stdout[-3000:] + done.stderr[-2000:]
    record = rounds.read_records(rounds.only_run(folder))[CASE]
    assert record["error"] is None, record["error"]
    return record


def _steps(record: dict[str, Any]) -> list[str]:
    return [str(step["name"]) for step in record["steps"]]


def test_an_install_that_reads_the_checkout_is_reused_until_what_it_read_changes(tmp_path: Path) -> None:
    row = rounds.case_row_from_fixture("trap-vertex", "q1", tmp_path / "q1", install=INSTALL)
    row = rounds.with_files(row, tmp_path / "q1", {"requirements.txt": REQUIREMENTS})

    first = _round(tmp_path, "results-1", row)
    key = first["provenance"]["env_template"]
    assert first["provenance"]["env_view"] == "built" and key is not None
    assert "install" in _steps(first)

    # The user's next round: same work root, same commit, same files, same commands.
    again = _round(tmp_path, "results-2", row)
    assert again["provenance"]["env_view"] == "copy" and again["provenance"]["env_template"] == key
    assert "install" not in _steps(again) and "install-from" not in _steps(again)
    assert again["provenance"]["packages_sha256"] == first["provenance"]["packages_sha256"]

    # A new commit that changes nothing the commands name still installs again: the checkout is read.
    moved = rounds.with_files(dict(row), tmp_path / "q1", {"NOTES.md": "a new commit\n"})
    after_commit = _round(tmp_path, "results-3", moved)
    assert after_commit["provenance"]["env_view"] == "built"
    assert after_commit["provenance"]["env_template"] not in (None, key)
    assert "install" in _steps(after_commit)

    # A changed requirements file at a new commit: installed again, and a key of its own.
    changed = rounds.with_files(dict(moved), tmp_path / "q1", {"requirements.txt": "pytest>=8.1,<9\n"})
    after_file = _round(tmp_path, "results-4", changed)
    assert after_file["provenance"]["env_view"] == "built"
    assert after_file["provenance"]["env_template"] not in (None, key, after_commit["provenance"]["env_template"])
