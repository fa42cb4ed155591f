"""A case whose install commands read its checkout reuses, in its next round, the environment its install
made, while nothing it read changed; a new commit installs again.

Real rounds (real git, real uv) over two local repositories: one whose reviewed install resolves a
range from its requirements file and a name without a pin, one that installs the checkout itself
with an extra from its pyproject (``uv pip install '.[test]'``, built by setuptools): commands no key
covered before, because what they install depends on the commit. The second round runs in the same
work root (the user's next round), so it finds the template the first one built. That a requirements
file is in the key by its content is shown without a round (``tests/case/test_envreuse.py``): a file
changes only with its commit, which a third round here already shows installs again.
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
#: A second case installs the checkout itself with its extras, as a project with a pyproject does.
PACKAGED = "q2__trap-vertex"
PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "q2-app"
version = "0.1.0"

[project.optional-dependencies]
test = ["pytest>=8"]

[tool.setuptools]
py-modules = []
"""


def _round(root: Path, results: str, row: dict[str, Any], packaged: dict[str, Any]) -> dict[str, dict[str, Any]]:
    rounds.write_case_file(root / "project" / "cases" / "cases.yaml", [row, packaged])
    done = run_pytest(
        root / "project",
        "--bench-round=2",
        "--bench-allow-dirty",
        "--bench-interpreter=minor",
        "--bench-sandbox=none",
        f"--exclude-newer={CUTOFF}",
        f"--bench-work={root / 'work'}",
        rounds.own_templates(root / "work"),  # it watches them built
        f"--bench-results={root / results}",
        "-q",
    )
    folder = root / results / "round-2"
    assert folder.is_dir(), done.stdout[-3000:] + done.stderr[-2000:]
    records = rounds.read_records(rounds.only_run(folder))
    for record in records.values():
        assert record["error"] is None, record["error"]
    return records


def _steps(record: dict[str, Any]) -> list[str]:
    return [str(step["name"]) for step in record["steps"]]


def test_an_install_that_reads_the_checkout_is_reused_until_what_it_read_changes(tmp_path: Path) -> None:
    row = rounds.case_row_from_fixture("trap-vertex", "q1", tmp_path / "q1", install=INSTALL)
    row = rounds.with_files(row, tmp_path / "q1", {"requirements.txt": REQUIREMENTS})
    packaged = rounds.case_row_from_fixture("trap-vertex", "q2", tmp_path / "q2", install=["uv pip install '.[test]'"])
    packaged = rounds.with_files(packaged, tmp_path / "q2", {"pyproject.toml": PYPROJECT})

    first_round = _round(tmp_path, "results-1", row, packaged)
    first, first_packaged = first_round[CASE], first_round[PACKAGED]
    assert first_packaged["provenance"]["env_view"] == "built" and "install" in _steps(first_packaged)
    key = first["provenance"]["env_template"]
    assert first["provenance"]["env_view"] == "built" and key is not None
    assert "install" in _steps(first)

    # The user's next round: same work root, same commit, same files, same commands.
    both = _round(tmp_path, "results-2", row, packaged)
    again = both[CASE]
    assert both[PACKAGED]["provenance"]["env_view"] == "copy" and "install" not in _steps(both[PACKAGED])
    assert again["provenance"]["env_view"] == "copy" and again["provenance"]["env_template"] == key
    assert "install" not in _steps(again) and "install-from" not in _steps(again)
    assert again["provenance"]["packages_sha256"] == first["provenance"]["packages_sha256"]

    # A new commit that changes nothing the commands name still installs again: the checkout is read.
    moved = rounds.with_files(dict(row), tmp_path / "q1", {"NOTES.md": "a new commit\n"})
    third = _round(tmp_path, "results-3", moved, packaged)
    after_commit = third[CASE]
    # the other case, at its own unchanged commit, still views what it installed in the first round
    assert third[PACKAGED]["provenance"]["env_template"] == first_packaged["provenance"]["env_template"]
    assert third[PACKAGED]["provenance"]["env_view"] == "copy"
    assert after_commit["provenance"]["env_view"] == "built"
    assert after_commit["provenance"]["env_template"] not in (None, key)
    assert "install" in _steps(after_commit)
