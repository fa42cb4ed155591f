"""The order a round's cases run in: longest first by the round's latest run, the unknown first of all."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_obelize_bench.grading.record import Record
from pytest_obelize_bench.session.ordering import case_seconds, longest_first
from tests.helpers import rounds
from tests.helpers.runs import manifest_data, timed, write_run

#: Three cases of one round, in the case file's order.
CASES = ("ann__trap-vertex", "bob__trap-vertex", "cat__trap-vertex")


def _run(results: Path, run_id: str, *records: Record) -> Path:
    folder = results / "round-2" / "runs" / run_id
    return write_run(folder, records, manifest_data([each.case for each in records], run_id))


def test_the_longest_go_first_and_the_unknown_before_them_in_their_own_order() -> None:
    ids = ["a", "b", "c", "d", "e"]
    assert longest_first(ids, {"a": 1.0, "b": 9.0, "d": 3.0}) == ["c", "e", "b", "d", "a"]
    assert longest_first(ids, {}) == ids  # a first round: the case file's order
    assert longest_first(["x", "y"], {"x": 2.0, "y": 2.0}) == ["x", "y"]  # ties keep their order


def test_seconds_come_from_the_newest_run_that_recorded_a_case(tmp_path: Path) -> None:
    results = tmp_path / "results"
    assert case_seconds(results, 2, CASES) == {}  # no run yet
    _run(results, "20261201T000000Z-aaaaaa", timed(CASES[0], 1.0, 2.0), timed(CASES[1], 30.0))
    _run(results, "20261202T000000Z-bbbbbb", timed(CASES[0], 4.0, 0.5))
    (results / "round-2" / "runs" / "20261203T000000Z-cccccc").mkdir()  # started, recorded nothing
    assert case_seconds(results, 2, CASES) == {CASES[0]: 4.5}
    assert case_seconds(results, 2, CASES[1:]) == {CASES[1]: 30.0}  # the newest run that recorded one of them
    assert case_seconds(results, 3, CASES) == {}


def test_a_record_that_cannot_be_read_is_left_out(tmp_path: Path) -> None:
    results = tmp_path / "results"
    folder = _run(results, "20261201T000000Z-aaaaaa", timed(CASES[0], 1.0), timed(CASES[1], 2.0))
    (folder / f"{CASES[1]}.json").write_text("{not json", encoding="utf-8")
    assert case_seconds(results, 2, CASES) == {CASES[0]: 1.0}


@pytest.mark.slow
@pytest.mark.parametrize("workers", [None, "2"], ids=["serial", "xdist"])
def test_a_round_runs_its_cases_longest_first_by_its_latest_run(tmp_path: Path, workers: str | None) -> None:
    """Through the plugin: cases that stop at their fetch (their repositories are gone) run in the
    order the seeded run's durations give, serially and under two workers, which must collect alike."""
    project = tmp_path / "project"
    rows = rounds.unfetchable_rows([case.split("__")[0] for case in CASES], tmp_path)
    rounds.write_case_file(project / "cases" / "cases.yaml", rows)
    # bob took longest, ann least; cat has no record, so it counts as the longest of all.
    _run(project / "results", "20261201T000000Z-aaaaaa", timed(CASES[0], 1.0), timed(CASES[1], 5.0))
    extra = ("-n", workers) if workers else ("-p", "no:xdist")
    done = rounds.run_pytest(
        project,
        "--bench-round=2",
        "--bench-allow-dirty",
        "--bench-no-preflight",
        "--bench-interpreter=minor",
        f"--bench-work={tmp_path / 'work'}",
        "-v",
        *extra,
    )
    output = done.stdout + done.stderr
    assert "Different tests were collected" not in output, output[-3000:]
    ran = re.findall(r"cases\.yaml::(\w+__trap-vertex)", done.stdout)
    assert set(ran) == set(CASES), output[-3000:]
    if workers is None:  # one process: the order they ran in is the order shown
        assert list(dict.fromkeys(ran)) == [CASES[2], CASES[1], CASES[0]], output[-3000:]
    newest = rounds.run_folders(project / "results" / "round-2")[-1]
    assert set(rounds.read_records(newest)) == set(CASES), output[-3000:]
