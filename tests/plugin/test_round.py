"""Whole rounds through the real plugin: real git, uv, PyPI installs of both SDKs, real obelize.

The repositories are local git origins (GitHub is out of reach); everything else is real.
One round over five cases is run once per module, serially and under ``-n 2``, and the
tests read what it left behind.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_obelize_bench.grading.record import comparable, parse_record
from pytest_obelize_bench.isolation.sandbox_probe import probe_best
from tests.helpers import rounds
from tests.helpers.bench_cli import obelize_bench
from tests.helpers.round_project import EXPECTED_TIERS, records_of
from tests.helpers.rounds import run_pytest

pytestmark = pytest.mark.usefixtures("index_uv_cache")


@pytest.fixture(scope="module")
def parallel_round(
    serial_round: tuple[Path, subprocess.CompletedProcess[str]], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    project, _ = serial_round
    root = tmp_path_factory.mktemp("parallel")
    (root / "probe").mkdir()
    (root / "probe" / "session_probe.py").write_text(SESSION_PROBE, encoding="utf-8")
    probe = {
        "PYTHONPATH": os.pathsep.join(filter(None, [str(root / "probe"), os.environ.get("PYTHONPATH")])),
        "SESSION_PROBE_FOLDER": str(root / "probe"),
    }
    done = run_pytest(
        project,
        "--bench-round=2",
        "--bench-allow-dirty",
        "--bench-interpreter=minor",
        f"--bench-work={root / 'work'}",
        f"--bench-results={root / 'results'}",
        "--bench-fail-on=wrong",
        "--bench-sandbox=none",  # the serial round is sandboxed where bwrap works: the records must agree
        "-n",
        "2",
        "-p",
        "session_probe",
        env=probe,
    )
    return root, done


#: A plugin the parallel round loads: what each of its processes held as the cases ran and ended.
SESSION_PROBE = """\
import gc, json, os, sys
from pathlib import Path

import pytest

WRITERS = ("pytest_obelize_bench.report.round.round_files", "pytest_obelize_bench.report.site.pages")
seen = {}

def pytest_runtest_logreport(report):
    if report.when == "call" and "writers_at_first_report" not in seen:
        seen["writers_at_first_report"] = all(name in sys.modules for name in WRITERS)

@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    seen["frozen"] = gc.get_freeze_count()
    name = getattr(config, "workerinput", {}).get("workerid", "controller")
    Path(os.environ["SESSION_PROBE_FOLDER"], name + ".json").write_text(json.dumps(seen))
