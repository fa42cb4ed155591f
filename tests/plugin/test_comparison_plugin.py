"""The comparison arm through the real plugin: agents that are programs, against real obelize.

The repositories are the offline fixtures committed to local git origins; obelize, git and
bubblewrap are real.  The agent is ``tests/agents/scripted_agent.py``, told how to behave by its
arm file: migrate the clean fixture, do nothing, break a file, write outside its tree, never
stamp, or outlast its limit.  Each run's record, score and tier are read back.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_obelize_bench.casefile.cases import load_case_file
from pytest_obelize_bench.comparison.assemble import ComparisonScore, assemble
from pytest_obelize_bench.comparison.block_text import comparison_blocks
from pytest_obelize_bench.comparison.review_file import read_review
from pytest_obelize_bench.comparison.rows import read_comparison
from pytest_obelize_bench.records.results_document import stale_block
from tests.helpers import rounds
from tests.helpers.project import PROJECT
from tests.helpers.rounds import run_pytest
from tests.helpers.sandbox import bwrap_probe

pytestmark = pytest.mark.usefixtures("index_uv_cache")

AGENT = PROJECT / "tests" / "agents" / "scripted_agent.py"
CLEAN_ROWS = 5
OWNERS = {"clean": "ann", "refused": "cat"}


def build(
    root: Path, behaviour: str, *, dev: tuple[str, ...] = ("clean",), limit: float = 60, suites: bool = False
) -> Path:
    """A project whose dev cases are ``dev``; without ``suites`` their test command is dropped (no venv)."""
    project = root / "project"
    cases = [rounds.case_row_from_fixture(name, OWNERS[name], root) for name in dev]
    if not suites:
        for row in cases:
            row.update(test_cmd=None, install=[], has_test_files=False)
            row["ground_truth"].update(tests_cover_change=False, tests_cover_change_why="No test command here.")
    cases.append(rounds.case_row_from_fixture("withheld-part", "bob", root, split="holdout"))
    rounds.write_case_file(project / "cases" / "cases.yaml", cases)
    (project / "cases" / "comparison").mkdir(parents=True)
    prompt = (PROJECT / "cases" / "comparison" / "COMPARISON_PROMPT.md").read_bytes()
    (project / "cases" / "comparison" / "COMPARISON_PROMPT.md").write_bytes(prompt)
    arms = project / "arms"
    arms.mkdir()
    (arms / "guide.md").write_text("# Migrating to google-genai\n\nBuild a genai.Client.\n", encoding="utf-8")
    arm = {
        "name": "general_agent",
        "command": [
            sys.executable,
            str(AGENT),
            "{prompt}",
            "{tree}",
            "{meta}",
            behaviour,
            str(project / "escaped.txt"),
        ],
        "guide": {
            "file": "guide.md",
            "url": "https://ai.google.dev/gemini-api/docs/migrate",
            "fetched_at": "2026-12-01T00:00:00Z",
        },
        "time_limit_seconds": limit,
        "read_only": [str(AGENT.parent)],
    }
    (arms / "agent.yaml").write_text(yaml.safe_dump(arm), encoding="utf-8")
    return project


#: The blind roots the runs made under the system temp folder, removed when the module ends.
BLIND_ROOTS: list[Path] = []


@pytest.fixture(scope="module", autouse=True)
def _remove_blind_roots() -> Iterator[None]:
    yield
    for root in BLIND_ROOTS:
        shutil.rmtree(root, ignore_errors=True)


def compare(
    root: Path, behaviour: str, *extra: str, verbose: bool = True, **kwargs: Any
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    BLIND_ROOTS.append(blind_folder(root, "").parent)
    project = build(root, behaviour, **kwargs)
    write_review(project, tuple(f"{OWNERS[name]}__{name}" for name in kwargs.get("dev", ("clean",))))
    done = run_pytest(
        project,
        "--bench-compare=arms/agent.yaml",
        "--bench-round=2",
        "--bench-interpreter=minor",
        f"--bench-work={root / 'work'}",
        *(["-v"] if verbose else []),
        *extra,
    )
    return project, done


def record_of(project: Path, done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    path = project / "results" / "comparison" / "round-2.json"
    assert path.is_file(), done.stdout[-4000:] + done.stderr[-2000:]
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def score_of(project: Path) -> ComparisonScore:
    cases = {case.id: case for case in load_case_file(project / "cases" / "cases.yaml").cases}
    review_file = project / "cases" / "comparison-round-2.yaml"
    review = read_review(review_file) if review_file.exists() else None
    return assemble(read_comparison(project / "results" / "comparison" / "round-2.json"), review, cases, {})


def write_review(project: Path, cases: tuple[str, ...]) -> None:
    """A review that rejects nothing: every arm's edits on every case read and accepted."""
    reviews = {
        arm: {case: {"reviewed": "Read the whole diff."} for case in cases} for arm in ("general_agent", "obelize")
    }
    data = {"round": 2, "reviewer": "tester", "reviewed_at": "2026-12-03", "reviews": reviews}
    (project / "cases" / "comparison-round-2.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")


