"""Publication as a transaction, with real processes and real kills.

A round 2 is published from run A. Run B is then published by ``obelize-bench publish`` in a
subprocess that SIGKILLs itself at its k-th write (``OBELIZE_BENCH_KILL_AT_WRITE=k``), for every k
until a publication finishes. After each kill, ``summarize --check`` passes only on a whole round,
and after one recovering command (``summarize``) the round is wholly A's or wholly B's. Then two
publishers started together, and a publisher that waits for a held lock and names its holder.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pytest_obelize_bench._util.locks import holder_lock
from pytest_obelize_bench._util.safe_io import KILL_AT_WRITE_ENV
from pytest_obelize_bench.casefile.cases import load_case_file
from pytest_obelize_bench.report.round.publish_round import publish_round
from tests.helpers import casefile
from tests.helpers.bench_cli import obelize_bench
from tests.helpers.crash import (
    RUN_A,
    RUN_B,
    RUN_C,
    SKIP,
    published_run,
    publisher,
    round_state,
    same_round,
    write_run,
)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Round 2 published from run A (graded facts for alpha); run B (facts for beta, zeta errored) ready."""
    project = tmp_path_factory.mktemp("crash") / "project"
    casefile.write(project / "cases" / "cases.yaml", casefile.standard())
    write_run(project, RUN_A, facts_for="alpha__navamai", error_for=None)
    outcome = publish_round(project / "results", load_case_file(project / "cases" / "cases.yaml"), 2, RUN_A)
    assert outcome.published, outcome.lines
    write_run(project, RUN_B, facts_for="beta__tested", error_for="zeta__app")
    write_run(project, RUN_C, facts_for=None, error_for=None)
    assert obelize_bench("summarize", "--check", cwd=project)[0] == 0
    return project


@pytest.mark.slow
def test_every_crash_point_of_publish_leaves_the_old_round_or_the_new_one(template: Path, tmp_path: Path) -> None:
    old = round_state(template)
    finished = tmp_path / "finished"
    shutil.copytree(template, finished)
    done = publisher(finished, RUN_B)
    assert done.wait(timeout=120) == 0, done.stdout.read() if done.stdout else ""
    new = round_state(finished)
    assert published_run(finished) == RUN_B and new != old
    outcomes = []
    for k in range(1, 60):
        project = tmp_path / f"k{k}"
        shutil.copytree(template, project)
        process = publisher(project, RUN_B, {KILL_AT_WRITE_ENV: str(k)})
        code = process.wait(timeout=120)
        if code == 0:  # fewer than k writes: the publication ran to its end
            break
        assert code == -9, process.stdout.read() if process.stdout else ""
        status, text = obelize_bench("summarize", "--check", cwd=project)
        if status == 0:  # a check that passes sees a whole round
            assert round_state(project) in (old, new), f"k={k}: check passed on a mixed round"
        recovery, text = obelize_bench("summarize", cwd=project)
        assert recovery == 0, f"k={k}: {text}"
        state = round_state(project)
        whole = "old" if state == old else "new" if same_round(state, new) else None
        assert whole is not None, f"k={k}: neither the old round nor the new one after recovery:\n{text}"
        assert obelize_bench("summarize", "--check", cwd=project)[0] == 0, f"k={k}"
        assert not [p for p in (project / "results").rglob(".*") if p.name not in SKIP], f"k={k}: a temporary file"
        if whole == "new":
            assert "recovered: round 2: finished publishing run" in text, text
        outcomes.append(whole)
        shutil.rmtree(project)
    assert len(outcomes) >= 8, outcomes  # records, graded facts, removals, the note, the document...
    assert "old" in outcomes and "new" in outcomes, outcomes


def test_two_publishers_started_together_never_interleave(template: Path, tmp_path: Path) -> None:
    project = tmp_path / "two"
    shutil.copytree(template, project)
    first, second = publisher(project, RUN_B), publisher(project, RUN_C)
    outputs = [process.communicate(timeout=120)[0] for process in (first, second)]
    assert first.returncode == 0 and second.returncode == 0, outputs
    assert obelize_bench("summarize", "--check", cwd=project)[0] == 0
    assert published_run(project) in (RUN_B, RUN_C)


def test_a_publisher_waits_a_bounded_time_then_names_the_holder(template: Path, tmp_path: Path) -> None:
    project = tmp_path / "held"
    shutil.copytree(template, project)
    before = round_state(project)
    with holder_lock(project / "results" / "round-2" / ".publish.lock", "round 2"):
        waiting = publisher(project, RUN_B, None, "--wait", "1")
        output = waiting.communicate(timeout=60)[0]
    assert waiting.returncode == 1
    assert f"round 2 is locked by pid {os.getpid()} on " in output and "gave up after 1s" in output
    assert round_state(project) == before
