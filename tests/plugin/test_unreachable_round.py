"""A round whose case file names a repository this machine cannot reach, through the real plugin.

``--bench-unreachable`` names the row before anything runs, with its reason; the run records it and
is published as a whole round of the rows within reach, and the round's block says what was not
measured and why. ``-k`` selecting the same rows stays a partial run that is never published. Local
git origins stand in for GitHub; git, uv, the package index and obelize are real.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import rounds
from tests.helpers.bench_cli import obelize_bench

pytestmark = pytest.mark.usefixtures("index_uv_cache")

REACHED, GONE = "ok__refused", "gone__refused"
WHY = "no snapshot of the repository can be had"


def _project(root: Path) -> tuple[Path, Path]:
    """A round-2 project of two rows, the second's origin missing, and the pin list that says so."""
    project = root / "project"
    reached = rounds.case_row_from_fixture("refused", "ok", root)
    gone = rounds.unfetchable_rows(["gone"], root / "gone-origin")[0]
    gone["id"], gone["full_name"] = GONE, "gone/refused"
    rounds.write_case_file(project / "cases" / "cases.yaml", [reached, gone])
    pins = root / "pins.tsv"
    pins.write_text(
        "listed_in\tfull_name\tsha\tstate\n"
        f"cases/cases.yaml\tok/refused\t{reached['sha']}\tpacked\n"
        f"cases/cases.yaml\tgone/refused\t{gone['sha']}\t{WHY}\n",
        encoding="utf-8",
    )
    return project, pins


def _round(root: Path, *extra: str) -> dict[str, Any]:
    project, pins = _project(root)
    common = ["--bench-round=2", "--bench-allow-dirty", "--bench-interpreter=minor", f"--bench-work={root / 'work'}"]
    done = rounds.run_pytest(project, *common, *extra, f"--bench-unreachable={pins}")
    return {"project": project, "done": done, "round": project / "results" / "round-2"}


@pytest.fixture(scope="module", params=["serial", "-n 2"])
def named(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    extra = ("-n", "2") if request.param == "-n 2" else ()
    return _round(tmp_path_factory.mktemp("unreachable"), *extra)


def test_the_row_out_of_reach_is_named_at_the_start_and_not_run(named: dict[str, Any]) -> None:
    done = named["done"]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "obelize-bench: not run, out of reach here (1 rows, --bench-unreachable):" in done.stdout
    assert f"  {GONE}: {WHY}" in done.stdout
    assert f"::{GONE}" not in done.stdout and GONE not in rounds.read_records(rounds.only_run(named["round"]))


def test_the_run_records_the_row_and_its_reason_and_is_published_whole(named: dict[str, Any]) -> None:
    run = rounds.only_run(named["round"])
    manifest = json.loads((run / "run.json").read_text(encoding="utf-8"))
    assert manifest["unreachable"] == {GONE: WHY}
    assert manifest["cases_expected"] == [REACHED] and manifest["cases_recorded"] == [REACHED]
    note = json.loads((named["round"] / "publication.json").read_text(encoding="utf-8"))
    assert note["run"] == run.name and note["unreachable"] == {GONE: WHY}
    assert sorted(rounds.read_records(named["round"])) == [REACHED]


def test_runs_calls_the_run_complete_and_names_the_row_left_out(named: dict[str, Any]) -> None:
    code, text = obelize_bench(
        "runs", "--round", "2", "--cases", named["project"] / "cases" / "cases.yaml", "--results",
        named["project"] / "results",
    )  # fmt: skip
    assert code == 0, text
    assert "  complete  [unsupported 1]  PUBLISHED" in text
    assert f"  not run, out of reach when it started: {GONE}" in text


def test_the_round_block_says_what_was_measured_and_what_was_not(named: dict[str, Any]) -> None:
    document = (named["project"] / "results" / "BENCHMARK_RESULTS.md").read_text(encoding="utf-8")
    assert "**Measured here: 1 of 2 cases and 0 of 0 negative controls.**" in document
    assert f"* `{GONE}` (case, dev): {WHY}" in document


def test_a_resume_leaves_the_row_out_of_reach_out_and_starts_no_worker(tmp_path: Path) -> None:
    project, pins = _project(tmp_path)
    common = ["--bench-round=2", "--bench-allow-dirty", "--bench-interpreter=minor", f"--bench-unreachable={pins}"]
    first = rounds.run_pytest(project, *common, f"--bench-work={tmp_path / 'work'}")
    assert first.returncode == 0, first.stdout[-3000:]
    run = rounds.only_run(project / "results" / "round-2")
    before = json.loads((run / "run.json").read_text(encoding="utf-8"))
    done = rounds.run_pytest(project, *common, f"--bench-work={tmp_path / 'work2'}", "--bench-resume", "-n", "2")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "resumed: 1 case(s) kept" in done.stdout
    assert "no case runs again, so no xdist worker was started" in done.stdout
    manifest = json.loads((run / "run.json").read_text(encoding="utf-8"))
    # the resume is on record, and it reran nothing: the row out of reach was never run
    assert len(manifest["reruns"]) == len(before["reruns"]) + 1
    assert manifest["reruns"][-1]["kind"] == "resume" and manifest["reruns"][-1]["cases"] == []
    assert manifest["unreachable"] == {GONE: WHY} and manifest["cases_recorded"] == [REACHED]


def test_the_same_rows_chosen_with_k_are_not_a_whole_round(tmp_path: Path) -> None:
    project, _ = _project(tmp_path)
    done = rounds.run_pytest(
        project,
        "--bench-round=2",
        "--bench-allow-dirty",
        "--bench-interpreter=minor",
        f"--bench-work={tmp_path / 'work'}",
        "-k",
        REACHED,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert f"1 case(s) of the case file have no record ({GONE})" in done.stdout
    assert not (project / "results" / "round-2" / "publication.json").exists()


def test_a_bad_list_stops_the_round_with_one_line(tmp_path: Path) -> None:
    project, pins = _project(tmp_path)
    pins.write_text("full_name\tsha\nx/y\tabc\n", encoding="utf-8")
    done = rounds.run_pytest(project, "--bench-round=2", "--bench-allow-dirty", f"--bench-unreachable={pins}")
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert f"--bench-unreachable: {pins}: line 1: header: expected the columns state (tab-separated)" in done.stderr
    assert not (project / "results").exists()


def test_the_list_goes_with_a_round_or_a_frame(tmp_path: Path) -> None:
    project, pins = _project(tmp_path)
    done = rounds.run_pytest(project, "--fixtures-only", f"--bench-unreachable={pins}")
    assert done.returncode == 4
    expected = "--bench-unreachable names rows of a round's case file or a frame; it goes with --bench-round=N"
    assert expected in done.stderr