def one(score: ComparisonScore, arm: str, case: str) -> Any:
    return next(row for row in score.scores[arm] if row.case == case)


def blind_folder(root: Path, case_id: str) -> Path:
    work = str((root / "work").resolve())
    digest = hashlib.sha256(work.encode()).hexdigest()[:10]
    return Path(tempfile.gettempdir()) / f"w{digest}" / hashlib.sha256(case_id.encode()).hexdigest()[:8]


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    root = tmp_path_factory.mktemp("migrate")
    project, done = compare(root, "migrate", "--bench-keep=all", dev=("clean", "refused"), suites=True)
    return root, project, done


def test_the_scripted_agent_clears_every_row_of_the_clean_case_and_obelize_agrees_with_its_plan(
    migrated: tuple[Path, Path, subprocess.CompletedProcess[str]],
) -> None:
    _root, project, done = migrated
    assert done.returncode == 0, done.stdout[-4000:]
    assert "ann__clean COMPARED" in done.stdout and "cat__refused COMPARED" in done.stdout
    assert "bob__withheld-part" not in done.stdout  # the holdout is never shown to an agent
    record = record_of(project, done)
    assert record["arms"] == ["general_agent", "obelize"] and record["round"] == 2
    arm_bytes = (project / "arms" / "agent.yaml").read_bytes()
    assert record["arm_file_sha256"] == hashlib.sha256(arm_bytes).hexdigest()
    assert record["exclude_newer"] and record["prompt_sha256"]
    guide = (project / "arms" / "guide.md").read_bytes()
    assert record["guide"]["sha256"] == hashlib.sha256(guide).hexdigest()
    clean = record["cases"]["ann__clean"]
    assert clean["slug"] == hashlib.sha256(b"ann__clean").hexdigest()[:8]
    assert [c["path"] for c in clean["changes"]] == ["requirements.txt", "summarizer.py"]
    assert clean["written"] == ["summarizer.py"] and clean["compiles"] is True
    assert len(clean["findings"]["base"]) == CLEAN_ROWS and clean["findings"]["general_agent"] == []
    assert clean["finished_at"] >= clean["started_at"] and clean["errors"] == []
    # The suites, run as step 8 runs obelize's: the baseline over the pin, each arm's tree after.
    assert clean["tests_baseline"]["status"] == "pass" and clean["tests_baseline"]["passed"] == 2
    assert clean["tests_after"]["status"] == "pass" and clean["tests_after"]["sdk_to"] == "2.24.0"
    assert clean["obelize"]["tests_after"]["status"] == "pass"
    # Both arms' diffs, kept since the fixture repository's licence allows it
    assert sorted(clean["diffs"]) == ["general_agent", "obelize"]
    assert "+++ b/summarizer.py" in clean["diffs"]["general_agent"] and "+++ b/" in clean["diffs"]["obelize"]
    score = score_of(project)
    agent, ours = one(score, "general_agent", "ann__clean"), one(score, "obelize", "ann__clean")
    assert (agent.key_rows, agent.cleared, agent.left, agent.tier) == (CLEAN_ROWS, CLEAN_ROWS, 0, "verified_success")
    assert (ours.cleared, ours.tier) == (CLEAN_ROWS, "verified_success")
    # The refused case: obelize writes nothing, the agent only moves a pin it should not have.
    assert one(score, "obelize", "cat__refused").tier == "unsupported"
    assert one(score, "general_agent", "cat__refused").tier == "partial"
    assert all(row.agrees for row in score.calibration) and len(score.calibration) == 2
    text = (project / "results" / "BENCHMARK_RESULTS.md").read_text(encoding="utf-8")
    assert stale_block(text, comparison_blocks(project / "results", project / "cases" / "cases.yaml")) is None


