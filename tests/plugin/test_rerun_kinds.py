"""--bench-rerun=errors leaves a tool error as measured; --bench-rerun=all-errors reruns it, visibly.

Through the real plugin: a case whose committed .obelize.yml obelize 0.8.0 refuses, so `fix`
fails (obelize_failed, a tool error) on every attempt. git, uv, PyPI installs and obelize are real.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import rounds
from tests.helpers.bench_cli import obelize_bench

pytestmark = pytest.mark.usefixtures("index_uv_cache")

CASE = "tool__obelize-fails"


def test_a_tool_error_is_rerun_only_when_asked_and_the_replaced_attempt_is_listed(tmp_path: Path) -> None:
    project = tmp_path / "project"
    rounds.write_case_file(
        project / "cases" / "cases.yaml", [rounds.case_row_from_fixture("obelize-fails", "tool", tmp_path)]
    )
    common = [
        "--bench-round=2",
        "--bench-allow-dirty",
        "--bench-interpreter=minor",
        f"--bench-work={tmp_path / 'work'}",
    ]
    first = rounds.run_pytest(project, *common, "--bench-no-preflight")
    run = rounds.only_run(project / "results" / "round-2")
    record = json.loads((run / f"{CASE}.json").read_text(encoding="utf-8"))
    assert record["error"]["reason"] == "obelize_failed", first.stdout[-2000:]

    infra_only = rounds.run_pytest(project, *common, "--bench-rerun=errors", f"--bench-run={run.name}")
    assert "1 deselected" in infra_only.stdout, infra_only.stdout[-2000:]
    assert not (run / "attempts").exists()
    manifest = json.loads((run / "run.json").read_text(encoding="utf-8"))
    assert manifest["reruns"][-1] | {"at": None} == {"at": None, "cases": [], "kind": "errors", "replaced": []}

    rounds.run_pytest(project, *common, "--bench-rerun=all-errors", f"--bench-run={run.name}")
    assert (run / "attempts" / f"{CASE}.1.json").is_file()
    manifest = json.loads((run / "run.json").read_text(encoding="utf-8"))
    last = manifest["reruns"][-1]
    assert last["kind"] == "all-errors" and last["cases"] == [CASE]
    assert last["replaced"] == [
        {
            "case": CASE,
            "kept_as": f"attempts/{CASE}.1.json",
            "tier": "error",
            "reason": "obelize_failed",
            "error_class": "tool",
        }
    ]


def test_a_rerun_of_a_repeated_run_reruns_each_errored_attempt_as_itself(tmp_path: Path) -> None:
    """Attempt 2 errored for the machine, attempt 1 did not: the rerun runs attempt 2, only."""
    project = tmp_path / "project"
    case = "ann__clean"
    rounds.write_case_file(project / "cases" / "cases.yaml", [rounds.case_row_from_fixture("clean", "ann", tmp_path)])
    common = ["--bench-round=2", "--bench-allow-dirty", "--bench-interpreter=minor", f"--bench-work={tmp_path / 'w'}"]
    first = rounds.run_pytest(project, *common, "--bench-repeat=2")
    assert first.returncode == 0, first.stdout[-2000:]
    run = rounds.only_run(project / "results" / "round-2")
    second = run / f"{case}.attempt-2.json"
    data = json.loads(second.read_text(encoding="utf-8"))
    measured = data["tier"]
    data["tier"], data["error"] = "error", {"step": "install", "reason": "install_failed", "detail": "no network"}
    second.write_text(json.dumps(data), encoding="utf-8")
    refused = rounds.run_pytest(project, *common, "--bench-rerun=errors", f"--bench-run={run.name}")
    assert refused.returncode == 4 and "--bench-repeat=2" in refused.stderr, refused.stdout[-2000:]
    again = rounds.run_pytest(project, *common, "--bench-rerun=errors", f"--bench-run={run.name}", "--bench-repeat=2")
    assert again.returncode == 0, again.stdout[-3000:]
    assert "1 deselected" in again.stdout  # attempt 1 stands as measured
    assert json.loads(second.read_text(encoding="utf-8"))["tier"] == measured
    assert (run / "attempts" / f"{case}.attempt-2.1.json").is_file() and not (
        run / "attempts" / f"{case}.1.json"
    ).exists()
    last = json.loads((run / "run.json").read_text(encoding="utf-8"))["reruns"][-1]
    assert last["cases"] == [f"{case}.attempt-2"]
    assert last["replaced"][0]["case"] == case and last["replaced"][0]["kept_as"] == f"attempts/{case}.attempt-2.1.json"
    _, listing = obelize_bench(
        "runs", "--round", "2", "--results", project / "results", "--cases", project / "cases" / "cases.yaml"
    )
    assert f"  repeats: [{measured} 1]" in listing.splitlines()
