"""Whole rounds through the real plugin: real git, uv, PyPI installs of both SDKs, real obelize.

The repositories are local git origins (GitHub is out of reach); everything else is real.
One round over five cases is run once per module, serially and under ``-n 2``, and the
tests read what it left behind.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest

from pytest_obelize_bench.cli import main as cli_main
from pytest_obelize_bench.grading.record import comparable, parse_record
from pytest_obelize_bench.isolation.sandbox_probe import probe_best
from tests.helpers import casefile, rounds
from tests.helpers.gitrepo import git, make_repo
from tests.helpers.rounds import run_pytest

pytestmark = pytest.mark.usefixtures("index_uv_cache")

EXPECTED_TIERS = {
    "ann__clean": "verified_success",
    "bob__withheld-part": "partial",
    "cat__refused": "unsupported",
    "dan__breaks-suite": "wrong",
    "eve__control-migrated": "unsupported",
}


def build_project(root: Path) -> Path:
    project = root / "project"
    cases = [
        rounds.case_row_from_fixture("clean", "ann", root),
        rounds.case_row_from_fixture("withheld-part", "bob", root, split="holdout"),
        rounds.case_row_from_fixture("refused", "cat", root),
        rounds.case_row_from_fixture("breaks-suite", "dan", root, split="holdout"),
    ]
    url, sha = rounds.origin_from_fixture("control-migrated", root)
    control = {
        "control": "already-migrated",
        "shape": "already on the new SDK",
        "full_name": "eve/control-migrated",
        "owner": "eve",
        "repo": url,
        "sha": sha,
        "license": "MIT",
        "witness": "assistant.py:5",
        "query": "from google import genai",
        "must_produce": "no finding of an actionable kind and no dependency pin",
        "reviewer": "tester",
        "reviewed_at": "2026-12-01",
        "notes": "Already on the new SDK.",
    }
    rounds.write_case_file(project / "cases" / "cases.yaml", cases, [control])
    return project


@pytest.fixture(scope="module")
def serial_round(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    root = tmp_path_factory.mktemp("round")
    project = build_project(root)
    done = run_pytest(
        project,
        "--bench-round=2",
        "--bench-allow-dirty",
        "--bench-interpreter=minor",
        f"--bench-work={root / 'work'}",
        f"--junitxml={root / 'junit.xml'}",
        "-v",
        "-rT",
    )
    return project, done


@pytest.fixture(scope="module")
def parallel_round(
    serial_round: tuple[Path, subprocess.CompletedProcess[str]], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    project, _ = serial_round
    root = tmp_path_factory.mktemp("parallel")
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
    )
    return root, done


def records_of(folder: Path) -> dict[str, dict[str, Any]]:
    return rounds.read_records(folder)


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
    from io import StringIO

    out = StringIO()
    assert (
        cli_main(
            ["regrade", "--round", "2", "--cases", str(copy / "cases.yaml"), "--results", str(copy / "results")], out
        )
        == 0
    )
    text = out.getvalue()
    assert "ann__clean:" in text and "measurements.missed_call_site: now 1, published 0" in text
    assert "round 2: 1 of 5 records would change" in text
    out = StringIO()
    cli_main(
        [
            "regrade",
            "--round",
            "2",
            "--cases",
            str(project / "cases" / "cases.yaml"),
            "--results",
            str(copy / "results"),
        ],
        out,
    )
    assert "round 2: 0 of 5 records would change" in out.getvalue()


# -- errors: each case's own, the round goes on --------------------------------------------


def local_key() -> str:
    import platform

    version = ".".join(str(part) for part in sys.version_info[:3])
    return f"cpython-{version}-linux-{platform.machine()}-gnu"


def test_errors_are_records_and_the_next_case_is_unaffected(tmp_path: Path) -> None:
    project = tmp_path / "project"
    cases = [
        rounds.case_row_from_fixture("clean", "ann", tmp_path, python=local_key()),
        rounds.case_row_from_fixture("refused", "bad", tmp_path, sha="f" * 40),
        rounds.case_row_from_fixture("refused", "mac", tmp_path),
    ]
    rounds.write_case_file(project / "cases" / "cases.yaml", cases)
    make_repo(project, {})  # commits what is there: a clean project tree, no --bench-allow-dirty
    done = run_pytest(project, "--bench-round=2", "--bench-no-preflight", f"--bench-work={tmp_path / 'work'}")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    # two infrastructure errors: the run is kept, not published
    assert not (project / "results" / "round-2" / "publication.json").exists()
    assert "is not published: 2 case(s) errored for infrastructure reasons" in done.stdout
    assert "errors: 2 infrastructure, 0 tool" in done.stdout
    records = records_of(rounds.only_run(project / "results" / "round-2"))
    bad = records["bad__refused"]
    assert bad["tier"] == "error"
    assert bad["error"]["reason"] == "fetch_failed" and bad["error"]["step"] == "fetch"
    assert bad["measurements"]["detected"] is None and bad["measurements"]["patch_applied"] is None
    mac = records["mac__refused"]
    assert mac["error"]["reason"] == "venv_failed"
    assert rounds.UPSTREAM_KEY in mac["error"]["detail"] and "--bench-interpreter=minor" in mac["error"]["detail"]
    assert records["ann__clean"]["tier"] == "verified_success"
    provenance = records["ann__clean"]["provenance"]
    assert provenance["python_used"] == local_key() and provenance["harness_tree_dirty"] is False
    assert provenance["harness_commit"] == git("-C", str(project), "rev-parse", "HEAD")
    assert provenance["allow_dirty"] is False


def test_a_work_root_under_a_pytest_config_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "project"
    rounds.write_case_file(project / "cases" / "cases.yaml", [rounds.case_row_from_fixture("clean", "ann", tmp_path)])
    (tmp_path / "outer" / "inner").mkdir(parents=True)
    (tmp_path / "outer" / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    done = run_pytest(
        project,
        "--bench-round=2",
        "--bench-allow-dirty",
        "--bench-no-summary",
        "--bench-no-preflight",
        f"--bench-work={tmp_path / 'outer' / 'inner'}",
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert not (project / "results" / "BENCHMARK_RESULTS.md").exists()  # --bench-no-summary
    record = records_of(rounds.only_run(project / "results" / "round-2"))["ann__clean"]
    assert record["error"]["reason"] == "work_root_not_isolated"
    assert "pytest.ini (3 level(s) up)" in record["error"]["detail"]
    assert record["steps"] == []


STANDIN_MAIN = '''
"""A stand-in tool whose run folder is hostile: the harness must turn it into an error record."""
import json, os, sys
from io import StringIO
from pathlib import Path

args = sys.argv[1:]
repo = Path(args[args.index("--repo") + 1])
runs = repo / ".obelize" / "runs"
runs.mkdir(parents=True, exist_ok=True)
folder = runs / "r1"
if (repo / "HOSTILE").exists():
    outside = Path(os.environ["HOME"]) / "outside-run"  # outside the checkout, writable even in the sandbox
    outside.mkdir(exist_ok=True)
    for name in ("findings.json", "plan.json", "run.json"):
        (outside / name).write_text("{}")
    os.symlink(outside, folder)
else:
    folder.mkdir()
    corrupt = (repo / "CORRUPT").exists()
    (folder / "findings.json").write_text("not json{" if corrupt else json.dumps({"findings": []}))
    (folder / "plan.json").write_text(json.dumps({"edits": []}))
    (folder / "run.json").write_text(
        json.dumps({"exit_code": 4, "file_edits": [], "withheld": [], "refused": [], "model": None})
    )
(repo / ".obelize" / "latest").write_text("r1\\n")
sys.exit(4)
'''


def test_hostile_tool_output_errors_only_its_own_case(tmp_path: Path) -> None:
    standin = tmp_path / "standin"
    (standin / "obelize").mkdir(parents=True)
    (standin / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=69"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "obelize"\nversion = "0.0.1"\n',
        encoding="utf-8",
    )
    (standin / "obelize" / "__init__.py").write_text('__version__ = "0.0.1"\n', encoding="utf-8")
    (standin / "obelize" / "__main__.py").write_text(STANDIN_MAIN, encoding="utf-8")
    project = tmp_path / "project"
    cases = []
    for owner, marker in (("esc", "HOSTILE"), ("bad", "CORRUPT"), ("ok", None)):
        name = f"{owner}-repo"
        files: dict[str, str | bytes | None] = {"app.py": "import google.generativeai as genai\n"}
        if marker:
            files[marker] = "1\n"
        origin = make_repo(tmp_path / "origins" / name, files)
        cases.append(casefile.case_row(owner, name, repo=origin.url, sha=origin.head, python=local_key()))
    rounds.write_case_file(project / "cases" / "cases.yaml", cases)
    done = run_pytest(
        project, "--bench-round=2", "--bench-allow-dirty", f"--bench-work={tmp_path / 'work'}", f"--obelize={standin}"
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    records = records_of(project / "results" / "round-2")
    assert records["esc__esc-repo"]["error"]["reason"] == "no_run_folder"
    assert records["bad__bad-repo"]["error"]["reason"] == "run_folder_unreadable"
    assert "findings.json" in records["bad__bad-repo"]["error"]["detail"]
    assert records["ok__ok-repo"]["error"] is None and records["ok__ok-repo"]["tier"] == "unsupported"
    assert records["ok__ok-repo"]["provenance"]["obelize_version"] == "0.0.1"


# -- runs and publication (through the same rounds) -------------------------------------------


def test_a_complete_run_publishes_its_records(serial_round: Any) -> None:
    project, done = serial_round
    round_folder = project / "results" / "round-2"
    run = rounds.run_folders(round_folder)[0]
    note = json.loads((round_folder / "publication.json").read_text(encoding="utf-8"))
    assert note["run"] == run.name and sorted(note["records"]) == sorted(EXPECTED_TIERS)
    for case in EXPECTED_TIERS:
        assert (round_folder / f"{case}.json").read_bytes() == (run / f"{case}.json").read_bytes()
    manifest = json.loads((run / "run.json").read_text(encoding="utf-8"))
    assert manifest["cases_expected"] == manifest["cases_recorded"] == sorted(EXPECTED_TIERS)
    sandboxes = {
        json.loads((run / f"{case}.json").read_text(encoding="utf-8"))["provenance"]["sandbox"]
        for case in EXPECTED_TIERS
    }
    assert manifest["interrupted"] is False and [manifest["sandbox"]] == [str(s or "none") for s in sandboxes]
    assert manifest["tools_recorded"] == ["obelize 0.8.0 pack 5017c6856ceb"]
    assert manifest["interpreter_policy"] == "minor" and manifest["exclude_newer"]
    assert f"run {run.name} published as round 2: 5 records" in done.stdout
    assert "preflight" not in done.stdout.replace("--bench-no-preflight", "")
    # --bench-keep=failed (the default): finished cases lose their checkout, keep their logs
    work = project.parent / "work" / "round-2"
    assert not (work / "ann__clean").exists() and (work / "ann__clean.logs" / "01-fetch.log").is_file()
    # the record names the patch it graded by its sha256: what a review of it is keyed by
    clean = json.loads((run / "ann__clean.json").read_text(encoding="utf-8"))
    patch = (work / "ann__clean.logs" / "artefacts" / "patch.diff").read_bytes()
    assert clean["provenance"]["patch_sha256"] == hashlib.sha256(patch).hexdigest()
    assert str(work / "ann__clean.logs") not in done.stdout  # only errored cases name their logs
    code = cli_main(
        [
            "summarize",
            "--check",
            "--cases",
            str(project / "cases" / "cases.yaml"),
            "--results",
            str(project / "results"),
        ],
        StringIO(),
    )
    assert code == 0


def test_a_k_run_leaves_the_published_block_byte_for_byte(serial_round: Any, tmp_path: Path) -> None:
    project, _ = serial_round
    results = project / "results"
    before = {
        p.relative_to(results): p.read_bytes() for p in results.rglob("*") if p.is_file() and "runs" not in p.parts
    }
    done = run_pytest(
        project,
        "--bench-round=2",
        "--bench-allow-dirty",
        "--bench-interpreter=minor",
        f"--bench-work={tmp_path / 'work'}",
        "-k",
        "cat__refused",
    )
    assert done.returncode == 0, done.stdout[-3000:]
    after = {
        p.relative_to(results): p.read_bytes() for p in results.rglob("*") if p.is_file() and "runs" not in p.parts
    }
    assert after == before
    newest = rounds.run_folders(results / "round-2")[-1]
    assert sorted(p.name for p in newest.glob("*.json")) == ["cat__refused.json", "run.json"]
    assert f"run {newest.name} is not published: 4 case(s) of the case file have no record" in done.stdout
    assert f"run folder: {newest}" in done.stdout
    # the terminal counts this session's record only, not the five published ones on disk
    assert "round 2: 1 records;" in done.stdout and "tiers: error 0, wrong 0, unsupported 1," in done.stdout
    manifest = json.loads((newest / "run.json").read_text(encoding="utf-8"))
    assert manifest["selection"]["keyword"] == "cat__refused" and manifest["cases_recorded"] == ["cat__refused"]
    out = StringIO()
    cli_main(["runs", "--round", "2", "--cases", str(project / "cases" / "cases.yaml"), "--results", str(results)], out)
    listing = out.getvalue().splitlines()
    assert any(line.endswith("PUBLISHED") and " complete " in line for line in listing)
    (at,) = [i for i, line in enumerate(listing) if newest.name in line]
    assert "  partial  [unsupported 1]" in listing[at] and len(listing[at]) < 160
    assert listing[at + 1].startswith("  partial: 4 case(s) of the case file have no record (")


def show(project: Path, *args: str) -> str:
    out = StringIO()
    code = cli_main(
        [
            "show",
            *args,
            "--cases",
            str(project / "cases" / "cases.yaml"),
            "--results",
            str(project / "results"),
            "--work",
            str(project.parent / "work"),
        ],
        out,
    )
    assert code == 0, out.getvalue()
    return out.getvalue()


def test_show_explains_a_wrong_and_a_partial_case(serial_round: Any) -> None:
    project, _ = serial_round
    wrong = show(project, "dan__breaks-suite")
    assert "tier: wrong: the patch turned a passing baseline into a failing after-run" in wrong
    assert re.search(
        r"^\s+8 after\s+exit\s+1\s+[0-9.]+s\s+/\S+/dan__breaks-suite\.logs/\d\d-after\.log$", wrong, re.MULTILINE
    )
    assert "published round 2" in wrong
    partial = show(project, "bob__withheld-part")
    assert "tier: partial: unmigrated 5 > 0" in partial
    assert "unmigrated rows (5):" in partial and "withheld by " in partial
    data = json.loads(show(project, "bob__withheld-part", "--json"))
    assert data["tier"] == "partial" and len(data["unmigrated"]) == 5
    assert all(row["withheld_by"] for row in data["unmigrated"])
    assert all(step["log_exists"] for step in data["steps"])
