"""A round through the real plugin: hostile or failing cases, publication, a -k run, and show on its records."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import casefile, rounds
from tests.helpers.bench_cli import obelize_bench
from tests.helpers.gitrepo import git, make_repo
from tests.helpers.round_project import EXPECTED_TIERS, records_of
from tests.helpers.rounds import local_key, run_pytest

pytestmark = pytest.mark.usefixtures("index_uv_cache")


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


def show(project: Path, *args: str) -> str:
    code, out = obelize_bench(
        "show",
        *args,
        "--cases",
        project / "cases" / "cases.yaml",
        "--results",
        project / "results",
        "--work",
        project.parent / "work",
    )
    assert code == 0, out
    return out


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
    code, out = obelize_bench(
        "summarize", "--check", "--cases", project / "cases" / "cases.yaml", "--results", project / "results"
    )
    assert code == 0, out


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
    _, out = obelize_bench("runs", "--round", "2", "--cases", project / "cases" / "cases.yaml", "--results", results)
    listing = out.splitlines()
    assert any(line.endswith("PUBLISHED") and " complete " in line for line in listing)
    (at,) = [i for i, line in enumerate(listing) if newest.name in line]
    assert "  partial  [unsupported 1]" in listing[at] and len(listing[at]) < 160
    assert listing[at + 1].startswith("  partial: 4 case(s) of the case file have no record (")


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
