"""``obelize-bench gate`` on run folders written to disk as a session lays them out."""

from __future__ import annotations

import hashlib
import io
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pytest_obelize_bench.cli import main as cli_main
from pytest_obelize_bench.promotion.gate import run_gate
from tests.helpers import runs

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
POLICY = b"""\
schema_version: 1
min_runs: 1
min_n: 10
max_evidence_age_days: 30
require_holdout: true
"""


def write_round_run(
    results: Path, run_id: str, verified: set[int], *, n: int = 20, drop: str | None = None, **manifest: Any
) -> Path:
    ids = runs.case_ids(n)
    records = [
        runs.record(
            case,
            "verified_success" if i in verified else "partial",
            split=runs.split_of(i),
            unmigrated=0 if i in verified else 1,
        )
        for i, case in enumerate(ids)
        if case != drop
    ]
    folder = results / "round-2" / "runs" / run_id
    return runs.write_run(folder, records, runs.manifest_data(ids, run_id, **manifest))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "promotion.yaml").write_bytes(POLICY)
    return tmp_path


def gate(project: Path, incumbent: str, *candidates: str) -> tuple[int, str]:
    out = io.StringIO()
    status = run_gate(
        project / "cases" / "promotion.yaml",
        incumbent,
        list(candidates),
        results_dir=project / "results",
        cases_path=project / "cases" / "cases.yaml",
        out=out,
        now=NOW,
    )
    return status, out.getvalue()


def decisions(project: Path) -> dict[str, dict[str, Any]]:
    folder = project / "results" / "decisions"
    return {p.name: json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))}


def test_promote_writes_a_decision_with_the_policy_sha_and_exits_0(project: Path) -> None:
    write_round_run(project / "results", "old", {0, 1}, version="0.7.0")
    write_round_run(project / "results", "new", set(range(18)))
    status, output = gate(project, "round-2:old", "round-2:new")
    assert status == 0, output
    assert "new" in output and "promote" in output
    written = decisions(project)
    assert list(written) == ["2026-12-02-new.json"]
    document = written["2026-12-02-new.json"]
    assert document["schema_version"] == 1 and document["decision"] == "promote"
    assert document["policy_sha256"] == hashlib.sha256(POLICY).hexdigest()
    assert document["incumbent"]["tool_version"] == "0.7.0"
    assert document["candidate"]["run_id"] == "new"
    assert document["failed_rules"] == []
    assert all(r["figure"] and r["threshold"] is not None for r in document["reasons"])


def test_reject_exits_1_and_names_the_rule(project: Path) -> None:
    write_round_run(project / "results", "old", {0, 1})
    write_round_run(project / "results", "new", set(range(19)) - {1})
    status, output = gate(project, "round-2:old", "round-2:new")
    assert status == 1
    assert "max_case_regressions.verified" in output and "owner01__repo" in output
    assert decisions(project)["2026-12-02-new.json"]["decision"] == "reject"


def test_a_partial_run_exits_3(project: Path) -> None:
    write_round_run(project / "results", "old", {0, 1})
    write_round_run(project / "results", "new", set(range(18)), drop="owner07__repo")
    status, output = gate(project, "round-2:old", "round-2:new")
    assert status == 3
    assert "19 of 20 expected cases have a record; missing owner07__repo" in output


def test_an_interrupted_run_exits_3(project: Path) -> None:
    write_round_run(project / "results", "old", {0, 1})
    write_round_run(project / "results", "new", set(range(18)), interrupted=True)
    status, output = gate(project, "round-2:old", "round-2:new")
    assert status == 3 and "interrupted is True" in output


def test_a_policy_changed_after_the_runs_is_refused_and_nothing_is_written(project: Path) -> None:
    write_round_run(project / "results", "old", {0, 1})
    write_round_run(project / "results", "new", set(range(8)))
    status, _ = gate(project, "round-2:old", "round-2:new")
    assert status == 3
    before = decisions(project)
    (project / "cases" / "promotion.yaml").write_bytes(POLICY.replace(b"min_n: 10", b"min_n: 1") + b"alpha: 0.5\n")
    status, output = gate(project, "round-2:old", "round-2:new")
    assert status == 2
    assert "refused" in output and "policy changed after these runs were judged" in output
    assert decisions(project) == before
    # the same bytes may judge the same runs again, and give the same decision
    (project / "cases" / "promotion.yaml").write_bytes(POLICY)
    assert gate(project, "round-2:old", "round-2:new")[0] == 3


def test_a_symlinked_record_refuses_the_run(project: Path) -> None:
    write_round_run(project / "results", "old", {0, 1})
    folder = write_round_run(project / "results", "new", set(range(18)))
    target = folder / "owner03__repo.json"
    planted = project / "planted.json"
    target.rename(planted)
    os.symlink(planted, target)
    status, output = gate(project, "round-2:old", "round-2:new")
    assert status == 2
    assert output.count("\n") == 1 and "a symlinked record is refused" in output
    assert not (project / "results" / "decisions").exists()


def test_several_candidates_get_one_document_each_and_the_pareto_front(project: Path) -> None:
    write_round_run(project / "results", "old", {0, 1})
    write_round_run(project / "results", "best", set(range(18)))
    write_round_run(project / "results", "meh", {0, 1, 2})
    status, output = gate(project, "round-2:old", "round-2:best", "round-2:meh")
    assert status == 0
    written = decisions(project)
    assert set(written) == {"2026-12-02-best.json", "2026-12-02-meh.json"}
    assert written["2026-12-02-meh.json"]["decision"] == "insufficient_evidence"
    assert written["2026-12-02-best.json"]["pareto_front"] == ["best"]
    assert written["2026-12-02-meh.json"]["variants_considered"] == ["old", "best", "meh"]
    assert "pareto front (rate, rows up; runtime down): best" in output


def test_unreadable_policy_and_missing_run_are_one_line(project: Path) -> None:
    write_round_run(project / "results", "old", {0, 1})
    status, output = gate(project, "round-2:old", "round-2:absent")
    assert status == 2 and "run folder does not exist" in output and output.count("\n") == 1
    (project / "cases" / "promotion.yaml").write_text("min_runs: zero\n", encoding="utf-8")
    status, output = gate(project, "round-2:old", "round-2:old")
    assert status == 2 and "field min_runs" in output


def test_the_console_script_takes_run_folders(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    old = write_round_run(project / "results", "old", {0, 1}, ended_at=now)
    new = write_round_run(project / "results", "new", set(range(18)), ended_at=now)
    monkeypatch.chdir(project)
    out = io.StringIO()
    status = cli_main(["gate", "--incumbent", str(old), "--candidate", str(new)], out=out)
    assert status == 0, out.getvalue()
    assert len(list((project / "results" / "decisions").glob("*-new.json"))) == 1


def test_two_candidates_with_one_run_id_do_not_overwrite_each_other(project: Path) -> None:
    results = project / "results"
    write_round_run(results, "old", {0, 1})
    import shutil

    first = write_round_run(results, "new", set(range(18)))
    shutil.copytree(first, results / "round-3" / "runs" / "new")
    status, output = gate(project, "round-2:old", "round-2:new", "round-3:new")
    assert status == 0, output
    written = decisions(project)
    assert set(written) == {"2026-12-02-new.json", "2026-12-02-new-2.json"}
    assert written["2026-12-02-new-2.json"]["variants_considered"] == ["old", "new", "round-3:new"]
