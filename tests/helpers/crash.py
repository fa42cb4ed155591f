"""Crash tests' common ground: a project whose round 2 is published, state snapshots, a killable
publisher in a subprocess and the console script in this process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pytest_obelize_bench.casefile.cases import load_case_file
from pytest_obelize_bench.grading.graded_facts import Artefacts, artefacts_to_json
from pytest_obelize_bench.records.runs import RunManifest, add_record, case_file_ref, write_manifest
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
            case_file=case_file_ref(case_file, project / "results"),
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


def console(project: Path, args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """The console script in a subprocess of its own (one that may kill itself)."""
    environ = {**os.environ, **(env or {})}
    return subprocess.Popen(
        [sys.executable, "-m", "pytest_obelize_bench.cli", *args],
        cwd=project,
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def publisher(project: Path, run_id: str, env: dict[str, str] | None = None, *extra: str) -> subprocess.Popen[str]:
    return console(project, ["publish", "--run", run_id, *extra], env)


def same_round(state: dict[str, bytes], new: dict[str, bytes], ignored: tuple[str, ...] = ("published_at",)) -> bool:
    """The new round, publication.json's ``ignored`` fields aside (a recovery writes the journal's
    own note; a regraded run has a new id each time)."""
    if set(state) != set(new):
        return False
    for name, data in new.items():
        if name.endswith("publication.json") and name.startswith("round-2/"):
            first, second = json.loads(state[name]), json.loads(data)
            for field in ignored:
                first.pop(field), second.pop(field)
            if first != second:
                return False
        elif name != "BENCHMARK_RESULTS.md" and state[name] != data:
            return False
    return True
