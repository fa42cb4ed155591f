"""Results belong to a case file, and every command reads a run with its own: through the console script.

Runs are built on disk as a session writes them (``run.json`` naming the case file, one record
per case); the commands are the real ``obelize-bench`` entry point.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from pytest_obelize_bench.casefile.cases import load_case_file
from pytest_obelize_bench.report.round.publish_round import publish_round
from tests.helpers import casefile
from tests.helpers.bench_cli import obelize_bench
from tests.helpers.runs import write_ended_run


def tree(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with its sha256: 'byte for byte unchanged' made checkable."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The project's own case file with round 2 published in results/, and another case file beside it."""
    own = casefile.write(tmp_path / "cases" / "cases.yaml", casefile.standard())
    other = casefile.case_file([casefile.case_row("omega", "solo")])
    casefile.write(tmp_path / "elsewhere" / "cases.yaml", other)
    write_ended_run(tmp_path / "results", own, "20261201T100000Z-aaaaaa")
    outcome = publish_round(
        tmp_path / "results", load_case_file(own), 2, "20261201T100000Z-aaaaaa", results_given=False
    )
    assert outcome.published, outcome.lines
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_publishing_another_case_files_round_into_the_projects_results_is_refused(project: Path) -> None:
    results = project / "results"
    run = write_ended_run(results, project / "elsewhere" / "cases.yaml", "20261202T100000Z-bbbbbb")
    before = tree(results)
    code, out = obelize_bench("publish", "--run", run.name)
    assert code == 1
    (line,) = out.splitlines()
    assert "belongs to case file cases/cases.yaml, not elsewhere/cases.yaml" in line
    assert "--bench-results" in line
    assert tree(results) == before
    code, out = obelize_bench("summarize", "--check")
    assert code == 0, out


def test_a_results_folder_given_explicitly_or_fresh_is_never_refused(project: Path) -> None:
    results = project / "results"
    run = write_ended_run(results, project / "elsewhere" / "cases.yaml", "20261202T100000Z-bbbbbb")
    code, out = obelize_bench("publish", "--run", f"round-2:{run.name}", "--results", "results")
    assert code == 0, out
    fresh = project / "fresh"
    run = write_ended_run(fresh, project / "elsewhere" / "cases.yaml", "20261203T100000Z-cccccc")
    code, out = obelize_bench("publish", "--run", str(run), "--results", str(fresh))
    assert code == 0, out


def test_show_regrade_compare_and_runs_read_a_run_with_its_own_case_file(project: Path) -> None:
    results = project / "theirs"
    first = write_ended_run(results, project / "elsewhere" / "cases.yaml", "20261202T100000Z-bbbbbb")
    second = write_ended_run(results, project / "elsewhere" / "cases.yaml", "20261203T100000Z-cccccc")
    code, out = obelize_bench("publish", "--run", first.name, "--results", str(results))
    assert code == 0, out
    logs = project / "work" / "round-2" / "omega__solo.logs"
    (logs / "artefacts").mkdir(parents=True)
    (logs / "artefacts" / "patch.diff").write_text("--- a/app.py\n+++ b/app.py\n", encoding="utf-8")
    code, out = obelize_bench("show", "omega__solo", "--run", second.name, "--results", str(results))
    assert code == 0, out
    assert out.startswith("omega__solo  (run 20261203T100000Z-cccccc of round 2)") and "tier: unsupported" in out
    assert "no patch.diff in the logs" not in out  # found under the run's own work root
    code, out = obelize_bench("regrade", "--round", "2", "--results", str(results))
    assert "none of its 1 records can be re-graded" in out, out  # found: only the facts are missing
    code, out = obelize_bench("compare", first.name, f"round-2:{second.name}", "--results", str(results))
    assert code == 0 and "has no records" not in out, out
    code, out = obelize_bench("runs", "--results", str(results))
    assert code == 0 and out.count("complete") == 2, out
    code, out = obelize_bench(
        "show", "omega__solo", "--run", second.name, "--results", str(results), "--cases", "cases/cases.yaml"
    )
    assert "note: --cases cases/cases.yaml is not the case file run 20261203T100000Z-cccccc ran from" in out


def test_runs_flags_a_run_folder_changed_after_its_session_ended(project: Path) -> None:
    folder = project / "results" / "round-2" / "runs" / "20261201T100000Z-aaaaaa"
    code, out = obelize_bench("runs")
    assert code == 0 and "CHANGED" not in out, out
    record = folder / "alpha__navamai.json"
    record.write_text(record.read_text(encoding="utf-8").replace('"detected": 1', '"detected": 2'), encoding="utf-8")
    (folder / "stray.json").write_text("{}", encoding="utf-8")
    code, out = obelize_bench("runs")
    assert "  CHANGED since its session wrote it: alpha__navamai.json, stray.json" in out
