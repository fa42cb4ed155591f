"""Publication as a transaction, with real processes and real kills.

A round 2 is published from run A. Run B is then published by ``obelize-bench publish`` in a
subprocess that SIGKILLs itself at its k-th write (``OBELIZE_BENCH_KILL_AT_WRITE=k``), for every k
until a publication finishes. After each kill, ``summarize --check`` passes only on a whole round,
and after one recovering command (``summarize``) the round is wholly A's or wholly B's. Then two
publishers started together, and a publisher that waits for a held lock and names its holder.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_obelize_bench._util.locks import holder_lock
from pytest_obelize_bench._util.safe_io import KILL_AT_WRITE_ENV
from pytest_obelize_bench.casefile.cases import load_case_file
from pytest_obelize_bench.cli import main as cli_main
from pytest_obelize_bench.grading.graded_facts import Artefacts, artefacts_to_json
from pytest_obelize_bench.records.runs import RunManifest, add_record, case_file_ref, write_manifest
from pytest_obelize_bench.summary.round_publication import publish_round
from tests.helpers import casefile
from tests.helpers.runs import errored, unsupported

RUN_A, RUN_B, RUN_C = "20261201T100000Z-aaaaaa", "20261202T100000Z-bbbbbb", "20261203T100000Z-cccccc"
FACTS = artefacts_to_json(
    Artefacts(
        findings=(),
        edits=(),
        written=(),
        withheld=(),
        exit_code=0,
        model_used=False,
        llm_tokens_in=None,
        llm_tokens_out=None,
        llm_cost_usd=None,
    )
)
SKIP = {".publish.lock", ".document.lock", "summary.json"}


def write_run(project: Path, run_id: str, *, facts_for: str | None, error_for: str | None) -> None:
    cases = project / "cases" / "cases.yaml"
    case_file = load_case_file(cases)
    folder = project / "results" / "round-2" / "runs" / run_id
    for case in case_file.cases:
        record = (
            errored(case.id, "fix", "obelize_failed")
            if case.id == error_for
            else unsupported(case.id, control=case.control)
        )
        add_record(folder, case.id, record.to_json(), FACTS if case.id == facts_for else None)
    ids = sorted(c.id for c in case_file.cases)
    write_manifest(
        folder,
        RunManifest(
            run=run_id,
            round=2,
            cases_expected=ids,
            cases_recorded=ids,
            case_file=case_file_ref(cases, project / "results"),
            ended_at="2026-12-01T10:05:00Z",
        ),
    )


def round_state(project: Path) -> dict[str, bytes]:
    """The published round and the document, byte for byte (run folders, locks and the derived summary.json aside)."""
    results = project / "results"
    state = {
        p.relative_to(results).as_posix(): p.read_bytes()
        for p in sorted(results.rglob("*"))
        if p.is_file() and "runs" not in p.relative_to(results).parts and p.name not in SKIP
    }
    return state


def published_run(project: Path) -> str | None:
    note = project / "results" / "round-2" / "publication.json"
    return json.loads(note.read_text(encoding="utf-8"))["run"] if note.is_file() else None


def obelize_bench(project: Path, *args: str) -> tuple[int, str]:
    cwd = Path.cwd()
    os.chdir(project)
    try:
        out = io.StringIO()
        return cli_main(list(args), out=out), out.getvalue()
    finally:
        os.chdir(cwd)


def publisher(project: Path, run_id: str, env: dict[str, str] | None = None, *extra: str) -> subprocess.Popen[str]:
    environ = {**os.environ, **(env or {})}
    return subprocess.Popen(
        [sys.executable, "-m", "pytest_obelize_bench.cli", "publish", "--run", run_id, *extra],
        cwd=project,
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
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
    assert obelize_bench(project, "summarize", "--check")[0] == 0
    return project


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
        status, text = obelize_bench(project, "summarize", "--check")
        if status == 0:  # a check that passes sees a whole round
            assert round_state(project) in (old, new), f"k={k}: check passed on a mixed round"
        recovery, text = obelize_bench(project, "summarize")
        assert recovery == 0, f"k={k}: {text}"
        state = round_state(project)
        whole = "old" if state == old else "new" if _same_round(state, new) else None
        assert whole is not None, f"k={k}: neither the old round nor the new one after recovery:\n{text}"
        assert obelize_bench(project, "summarize", "--check")[0] == 0, f"k={k}"
        assert not [p for p in (project / "results").rglob(".*") if p.name not in SKIP], f"k={k}: a temporary file"
        if whole == "new":
            assert "recovered: round 2: finished publishing run" in text, text
        outcomes.append(whole)
        shutil.rmtree(project)
    assert len(outcomes) >= 8, outcomes  # records, graded facts, removals, the note, the document...
    assert "old" in outcomes and "new" in outcomes, outcomes


def _same_round(state: dict[str, bytes], new: dict[str, bytes]) -> bool:
    """The new round, publication.json's timestamp aside (a recovery writes the journal's own note)."""
    if set(state) != set(new):
        return False
    for name, data in new.items():
        if name.endswith("publication.json") and name.startswith("round-2/"):
            first, second = json.loads(state[name]), json.loads(data)
            first.pop("published_at"), second.pop("published_at")
            if first != second:
                return False
        elif name != "BENCHMARK_RESULTS.md" and state[name] != data:
            return False
    return True


def test_two_publishers_started_together_never_interleave(template: Path, tmp_path: Path) -> None:
    project = tmp_path / "two"
    shutil.copytree(template, project)
    first, second = publisher(project, RUN_B), publisher(project, RUN_C)
    outputs = [process.communicate(timeout=120)[0] for process in (first, second)]
    assert first.returncode == 0 and second.returncode == 0, outputs
    assert obelize_bench(project, "summarize", "--check")[0] == 0
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
