"""``--bench-resume``: an unchanged finished case is kept, a changed key or an error runs again."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_obelize_bench.case.content_key import case_row_hash, content_key
from pytest_obelize_bench.casefile.schema import Case, Review
from pytest_obelize_bench.grading.record import Record
from pytest_obelize_bench.isolation.gitquery import HarnessInfo
from pytest_obelize_bench.session.resume import choose, latest_run
from pytest_obelize_bench.tool.info import ToolInfo
from pytest_obelize_bench.tool.packs import PackInfo
from tests.helpers import rounds
from tests.helpers.bench_cli import obelize_bench
from tests.helpers.rounds import run_pytest

ROUND = ("--bench-round=2", "--bench-allow-dirty", "--bench-interpreter=minor")


def _case(**fields: Any) -> Case:
    base: dict[str, Any] = {"id": "ann__x", "origin": "corpus", "control": False, "provider": "p", "change": "c"}
    return Case(**{**base, **fields})


TOOL = ToolInfo(
    argv_prefix=("python",),
    python="python",
    version="0.8.0",
    commit=None,
    tree_dirty=None,
    source="installed",
    spec=None,
)


def _key(case: Case, **changes: Any) -> str:
    parts: dict[str, Any] = {
        "tool": TOOL,
        "packs": {"p/c": PackInfo(pack="p/c", pack_sha256="aa")},
        "interpreter_used": "cpython-3.12.1-linux-x86_64-gnu",
        "exclude_newer": "2026-12-01T00:00:00Z",
        "sandbox": "none",
        "harness": HarnessInfo(version="1.0", commit="abc"),
        "attempt": 1,
    }
    parts.update(changes)
    return content_key(case, **parts)


def test_every_part_of_the_key_changes_it() -> None:
    case = _case(to_version="2.24.0")
    base = _key(case)
    assert _key(case) == base
    assert _key(_case(to_version="2.25.0")) != base
    assert case_row_hash(_case(install=("uv pip install x==1.0.0",))) != case_row_hash(case)
    for name, other in (
        ("tool", TOOL.model_copy(update={"version": "0.7.0"})),
        ("packs", {"p/c": PackInfo(pack="p/c", pack_sha256="bb")}),
        ("interpreter_used", "cpython-3.12.2-linux-x86_64-gnu"),
        ("exclude_newer", "2026-12-02T00:00:00Z"),
        ("sandbox", "bwrap 0.8.0 (suites without network)"),
        ("harness", HarnessInfo(version="1.0", commit="def")),
        ("attempt", 2),
    ):
        assert _key(case, **{name: other}) != base, name


def _record(case: str, tier: str, key: str | None, error: bool = False) -> Record:
    return Record.model_validate(
        {
            "case": case,
            "origin": "corpus",
            "control": False,
            "split": "dev",
            "error": {"step": "fetch", "reason": "fetch_failed", "detail": "x"} if error else None,
            "measurements": {},
            "tier": tier,
            "provenance": {"content_key": key},
        }
    )


def test_choose_keeps_only_finished_records_with_the_same_key() -> None:
    cases = [_case(id=name) for name in ("a", "b", "c", "d", "e")]
    records = {
        "a": _record("a", "partial", "k"),
        "b": _record("b", "partial", "old"),
        "c": _record("c", "error", "k", error=True),
        "e": _record("e", "partial", None),
    }
    keys: dict[str, str | None] = {"a": "k", "b": "k", "c": "k", "d": "k", "e": None}
    kept, to_run = choose(cases, records, keys)
    assert list(kept) == ["a"]
    assert to_run == ["b", "c", "d", "e"]


def test_a_record_whose_patch_was_reviewed_since_runs_again() -> None:
    cases = [_case(id="a"), _case(id="b")]
    digest = "d1" * 32
    records = {
        name: _record(name, "partial", "k").model_copy(
            update={"provenance": _record(name, "partial", "k").provenance.model_copy(update={"patch_sha256": digest})}
        )
        for name in ("a", "b")
    }
    keys: dict[str, str | None] = {"a": "k", "b": "k"}
    answer = Review(human_edits=0, patch_correct=True, reviewer="r", reviewed_at="2026-12-04")
    kept, to_run = choose(cases, records, keys, {("a", digest): answer})
    assert list(kept) == ["b"] and to_run == ["a"]
    assert choose(cases, records, keys, {})[1] == []


def test_latest_run_skips_folders_without_a_manifest_and_symlinks(tmp_path: Path) -> None:
    assert latest_run(tmp_path / "missing") is None
    for name in ("20260101T000000Z-aaaaaa", "20260102T000000Z-bbbbbb"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "run.json").write_text("{}", encoding="utf-8")
    (tmp_path / "20260103T000000Z-cccccc").mkdir()  # no run.json
    (tmp_path / "20260104T000000Z-dddddd").symlink_to(tmp_path / "20260102T000000Z-bbbbbb")
    assert latest_run(tmp_path) == "20260102T000000Z-bbbbbb"


# -- through the real plugin -------------------------------------------------------------


def _round(project: Path, work: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_pytest(project, *ROUND, f"--bench-work={work}", "-rA", *extra)


def _run_records(project: Path) -> dict[str, dict[str, Any]]:
    return rounds.read_records(rounds.only_run(project / "results" / "round-2"))


def _without_times_and_runs(record: dict[str, Any]) -> dict[str, Any]:
    record = copy.deepcopy(record)
    record["provenance"].pop("run_at")
    record["provenance"].pop("resumed_from")
    record["measurements"].pop("runtime_seconds", None)
    for step in record["steps"]:
        step.pop("duration_s")
    return record


@pytest.mark.usefixtures("index_uv_cache")
def test_a_resumed_unchanged_round_runs_nothing_and_a_changed_key_runs_again(tmp_path: Path) -> None:
    project = tmp_path / "project"
    rows = [
        rounds.case_row_from_fixture("trap-vertex", "ann", tmp_path),
        rounds.case_row_from_fixture("trap-vertex-preview", "bob", tmp_path),
    ]
    cases_file = rounds.write_case_file(project / "cases" / "cases.yaml", rows)
    first_done = _round(project, tmp_path / "work1")
    first = _run_records(project)
    assert sorted(first) == ["ann__trap-vertex", "bob__trap-vertex-preview"], first_done.stdout[-3000:]
    assert all(r["error"] is None and r["provenance"]["content_key"] for r in first.values())
    run_id = rounds.only_run(project / "results" / "round-2").name

    # Asked for two workers, it starts none: nothing runs again.
    again = _round(project, tmp_path / "work2", "--bench-resume", "-n", "2")
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-2000:]
    assert "resumed: 2 case(s) kept" in again.stdout
    assert "no case runs again, so no xdist worker was started" in again.stdout
    assert "workers" not in again.stdout.replace("no xdist worker was started", ""), again.stdout[-3000:]
    assert "PASSED" not in again.stdout and "ERROR" not in again.stdout  # no item ran
    assert not (tmp_path / "work2" / "round-2" / "ann__trap-vertex").exists()
    resumed = _run_records(project)
    for case, record in resumed.items():
        assert record["provenance"]["resumed_from"] == run_id
        assert _without_times_and_runs(record) == _without_times_and_runs(first[case])

    # A changed row is a changed key: bob runs again, ann stays kept.
    rows[1]["license"] = "Apache-2.0"
    rounds.write_case_file(cases_file, rows)
    changed = _round(project, tmp_path / "work3", f"--bench-resume={run_id}", "-n", "2")
    assert changed.returncode == 0, changed.stdout[-3000:]
    assert "resumed: 1 case(s) kept" in changed.stdout
    assert "created: 2/2 workers" in changed.stdout and "no xdist worker" not in changed.stdout
    latest = _run_records(project)
    assert latest["ann__trap-vertex"]["provenance"]["resumed_from"] == run_id
    assert latest["bob__trap-vertex-preview"]["provenance"]["resumed_from"] is None
    assert (
        latest["bob__trap-vertex-preview"]["provenance"]["content_key"]
        != first["bob__trap-vertex-preview"]["provenance"]["content_key"]
    )
    # Nothing was rewritten in place: each record a resume kept or replaced stays, byte for byte.
    earlier = rounds.only_run(project / "results" / "round-2") / "attempts"
    assert sorted(p.name for p in earlier.glob("*.json")) == [
        "ann__trap-vertex.1.json",
        "bob__trap-vertex-preview.1.json",
        "bob__trap-vertex-preview.2.json",
    ]
    kept = json.loads((earlier / "ann__trap-vertex.1.json").read_text(encoding="utf-8"))
    assert kept == first["ann__trap-vertex"]


@pytest.mark.usefixtures("index_uv_cache")
def test_an_error_record_runs_again_on_resume(tmp_path: Path) -> None:
    project = tmp_path / "project"
    # "2.24.00" installs 2.24.0, which is not the pin as written: an error record.
    row = rounds.case_row_from_fixture("trap-vertex", "cat", tmp_path, to_version="2.24.00")
    rounds.write_case_file(project / "cases" / "cases.yaml", [row])
    _round(project, tmp_path / "work1")
    first = _run_records(project)["cat__trap-vertex"]
    assert first["tier"] == "error" and first["provenance"]["content_key"]

    again = _round(project, tmp_path / "work2", "--bench-resume")
    assert "resumed:" not in again.stdout
    second = _run_records(project)["cat__trap-vertex"]
    assert second["provenance"]["resumed_from"] is None
    assert second["provenance"]["content_key"] == first["provenance"]["content_key"]
    assert (tmp_path / "work2" / "round-2" / "cat__trap-vertex").exists()  # it ran in this session
    kept = rounds.only_run(project / "results" / "round-2") / "attempts" / "cat__trap-vertex.1.json"
    assert json.loads(kept.read_text(encoding="utf-8"))["provenance"]["run_at"] == first["provenance"]["run_at"]


@pytest.mark.usefixtures("index_uv_cache")
def test_a_resume_stopped_at_preflight_then_resumed_is_a_whole_run_and_no_tamper(tmp_path: Path) -> None:
    """The documented way back from a failed resume: resume again. The run then reads as whole."""
    project = tmp_path / "project"
    rows = [
        rounds.case_row_from_fixture("trap-vertex", "ann", tmp_path),
        rounds.case_row_from_fixture("trap-vertex-preview", "bob", tmp_path),
    ]
    cases_file = rounds.write_case_file(project / "cases" / "cases.yaml", rows)
    assert _round(project, tmp_path / "work1").returncode == 0
    # bob's key changes, and its repository is out of reach: the resume stops at its preflight
    origin = Path(rows[1]["repo"].removeprefix("file://"))
    hidden = origin.with_name("hidden")
    origin.rename(hidden)
    rows[1]["license"] = "Apache-2.0"
    rounds.write_case_file(cases_file, rows)
    stopped = _round(project, tmp_path / "work2", "--bench-resume")
    assert stopped.returncode == 4, stopped.stdout[-3000:]
    hidden.rename(origin)
    again = _round(project, tmp_path / "work3", "--bench-resume")
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-2000:]
    _, listing = obelize_bench("runs", "--round", "2", "--cases", cases_file, "--results", project / "results")
    assert "CHANGED" not in listing and "preflight" not in listing and "interrupted" not in listing, listing
    assert " complete " in listing, listing
    manifest = json.loads((rounds.only_run(project / "results" / "round-2") / "run.json").read_text("utf-8"))
    assert manifest["stopped"] is None and manifest["interrupted"] is False and manifest["ended_at"]
    assert [entry["kind"] for entry in manifest["reruns"]] == ["resume", "resume"]
