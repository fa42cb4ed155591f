"""``obelize-bench history``: three releases of a deterministic tool on 20 cases, and the runs a
history must leave out, through the console script.

0.6.0 leaves every case ``unsupported`` but cases 0-4 ``partial``; 0.7.0 verifies 0-4, makes 5
``partial`` and breaks 6 (``wrong``); 0.8.0 is 0.7.0 but 0 is ``partial`` again and 7 verified.
Beside them: an earlier run of 0.7.0, an interrupted run of 0.8.0, a run of 0.5.0 under other pins
and a run of 0.9.0 that recorded only some cases. The history must hold exactly the three, in
version order, with each step's improved and regressed cases by name.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_obelize_bench.promotion.history import order_key, release_label
from tests.helpers.bench_cli import obelize_bench
from tests.helpers.promotion_runs import case_id, make_project, write_run
from tests.helpers.runs import run

FIRST_07, RUN_06, RUN_07, RUN_08 = (
    "20261201T090000Z-aaaaaa",
    "20261201T100000Z-bbbbbb",
    "20261201T110000Z-cccccc",
    "20261201T120000Z-dddddd",
)
INTERRUPTED_08, OTHER_PINS_05, PARTIAL_09 = (
    "20261201T130000Z-eeeeee",
    "20261201T140000Z-ffffff",
    "20261201T150000Z-111111",
)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_project(tmp_path_factory.mktemp("history") / "project")
    write_run(root, FIRST_07, {i: "v" for i in range(5)}, default="u", version="0.7.0")
    write_run(root, RUN_06, {i: "p" for i in range(5)}, default="u", version="0.6.0")
    release_07 = {**{i: "v" for i in range(5)}, 5: "p", 6: "w"}
    write_run(root, RUN_07, release_07, default="u", version="0.7.0")
    write_run(root, RUN_08, {**release_07, 0: "p", 7: "v"}, default="u", version="0.8.0")
    write_run(root, INTERRUPTED_08, {}, default="v", version="0.8.0", interrupted=True)
    write_run(root, OTHER_PINS_05, {}, default="u", version="0.5.0", exclude_newer="2026-01-01T00:00:00Z")
    partial = write_run(root, PARTIAL_09, {}, default="v", version="0.9.0")
    for stray in partial.glob("owner1*"):
        stray.unlink()
    return root


def _history(project: Path, *args: str) -> tuple[int, str]:
    return obelize_bench("history", "--round", "2", *args, cwd=project)


def test_history_keeps_one_complete_run_per_release_in_version_order(project: Path, tmp_path: Path) -> None:
    copy = tmp_path / "project"
    shutil.copytree(project, copy)
    code, out = _history(copy)
    assert code == 0, out
    history = json.loads((copy / "results" / "round-2" / "history.json").read_text(encoding="utf-8"))
    assert [(r["label"], r["run"]) for r in history["releases"]] == [
        ("0.6.0", RUN_06),
        ("0.7.0", RUN_07),
        ("0.8.0", RUN_08),
    ]
    left = {item["run"]: item["reason"] for item in history["left_out"]}
    assert left[FIRST_07] == f"an earlier run of obelize 0.7.0: run {RUN_07} stands for it"
    assert left[INTERRUPTED_08] == "it was interrupted"
    assert left[OTHER_PINS_05].startswith("its pins (exclude_newer 2026-01-01T00:00:00Z, interpreter minor) are not")
    assert left[PARTIAL_09].startswith("10 case(s) of the case file have no record (owner10__repo, owner11__repo")
    assert sorted(left) == sorted([FIRST_07, INTERRUPTED_08, OTHER_PINS_05, PARTIAL_09])
    first, second = history["steps"]
    assert [c["case"] for c in first["improved"]] == [case_id(i) for i in range(6)]
    assert [c["case"] for c in first["regressed"]] == [case_id(6)]
    assert (
        first["regressed"][0]["before"]["tier"] == "unsupported" and first["regressed"][0]["after"]["tier"] == "wrong"
    )
    assert [c["case"] for c in second["improved"]] == [case_id(7)]
    assert [c["case"] for c in second["regressed"]] == [case_id(0)]
    # cases by tier (the worst attempt), rows migrated with their interval by case
    releases = {r["label"]: r for r in history["releases"]}
    assert releases["0.7.0"]["tiers"] == {"wrong": 1, "unsupported": 13, "partial": 1, "verified_success": 5}
    rows = releases["0.6.0"]["rows_migrated"]
    assert (rows["k"], rows["n"], rows["clusters"]) == (20, 120, 20)  # 5 cases of 2 attempts x 2 of 3 rows
    assert releases["0.8.0"]["verified"]["k"] == 5 and releases["0.8.0"]["verified"]["n"] == 20
    assert "0.8.0 against 0.7.0: 1 improved, 1 regressed; gate:" in out
    # the document's block and chart come from history.json, and the check holds them
    document = (copy / "results" / "BENCHMARK_RESULTS.md").read_text(encoding="utf-8")
    assert "<!-- history-round-2:begin" in document and "### History of obelize releases, round 2" in document
    assert "* **0.8.0** against 0.7.0: improved `owner07__repo` (unsupported, 0/6 rows -> verified_success" in document
    assert "regressed `owner00__repo` (verified_success, 6/6 rows -> partial, 4/6 rows)" in document
    assert f"* `{INTERRUPTED_08}`: it was interrupted" in document
    assert (copy / "results" / "figures" / "round-2-history.svg").is_file()
    assert obelize_bench("summarize", "--check", cwd=copy)[0] == 0
    edited = document.replace("| 0.6.0 |", "| 0.6.1 |")
    (copy / "results" / "BENCHMARK_RESULTS.md").write_text(edited, encoding="utf-8")
    code, out = obelize_bench("summarize", "--check", cwd=copy)
    assert code == 1 and "the history-round-2 block differs from a fresh render" in out
    # each step's decision is the gate's on the same two runs
    for step, (incumbent, candidate) in zip(history["steps"], [(RUN_06, RUN_07), (RUN_07, RUN_08)], strict=True):
        obelize_bench("gate", "--incumbent", incumbent, "--candidate", candidate, cwd=copy)
        (written,) = (copy / "results" / "decisions").glob(f"*{candidate}.json")
        decision = json.loads(written.read_text(encoding="utf-8"))
        assert (step["decision"], step["failed_rules"]) == (decision["decision"], decision["failed_rules"])


def test_find_names_the_first_release_that_changed_a_case_and_writes_nothing(project: Path) -> None:
    code, out = _history(project, "--find", case_id(0))
    assert code == 0, out
    found = [line for line in out.splitlines() if line.startswith(case_id(0))]
    assert found == [
        f"{case_id(0)}: first changed at obelize 0.7.0 (run {RUN_07}): partial, 4/6 rows -> verified_success, "
        f"6/6 rows; the release before: obelize 0.6.0 (run {RUN_06})",
        f"{case_id(0)}: changed again at obelize 0.8.0 (run {RUN_08}): verified_success, 6/6 rows -> partial, "
        f"4/6 rows; the release before: obelize 0.7.0 (run {RUN_07})",
    ]
    code, out = _history(project, "--find", case_id(19))
    assert code == 0 and f"{case_id(19)}: the same tier and rows under every release (0.6.0, 0.7.0, 0.8.0)" in out
    code, out = _history(project, "--find", "nosuch__case")
    assert code == 1 and "no release of round 2 has a record of nosuch__case" in out
    assert not (project / "results" / "round-2" / "history.json").exists()


def test_a_round_without_a_complete_run_has_no_history(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project")
    write_run(project, INTERRUPTED_08, {}, default="v", version="0.8.0", interrupted=True)
    code, out = _history(project)
    assert code == 1
    assert out.splitlines() == [
        f"left out: run {INTERRUPTED_08}: it was interrupted",
        "obelize-bench history: round 2 has no complete run to make a history of",
    ]


def test_a_hostile_history_file_stops_summarize_with_one_line(project: Path, tmp_path: Path) -> None:
    copy = tmp_path / "project"
    shutil.copytree(project, copy)
    (copy / "results" / "round-2" / "history.json").write_text('{"round": "two"}', encoding="utf-8")
    code, out = obelize_bench("summarize", cwd=copy)
    assert code == 1
    assert out.splitlines()[0].startswith(
        f"obelize-bench summarize: {Path('results/round-2/history.json')}: not a history"
    )


def test_releases_order_by_version_not_by_text() -> None:
    runs = [run(version, (), tool={"version": version}) for version in ("0.10.0", "0.9.0", "0.9.0rc1", "1.0")]
    assert [r.tool_version for r in sorted(runs, key=order_key)] == ["0.9.0rc1", "0.9.0", "0.10.0", "1.0"]


def test_commits_of_one_version_order_by_their_date_whatever_the_run_order_or_the_offset() -> None:
    older = run("b", (), tool={"version": "0.9.0.dev0", "commit": "b" * 40, "commit_date": "2026-11-02T09:00:00+02:00"},
              started_at="2026-12-02T00:00:00Z")  # fmt: skip
    newer = run("a", (), tool={"version": "0.9.0.dev0", "commit": "a" * 40, "commit_date": "2026-11-02T08:30:00+00:00"},
                started_at="2026-12-01T00:00:00Z")  # fmt: skip
    assert [r.run_id for r in sorted([newer, older], key=order_key)] == ["b", "a"]  # 07:00Z before 08:30Z
    assert release_label(older) == "0.9.0.dev0 @bbbbbbb"


def test_bad_input_is_one_line_and_a_hostile_run_is_left_out_named(project: Path, tmp_path: Path) -> None:
    copy = tmp_path / "project"
    shutil.copytree(project, copy)
    policy = copy / "cases" / "promotion.yaml"
    policy.write_text("metric: [\n", encoding="utf-8")
    code, out = _history(copy)
    assert code == 1 and out.splitlines() == [out.splitlines()[0]]
    assert (
        out.startswith(f"obelize-bench history: {Path('cases/promotion.yaml')}")
        and not (copy / "results" / "round-2" / "history.json").exists()
    )
    shutil.copy(project / "cases" / "promotion.yaml", policy)
    hostile = copy / "results" / "round-2" / "runs" / RUN_07
    (hostile / "owner00__repo.json").unlink()
    (hostile / "owner00__repo.json").symlink_to(hostile / "owner01__repo.json")
    code, out = _history(copy)
    assert code == 0, out
    assert f"left out: run {RUN_07}: runs/{RUN_07}/owner00__repo.json: a symlinked record is refused" in out
    history = json.loads((copy / "results" / "round-2" / "history.json").read_text(encoding="utf-8"))
    assert [r["run"] for r in history["releases"]] == [RUN_06, FIRST_07, RUN_08]  # the earlier 0.7.0 stands in


def test_a_run_that_named_rows_out_of_reach_is_a_release_of_the_rows_it_measured(tmp_path: Path) -> None:
    root = make_project(tmp_path / "reach")
    away = case_id(3)
    for run_id, version in (("20261201T100000Z-aaaaaa", "0.7.0"), ("20261201T110000Z-bbbbbb", "0.8.0")):
        folder = write_run(root, run_id, {}, default="u", version=version, unreachable={away: "no snapshot"})
        for name in (f"{away}.json", f"{away}.attempt-2.json"):
            (folder / name).unlink()
    code, text = obelize_bench(
        "history", "--round", "2", "--cases", root / "cases" / "cases.yaml", "--results", root / "results"
    )
    assert code == 0, text
    assert "left out" not in text
    assert "obelize 0.7.0: run 20261201T100000Z-aaaaaa" in text and "obelize 0.8.0: run 20261201T110000Z-bbbbbb" in text