"""


def test_each_case_is_graded_from_what_obelize_did(serial_round: Any) -> None:
    project, done = serial_round
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    records = records_of(project / "results" / "round-2")
    assert {case: record["tier"] for case, record in records.items()} == EXPECTED_TIERS
    clean = records["ann__clean"]["measurements"]
    assert clean["detected"] == 4 and clean["unmigrated"] == 0 and clean["patch_compiles"] is True
    assert clean["tests_baseline"] == {"status": "pass", "passed": 2, "failed": 0, "skipped": 0}
    partial = records["bob__withheld-part"]["measurements"]
    assert partial["unmigrated"] == 5 and partial["patch_applied"] is True
    refused = records["cat__refused"]["measurements"]
    assert refused["patch_applied"] is False and refused["patch_compiles"] is None
    broken = records["dan__breaks-suite"]["measurements"]
    assert (broken["tests_baseline"]["status"], broken["tests_after"]["status"]) == ("pass", "fail")
    control = records["eve__control-migrated"]
    assert control["control"] is True and control["split"] is None
    assert control["measurements"]["detected"] == 0 and control["measurements"]["false_positive_edit"] == 0


def test_the_steps_follow_the_protocol(serial_round: Any) -> None:
    project, _ = serial_round
    record = records_of(project / "results" / "round-2")["ann__clean"]
    names = [step["name"] for step in record["steps"]]
    numbers = [step["number"] for step in record["steps"]]
    assert numbers == sorted(numbers)
    order = [
        "fetch",
        "venv",
        "resolve",
        "install",
        "install-from",
        "install-from-check",
        "baseline",
        "fix",
        "compile",
        "install-to",
        "install-to-check",
        "freeze",
        "after",
    ]
    # and no ``bytecode`` after ``install-from-check``: this suite's rounds say --bench-template-bytecode=none
    assert [name for name in dict.fromkeys(names)] == order
    fix = next(step for step in record["steps"] if step["name"] == "fix")
    assert fix["argv"][1:] == [
        "-I",
        "-m",
        "obelize",
        "fix",
        "--repo",
        "<case>",
        "--pack",
        "gemini/google-generativeai-to-google-genai",
        "--apply",
        "--non-interactive",
        "--model",
        "none",
        "--json",
    ]
    assert "--verify" not in fix["argv"]


def test_provenance_names_what_ran(serial_round: Any) -> None:
    project, _ = serial_round
    provenance = records_of(project / "results" / "round-2")["ann__clean"]["provenance"]
    assert provenance["sdk_from"] == "0.8.6" and provenance["sdk_to"] == "2.24.0"
    assert provenance["python"] == rounds.UPSTREAM_KEY
    assert re.fullmatch(r"cpython-3\.12\.\d+-linux-[a-z0-9_]+-[a-z]+", provenance["python_used"])
    assert provenance["python_executable"] == "<case>/.venv/bin/python"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", provenance["exclude_newer"])
    assert re.fullmatch(r"[0-9a-f]{64}", provenance["packages_sha256"])
    assert provenance["obelize_version"] == "0.8.0" and provenance["obelize_commit"] is None
    assert provenance["pack_sha256"] == "5017c6856ceb122c86fd13377b2ee4e8156741433d484ad46aa1ea4c97f728f7"
    assert provenance["uv_version"] and provenance["harness_version"] and provenance["allow_dirty"] is True
    probe = probe_best()
    assert provenance["sandbox"] == (f"bwrap {probe.version} (suites without network)" if probe.works else "none")


def test_no_record_holds_an_absolute_path(serial_round: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    project, _ = serial_round
    texts = [path.read_text(encoding="utf-8") for path in (project / "results" / "round-2").rglob("*.json")]
    assert len(texts) >= 10
    # The origins stand in for GitHub: their file:// URLs are the cases' own URLs, not harness paths.
    origins = (project.parent / "origins").as_uri()
    for text in (text.replace(origins, "<origin>") for text in texts):
        for needle in (str(tmp_path_factory.getbasetemp()), "/tmp/", "/root/", "/home/", "/work/", sys.prefix):
            assert needle not in text


def test_the_terminal_shows_tiers_and_the_summary(serial_round: Any) -> None:
    project, done = serial_round
    out = done.stdout
    assert "cases/cases.yaml::ann__clean VERIFIED_SUCCESS" in out
    assert "cases/cases.yaml::dan__breaks-suite WRONG" in out
    final = out.strip().splitlines()[-1]
    for part in ("1 verified_success", "1 partial", "2 unsupported", "1 wrong"):
        assert part in final
    assert "verified_success (1): ann__clean" in out
    assert "results/round-2" in out
    document = (project / "results" / "BENCHMARK_RESULTS.md").read_text(encoding="utf-8")
    assert "<!-- round-2:begin" in document and "ann__clean" in document
    round_folder = project / "results" / "round-2"
    summary = json.loads((round_folder / "summary.json").read_text(encoding="utf-8"))
    records = [path for path in round_folder.glob("*.json") if path.name not in {"summary.json", "publication.json"}]
    assert summary["round"] == 2 and summary["status"] == "run"
    assert summary["counts"]["records"] == len(records) > 0
    assert sum(summary["tiers"]["total"].values()) == summary["counts"]["headline_cases"]
    assert (project / "results" / "round-2" / "artefacts" / "ann__clean.json").is_file()
    # the patch a permissive licence lets be published travels with the record, byte for byte
    logs_patch = project.parent / "work" / "round-2" / "ann__clean.logs" / "artefacts" / "patch.diff"
    published = project / "results" / "round-2" / "artefacts" / "ann__clean.diff"
    assert published.read_bytes() == logs_patch.read_bytes() and b"+++ " in published.read_bytes()
    tails = json.loads((project / "results" / "round-2" / "artefacts" / "ann__clean.tails.json").read_text("utf-8"))
    assert set(tails) == {"baseline", "after"} and "passed" in tails["after"]
    after_log = next((logs_patch.parent.parent).glob("*-after.log")).read_text("utf-8").rstrip("\n")
    last = after_log.splitlines()[-1]
    assert tails["after"].endswith(last)  # the end of the log, as it was
    assert "$ " not in tails["after"] and "<logs>/junit/" in tails["after"]  # no command line, paths labelled


def test_the_tier_is_a_junit_property(serial_round: Any) -> None:
    project, _ = serial_round
    junit = (project.parent / "junit.xml").read_text(encoding="utf-8")
    assert '<property name="tier" value="wrong" />' in junit
    assert '<property name="tier" value="verified_success" />' in junit


def test_the_same_round_under_xdist_and_without_the_sandbox_gives_the_same_records(
    serial_round: Any, parallel_round: Any
) -> None:
    project, _ = serial_round
    root, _ = parallel_round
    serial = {
        k: comparable(parse_record(json.dumps(v))) for k, v in records_of(project / "results" / "round-2").items()
    }
    parallel = {k: comparable(parse_record(json.dumps(v))) for k, v in records_of(root / "results" / "round-2").items()}
    assert parallel == serial
    assert {record["provenance"]["sandbox"] for record in records_of(root / "results" / "round-2").values()} == {"none"}


def test_under_xdist_the_gate_exits_6_and_the_summary_prints_once(parallel_round: Any) -> None:
    _, done = parallel_round
    assert done.returncode == 6, done.stdout[-3000:]
    assert done.stdout.count("--bench-fail-on=wrong: dan__breaks-suite") == 1
    assert done.stdout.count("records written this session: 5") == 1


def test_every_process_of_a_round_keeps_its_objects_from_the_collector_and_the_writers_load_while_cases_run(
    parallel_round: Any,
) -> None:
    """Both keep time off a round's end (``kernel.kept_objects``, ``publish_round.load_writers``)."""
    root, done = parallel_round
    facts = {path.stem: json.loads(path.read_text()) for path in (root / "probe").glob("*.json")}
    assert set(facts) == {"controller", "gw0", "gw1"}, done.stdout[-2000:]
    assert all(fact["frozen"] > 0 for fact in facts.values())
    # the controller's first report of a case came in with the writers imported; a worker never needs them
    assert facts["controller"]["writers_at_first_report"] is True
    assert facts["gw0"]["writers_at_first_report"] is facts["gw1"]["writers_at_first_report"] is False