def test_the_agent_sees_a_blind_folder_and_a_prompt_that_differs_only_in_its_paths(
    migrated: tuple[Path, Path, subprocess.CompletedProcess[str]],
) -> None:
    root, project, _ = migrated
    folder = blind_folder(root, "ann__clean")
    prompt = (folder / "given" / "prompt.md").read_text(encoding="utf-8")
    for leak in ("ann__clean", "ann", "clean", "obelize", "bench", str(project)):
        assert leak not in str(folder), leak
    assert "ann__clean" not in prompt and "obelize" not in prompt.lower()
    template = (project / "cases" / "comparison" / "COMPARISON_PROMPT.md").read_text(encoding="utf-8")
    body = template[template.index("-->") + 3 :].lstrip("\n")
    for slot, path in (
        ("{{TREE}}", folder / "tree"),
        ("{{GUIDE}}", folder / "given" / "guide.md"),
        ("{{META}}", folder / "meta"),
    ):
        body = body.replace(slot, str(path))
    assert prompt == body


def test_under_two_workers_the_record_is_the_same(
    migrated: tuple[Path, Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    _, serial_project, serial_done = migrated
    project, done = compare(tmp_path, "migrate", "-n", "2", dev=("clean", "refused"), suites=True)
    assert done.returncode == 0, done.stdout[-4000:]
    serial, parallel = record_of(serial_project, serial_done), record_of(project, done)
    for case in ("ann__clean", "cat__refused"):
        for field in ("changes", "findings", "obelize_changes", "written", "compiles", "slug", "tests_baseline"):
            assert serial["cases"][case][field] == parallel["cases"][case][field], (case, field)


def test_an_agent_that_does_nothing_is_unsupported(tmp_path: Path) -> None:
    project, done = compare(tmp_path, "nothing")
    record_of(project, done)
    agent = one(score_of(project), "general_agent", "ann__clean")
    assert (agent.files, agent.cleared, agent.corrections, agent.tier) == (0, 0, CLEAN_ROWS, "unsupported")
    # no arm errored: the blind copies are gone from the system temp folder, what a reader needs is kept
    assert not blind_folder(tmp_path, "ann__clean").parent.exists()
    kept = tmp_path / "work" / "comparison" / "ann__clean.logs"
    assert (kept / "given" / "prompt.md").is_file() and any((kept / "logs").rglob("*.log"))


def test_an_agent_that_breaks_a_file_is_wrong(tmp_path: Path) -> None:
    project, done = compare(tmp_path, "break")
    assert record_of(project, done)["cases"]["ann__clean"]["compiles"] is False
    assert one(score_of(project), "general_agent", "ann__clean").tier == "wrong"


@pytest.mark.skipif(not bwrap_probe().works, reason="bubblewrap is not usable on this machine")
def test_the_sandbox_stops_an_agent_writing_outside_its_tree(tmp_path: Path) -> None:
    project, done = compare(tmp_path, "escape", "--bench-keep=all")
    record = record_of(project, done)
    assert not (project / "escaped.txt").exists()
    folder = blind_folder(tmp_path, "ann__clean")
    origin = tmp_path / "origins" / "clean" / "summarizer.py"
    assert (folder / "base" / "summarizer.py").read_bytes() == origin.read_bytes()
    report = (folder / "meta" / "report.md").read_text(encoding="utf-8")
    assert report.count("refused") == 2, report
    assert [c["path"] for c in record["cases"]["ann__clean"]["changes"]] == ["requirements.txt", "summarizer.py"]
    assert one(score_of(project), "general_agent", "ann__clean").cleared == CLEAN_ROWS


def test_an_agent_that_never_stamps_errors_the_case_for_its_arm_only(tmp_path: Path) -> None:
    project, done = compare(tmp_path, "nostamp", verbose=False)
    errors = record_of(project, done)["cases"]["ann__clean"]["errors"]
    assert [(e["arm"], e["step"], e["reason"]) for e in errors] == [("general_agent", "agent", "stamp_missing")]
    # without -v the item's line is one letter: the reason is in the session's summary
    summary = done.stdout.split("obelize-bench comparison, round 2", 1)[1]
    assert "compare-error: ann__clean: general_agent, step agent: stamp_missing" in summary
    score = score_of(project)
    assert one(score, "general_agent", "ann__clean").tier == "error"
    assert one(score, "obelize", "ann__clean").cleared == CLEAN_ROWS


def test_a_stamp_from_before_the_step_began_is_impossible_and_errors_the_agent(tmp_path: Path) -> None:
    project, done = compare(tmp_path, "backdate")
    row = record_of(project, done)["cases"]["ann__clean"]
    assert [(e["arm"], e["reason"]) for e in row["errors"]] == [("general_agent", "stamp_impossible")]
    assert row["runtime_seconds"] is None and row["started_at"] is None
    assert one(score_of(project), "general_agent", "ann__clean").tier == "error"


def test_an_agent_past_its_limit_is_stopped_and_errors(tmp_path: Path) -> None:
    project, done = compare(tmp_path, "slow", limit=3)
    errors = record_of(project, done)["cases"]["ann__clean"]["errors"]
    assert [(e["arm"], e["reason"]) for e in errors] == [("general_agent", "timeout")]
    assert one(score_of(project), "general_agent", "ann__clean").tier == "error"
    assert "--bench-compare-repeat" not in done.stdout


def test_a_selection_publishes_nothing_and_a_repeat_runs_the_agent_twice(tmp_path: Path) -> None:
    project, done = compare(tmp_path, "migrate", "-k", "clean", dev=("clean", "refused"))
    assert "not published: 1 of 2 dev cases ran" in done.stdout, done.stdout[-3000:]
    assert not (project / "results" / "comparison" / "round-2.json").exists()
    again = tmp_path / "again"
    project, done = compare(again, "migrate", "--bench-compare-repeat=1")
    repeat = record_of(project, done)["cases"]["ann__clean"]["repeat"]
    assert repeat is not None and [c["path"] for c in repeat["changes"]] == ["requirements.txt", "summarizer.py"]
    assert repeat["findings"] == []


def test_a_bad_arm_file_gets_one_line_naming_the_field(tmp_path: Path) -> None:
    project = build(tmp_path, "migrate")
    arm = yaml.safe_load((project / "arms" / "agent.yaml").read_text(encoding="utf-8"))
    arm["time_limit_seconds"] = -1
    (project / "arms" / "agent.yaml").write_text(yaml.safe_dump(arm), encoding="utf-8")
    done = run_pytest(project, "--bench-compare=arms/agent.yaml", "--bench-round=2")
    assert done.returncode == 4
    lines = [line for line in done.stderr.splitlines() if "agent.yaml" in line]
    assert len(lines) == 1 and "time_limit_seconds: Input should be greater than 0" in lines[0], done.stderr


def test_an_unreachable_dev_repository_stops_the_comparison_before_any_agent_runs(tmp_path: Path) -> None:
    """The comparison has the rounds' preflight, and ``~`` in --bench-repo-cache is the home's folder."""
    project = build(tmp_path, "clean")
    data = yaml.safe_load((project / "cases" / "cases.yaml").read_text(encoding="utf-8"))
    gone = (tmp_path / "origins" / "gone").as_uri()
    data["cases"][0]["repo"] = gone
    (project / "cases" / "cases.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    home = tmp_path / "home"
    done = run_pytest(
        project,
        "--bench-compare=arms/agent.yaml",
        "--bench-round=2",
        "--bench-interpreter=minor",
        f"--bench-work={tmp_path / 'work'}",
        "--bench-repo-cache=~/repos",
        env={"HOME": str(home)},
    )
    assert done.returncode == 4, done.stdout[-3000:] + done.stderr[-2000:]
    assert f"preflight: ann__clean: repository {gone} is unreachable" in done.stdout
    assert "--bench-repo-cache=DIR supplies them offline" in done.stdout + done.stderr
    assert not (project / "~").exists() and not (project / "results" / "comparison").exists()
