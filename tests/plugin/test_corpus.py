"""A round over repositories shaped like the real cases, through the real plugin.

Real git (local origins), real uv virtualenvs, real installs from PyPI (the legacy SDK, the new
one, setuptools for the pyproject builds, pytest-asyncio), real obelize. Each repository must
reach the tier its design implies; install commands that name files of the checkout must work.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import corpus, rounds
from tests.helpers.rounds import run_pytest
from tests.helpers.sandbox import bwrap_probe

pytestmark = pytest.mark.usefixtures("index_uv_cache")


@pytest.fixture(scope="module")
def corpus_round(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """The corpus as one round, every step in the sandbox where bubblewrap works here, else without one.

    One round, not one a sandbox: a round without the sandbox gives the same records as a sandboxed
    one (``test_round.py``), and its installs from the checkout, its venv copies and its writes
    are tested on their own (``test_install_reuse.py``, ``test_env_templates.py``,
    ``test_unsandboxed_isolation.py``); a second corpus round only added its processor time
    (about 27 s of the suite's 600, measured on 2026-12-06).
    """
    sandbox = "bwrap" if bwrap_probe().works else "none"
    root = tmp_path_factory.mktemp(f"corpus-{sandbox}")
    project = root / "project"
    rows = [corpus.build(shape, root) for shape in corpus.shapes()]
    rounds.write_case_file(project / "cases" / "cases.yaml", rows)
    corpus.write_reviews(project)
    done = run_pytest(
        project,
        "--bench-round=2",
        "--bench-allow-dirty",
        "--bench-interpreter=minor",
        f"--bench-work={root / 'work'}",
        f"--bench-sandbox={sandbox}",
        "-n",
        "2",
        "-rT",
    )
    return project, done


def records(project: Path) -> dict[str, dict[str, Any]]:
    return rounds.read_records(project / "results" / "round-2")


def test_every_shape_reaches_the_tier_its_design_implies(corpus_round: Any) -> None:
    project, done = corpus_round
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    got = {case: record["tier"] for case, record in records(project).items()}
    want = {f"{shape.owner}__{shape.name}": shape.tier for shape in corpus.shapes()}
    assert got == want, json.dumps({c: records(project)[c]["error"] for c in got if got[c] != want[c]}, indent=1)
    sandboxes = {str(record["provenance"]["sandbox"]).split(" ")[0] for record in records(project).values()}
    assert sandboxes == {"bwrap" if bwrap_probe().works else "none"}


def test_the_after_run_counts_follow_each_suite(corpus_round: Any) -> None:
    project, _ = corpus_round
    found = records(project)
    for shape in corpus.shapes():
        after = found[f"{shape.owner}__{shape.name}"]["measurements"]["tests_after"]
        assert (after["passed"], after["failed"], after["skipped"]) == shape.after_counts, shape.name
        assert after["status"] == "pass"


def test_install_commands_ran_in_the_checkout_and_the_pins_moved(corpus_round: Any) -> None:
    project, _ = corpus_round
    views = []
    for case, record in records(project).items():
        installs = [step for step in record["steps"] if step["name"] == "install"]
        view = record["provenance"].get("env_view")
        views.append(view)
        if view in ("copy", "overlay"):  # a template of the same environment key: installed once, before
            assert not installs and record["provenance"].get("env_template"), case
        else:
            assert installs and all(step["exit_code"] == 0 for step in installs), case
        m = record["measurements"]
        assert m["unmigrated"] == 0 and m["false_positive_edit"] == 0 and m["patch_compiles"] is True, case
        assert m["manifest_reported"] == 1, case
    assert any(view not in ("copy", "overlay") for view in views), "some case must have run its own installs"