def test_regrade_reports_a_corrected_key(serial_round: Any, tmp_path: Path) -> None:
    project, _ = serial_round
    import shutil

    import yaml

    copy = tmp_path / "copy"
    shutil.copytree(project / "results", copy / "results")
    shutil.copytree(project / "cases" / "reviews", copy / "reviews")  # the answers travel with the case file
    data = yaml.safe_load((project / "cases" / "cases.yaml").read_text(encoding="utf-8"))
    rows = data["cases"][0]["ground_truth"]["call_sites"]
    rows.append(
        {"path": "summarizer.py", "line": 1, "kind": "import", "symbol": "google.generativeai", "label": "auto"}
    )
    data["cases"][0]["pattern_key"] = sorted({row["symbol"] for row in rows})
    (copy / "cases.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")

    status, text = obelize_bench(
        "regrade", "--round", "2", "--cases", copy / "cases.yaml", "--results", copy / "results"
    )
    assert status == 0, text
    assert "ann__clean:" in text and "measurements.missed_call_site: now 1, published 0" in text
    assert "round 2: 1 of 5 records would change" in text
    _, text = obelize_bench(
        "regrade", "--round", "2", "--cases", project / "cases" / "cases.yaml", "--results", copy / "results"
    )
    assert "round 2: 0 of 5 records would change" in text
