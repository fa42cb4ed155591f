"""A run with an errored case, through the real plugin: JUnit, --lf, show, then --bench-rerun=errors.

The errored case's origin is missing during the first run (the fetch fails, as when GitHub is
unreachable) and is put back before the rerun; git commits are deterministic, so its SHA is the
same. Everything else is real: git, uv, PyPI installs, obelize.
"""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import rounds
from tests.helpers.bench_cli import obelize_bench

pytestmark = pytest.mark.usefixtures("index_uv_cache")

OK, LATE = "ok__refused", "late__refused"


def run_pytest(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The plugin in a subprocess, with pytest's cache on (``--lf`` needs it)."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:randomly", *args],
        cwd=project,
        env=rounds.inner_environment(),
        capture_output=True,
        text=True,
        timeout=1200,
        stdin=subprocess.DEVNULL,
        check=False,
    )


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("rerun")
    project = root / "project"
    cases = [
        rounds.case_row_from_fixture("refused", "ok", root),
        rounds.case_row_from_fixture("refused", "late", root / "late"),
    ]
    rounds.write_case_file(project / "cases" / "cases.yaml", cases)
    origin = root / "late" / "origins" / "refused"
    hidden = root / "late" / "hidden"
    origin.rename(hidden)  # the repository is out of reach for the first run
    common = ["--bench-round=2", "--bench-allow-dirty", "--bench-interpreter=minor", f"--bench-work={root / 'work'}"]
    done = run_pytest(project, *common, "--bench-no-preflight", f"--junitxml={root / 'junit.xml'}", "-rT")
    run = rounds.only_run(project / "results" / "round-2")
    # What the read-only tests look at is taken now, before the rerun test changes the run, so the
    # module's tests pass in any order.
    lf = run_pytest(project, *common, "--lf", "--collect-only", "-q")
    show_code, show = obelize_bench(
        "show",
        LATE,
        "--run",
        run.name,
        "--cases",
        project / "cases" / "cases.yaml",
        "--results",
        project / "results",
        "--work",
        root / "work",
    )
    return {
        "root": root,
        "project": project,
        "done": done,
        "run": run,
        "common": common,
        "origin": origin,
        "hidden": hidden,
        "records": rounds.read_records(run),
        "published": (project / "results" / "round-2" / "publication.json").exists(),
        "document": (project / "results" / "BENCHMARK_RESULTS.md").exists(),
        "ok_tree": (root / "work" / "round-2" / OK).exists(),
        "lf": lf,
        "show": (show_code, show),
    }


def test_the_first_run_is_kept_not_published(first_run: dict[str, Any]) -> None:
    done, run = first_run["done"], first_run["run"]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    records = first_run["records"]
    assert records[OK]["tier"] == "unsupported"
    assert records[LATE]["tier"] == "error" and records[LATE]["error"]["reason"] == "fetch_failed"
    assert not first_run["published"]
    assert not first_run["document"]
    assert f"run {run.name} is not published: 1 case(s) errored for infrastructure reasons ({LATE})" in done.stdout
    logs = first_run["root"] / "work" / "round-2" / f"{LATE}.logs"
    assert f"{LATE}: fetch: fetch_failed; logs: {logs}" in done.stdout
    # --bench-keep=failed: the errored case keeps its work folder, the finished one loses its checkout
    assert not first_run["ok_tree"]


def test_junit_has_an_error_element_for_the_error_tier(first_run: dict[str, Any]) -> None:
    tree = ET.parse(first_run["root"] / "junit.xml")
    cases = {case.get("name"): case for case in tree.iter("testcase")}
    late, ok = cases[LATE], cases[OK]
    assert late.get("classname") == ok.get("classname") == "cases"
    error = late.find("error")
    assert error is not None and error.get("message") == "fetch: fetch_failed" and error.get("type") == "fetch_failed"
    assert "step: fetch" in (error.text or "") and "reason: fetch_failed" in (error.text or "")
    assert ok.find("error") is None and ok.find("failure") is None
    tiers = {
        case.get("name"): [p.get("value") for p in case.iter("property") if p.get("name") == "tier"]
        for case in cases.values()
    }
    assert tiers == {LATE: ["error"], OK: ["unsupported"]}
    suite = next(tree.iter("testsuite"))
    assert suite.get("errors") == "1"


def test_lf_selects_exactly_the_error_tier_cases(first_run: dict[str, Any]) -> None:
    done = first_run["lf"]
    assert done.returncode == 0, done.stdout[-2000:]
    listed = [line for line in done.stdout.splitlines() if "::" in line]
    assert listed == [f"cases/cases.yaml::{LATE}"]


def test_show_explains_an_error_case(first_run: dict[str, Any]) -> None:
    code, text = first_run["show"]
    assert code == 0, text
    assert "tier: error: fetch: fetch_failed" in text
    assert "error: infrastructure: fetch: fetch_failed:" in text
    assert f"{LATE}.logs/01-fetch.log" in text and "(gone)" not in text
    assert "unmigrated rows: -- (no graded facts, and no error analysis lists the case)" in text


def test_rerun_errors_runs_only_the_errored_case_and_publishes_the_completed_run(first_run: dict[str, Any]) -> None:
    project, run = first_run["project"], first_run["run"]
    first_run["hidden"].rename(first_run["origin"])
    ok_before = (run / f"{OK}.json").read_bytes()
    done = run_pytest(project, *first_run["common"], "--bench-rerun=errors", f"--bench-run={run.name}", "-v")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert f"::{LATE} UNSUPPORTED" in done.stdout and f"::{OK} " not in done.stdout
    assert "1 deselected" in done.stdout
    assert rounds.run_folders(project / "results" / "round-2") == [run]
    assert (run / f"{OK}.json").read_bytes() == ok_before
    assert json.loads((run / f"{LATE}.json").read_text(encoding="utf-8"))["tier"] == "unsupported"
    earlier = json.loads((run / "attempts" / f"{LATE}.1.json").read_text(encoding="utf-8"))
    assert earlier["tier"] == "error" and earlier["error"]["reason"] == "fetch_failed"
    manifest = json.loads((run / "run.json").read_text(encoding="utf-8"))
    assert [r["cases"] for r in manifest["reruns"]] == [[LATE]]
    replaced = {"case": LATE, "kept_as": f"attempts/{LATE}.1.json", "tier": "error", "reason": "fetch_failed"}
    assert manifest["reruns"][0]["replaced"] == [{**replaced, "error_class": "infrastructure"}]
    note = json.loads((project / "results" / "round-2" / "publication.json").read_text(encoding="utf-8"))
    assert note["run"] == run.name and note["infrastructure_errors"] == 0
    assert note["reruns"] == manifest["reruns"]
    document = (project / "results" / "BENCHMARK_RESULTS.md").read_text(encoding="utf-8")
    assert f"{LATE}: replaced error (infrastructure: fetch_failed), kept as `attempts/{LATE}.1.json`" in document
    assert f"run {run.name} published as round 2: 2 records" in done.stdout
