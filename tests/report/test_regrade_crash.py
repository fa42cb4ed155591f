"""``regrade --write`` as a publication: a new run of kind ``regrade``, published through the round's
journal, and killed at every one of its writes.

Round 2 is published from run A, which kept the graded facts of one case; graded again under the
same key its published numbers move. ``regrade --write`` runs in a subprocess that SIGKILLs itself
at its k-th write for every k until it finishes; after each kill ``summarize --check`` passes only
on a whole round, and after one recovering ``summarize`` the round is wholly A's or wholly the
regraded run's, with no half-written run folder left.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_obelize_bench._util.safe_io import KILL_AT_WRITE_ENV
from pytest_obelize_bench.casefile.cases import load_case_file
from pytest_obelize_bench.records.runs import (
    folder_digests,
    read_manifest,
    run_folder,
    runs_root,
    tampered,
    write_manifest,
)
from pytest_obelize_bench.report.round.publish_round import publish_round
from pytest_obelize_bench.session.resume import latest_run
from tests.helpers import casefile
from tests.helpers.bench_cli import obelize_bench
from tests.helpers.crash import RUN_A as SOURCE
from tests.helpers.crash import SKIP, console, published_run, round_state, same_round, write_run

REGRADE = ["regrade", "--round", "2", "--write"]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("regrade") / "project"
    casefile.write(project / "cases" / "cases.yaml", casefile.standard())
    write_run(project, SOURCE, facts_for="alpha__navamai", error_for=None)
    folder = run_folder(project / "results", 2, SOURCE)  # ended as a session ends it: digests written
    write_manifest(folder, read_manifest(folder).model_copy(update={"digests": folder_digests(folder)}))
    outcome = publish_round(project / "results", load_case_file(project / "cases" / "cases.yaml"), 2, SOURCE)
    assert outcome.published, outcome.lines
    assert obelize_bench("summarize", "--check", cwd=project)[0] == 0
    return project


def _record(project: Path, case: str) -> dict[str, object]:
    data = json.loads((project / "results" / "round-2" / f"{case}.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_regrade_write_publishes_a_regraded_run_and_keeps_the_run_it_came_from(template: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(template, project)
    source = run_folder(project / "results", 2, SOURCE)
    before = {p.name: p.read_bytes() for p in source.rglob("*") if p.is_file()}
    code, out = obelize_bench(*REGRADE, cwd=project)
    assert code == 0, out
    assert "round 2: 1 of 4 records change; 3 could not be re-graded" in out
    assert "measurements.missed_call_site: now 1, published 0" in out
    run = published_run(project)
    assert run is not None and run != SOURCE and f"run {run} published as round 2: 4 records" in out
    manifest = read_manifest(run_folder(project / "results", 2, run))
    assert (manifest.kind, manifest.regraded_from) == ("regrade", SOURCE) and manifest.regraded_at
    assert tampered(run_folder(project / "results", 2, run), manifest) == []
    assert {p.name: p.read_bytes() for p in source.rglob("*") if p.is_file()} == before
    measurements = _record(project, "alpha__navamai")["measurements"]
    assert isinstance(measurements, dict) and measurements["missed_call_site"] == 1
    assert obelize_bench("summarize", "--check", cwd=project) == (
        0,
        "results/BENCHMARK_RESULTS.md is up to date (round 2)\n",
    )
    code, out = obelize_bench("runs", cwd=project)
    assert f"round 2  {run}" in out and f"  regraded from run {SOURCE} at " in out, out
    # graded again with nothing moved, nothing is written; a resume never continues a regraded run
    code, out = obelize_bench(*REGRADE, cwd=project)
    assert code == 0 and "round 2: 0 of 4 records change" in out and published_run(project) == run, out
    assert latest_run(runs_root(project / "results", 2)) == SOURCE


def test_regrade_write_refuses_a_source_run_changed_since_its_session(template: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(template, project)
    before = round_state(project)
    stray = run_folder(project / "results", 2, SOURCE) / "stray.json"
    stray.write_text("{}\n", encoding="utf-8")
    code, out = obelize_bench(*REGRADE, cwd=project)
    assert code == 1
    assert out.splitlines()[-1] == (
        f"round 2: not rewritten: run {SOURCE} changed since its session ended: stray.json"
    ), out
    assert round_state(project) == before and published_run(project) == SOURCE
    assert sorted(p.name for p in runs_root(project / "results", 2).iterdir()) == [SOURCE]


@pytest.mark.slow
def test_every_crash_point_of_regrade_write_leaves_the_old_round_or_the_new_one(template: Path, tmp_path: Path) -> None:
    old = round_state(template)
    finished = tmp_path / "finished"
    shutil.copytree(template, finished)
    done = console(finished, REGRADE)
    assert done.wait(timeout=120) == 0, done.stdout.read() if done.stdout else ""
    new = round_state(finished)
    assert published_run(finished) != SOURCE and new != old
    outcomes = []
    for k in range(1, 80):
        project = tmp_path / f"k{k}"
        shutil.copytree(template, project)
        process = console(project, REGRADE, {KILL_AT_WRITE_ENV: str(k)})
        code = process.wait(timeout=120)
        if code == 0:  # fewer than k writes: it ran to its end
            break
        assert code == -9, process.stdout.read() if process.stdout else ""
        status, text = obelize_bench("summarize", "--check", cwd=project)
        if status == 0:
            assert round_state(project) == old or same_round(round_state(project), new, ("published_at", "run"))
        recovery, text = obelize_bench("summarize", cwd=project)
        assert recovery == 0, f"k={k}: {text}"
        state = round_state(project)
        whole = "old" if state == old else "new" if same_round(state, new, ("published_at", "run")) else None
        assert whole is not None, f"k={k}: neither the old round nor the regraded one after recovery:\n{text}"
        assert obelize_bench("summarize", "--check", cwd=project)[0] == 0, f"k={k}"
        runs = sorted(p.name for p in runs_root(project / "results", 2).iterdir())
        assert not [name for name in runs if name.startswith(".")], f"k={k}: a half-written run is left: {runs}"
        assert not [p for p in (project / "results").rglob(".*") if p.name not in SKIP], f"k={k}: a temporary file"
        if whole == "new":
            run = published_run(project)
            assert run is not None and read_manifest(run_folder(project / "results", 2, run)).kind == "regrade"
        outcomes.append(whole)
        shutil.rmtree(project)
    assert len(outcomes) >= 10, outcomes  # the run's files, its rename, the round's journal and files...
    assert "old" in outcomes and "new" in outcomes, outcomes
