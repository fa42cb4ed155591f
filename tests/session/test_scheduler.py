"""Under ``-n``, a benchmark session deals its first cases in turn and then gives each next case to the
worker that has just finished one, so the longest cases (first in its order) start on different workers."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest
from xdist.scheduler import LoadScheduling  # type: ignore[import-untyped]
from xdist.workermanage import WorkerController  # type: ignore[import-untyped]

from pytest_obelize_bench.session.scheduler import FreeWorkerScheduling, first_deal, refill
from tests.helpers import rounds
from tests.helpers.runs import manifest_data, timed, write_run


def test_the_first_items_are_dealt_in_turn_two_to_a_worker() -> None:
    assert first_deal(10, 2) == [0, 1, 0, 1]
    assert first_deal(3, 2) == [0, 1, 0]
    assert first_deal(7, 3) == [0, 1, 2, 0, 1, 2]
    assert first_deal(0, 2) == []
    assert first_deal(4, 0) == []


def test_a_worker_is_topped_up_to_two_items() -> None:
    assert [refill(held) for held in (0, 1, 2, 3)] == [2, 1, 0, 0]


@dataclass
class _Gateway:
    id: str


@dataclass(eq=False)
class _Worker:
    """What a scheduler asks of xdist's WorkerController: the items it is sent, and its shutdown."""

    name: str
    sent: list[list[int]] = field(default_factory=list)
    shutting_down: bool = False

    @property
    def gateway(self) -> _Gateway:
        return _Gateway(self.name)

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.append(list(indices))

    def shutdown(self) -> None:
        self.shutting_down = True


class _Config:
    """The two options a load scheduler reads: two workers, no chunk limit."""

    def getvalue(self, name: str) -> Any:
        return {"tx": ["2*popen"]}[name]

    def getoption(self, name: str) -> Any:
        return {"maxschedchunk": None}[name]


def _scheduled(kind: type[LoadScheduling], items: int) -> tuple[LoadScheduling, _Worker, _Worker]:
    scheduler = kind(cast(pytest.Config, _Config()))
    first, second = _Worker("gw0"), _Worker("gw1")
    ids = [f"cases.yaml::case{index}" for index in range(items)]
    for worker in (first, second):
        scheduler.add_node(cast(WorkerController, worker))
    for worker in (first, second):
        scheduler.add_node_collection(cast(WorkerController, worker), ids)
    scheduler.schedule()
    return scheduler, first, second


def test_xdist_load_gives_the_first_worker_the_two_longest_and_this_scheduler_does_not() -> None:
    _, first, second = _scheduled(LoadScheduling, 10)
    assert (first.sent, second.sent) == ([[0, 1]], [[2, 3]])  # why this module exists
    _, first, second = _scheduled(FreeWorkerScheduling, 10)
    assert (first.sent, second.sent) == ([[0, 2]], [[1, 3]])


def test_the_next_item_goes_to_the_worker_that_finished_and_the_end_shuts_each_down() -> None:
    scheduler, first, second = _scheduled(FreeWorkerScheduling, 6)
    done = cast(WorkerController, second)
    scheduler.mark_test_complete(done, 1)
    assert (first.sent, second.sent) == ([[0, 2]], [[1, 3], [4]])
    scheduler.mark_test_complete(done, 3)
    assert second.sent[-1] == [5]
    assert not first.shutting_down and not second.shutting_down
    scheduler.mark_test_complete(cast(WorkerController, first), 0)
    assert first.shutting_down and first.sent == [[0, 2]]  # nothing left: it runs what it holds, then ends
    scheduler.mark_test_complete(done, 4)
    assert second.shutting_down
    for worker, index in ((first, 2), (second, 5)):
        scheduler.mark_test_complete(cast(WorkerController, worker), index)
    assert scheduler.tests_finished


def test_fewer_items_than_two_a_worker_are_all_dealt_and_every_worker_told_to_end() -> None:
    scheduler, first, second = _scheduled(FreeWorkerScheduling, 3)
    assert (first.sent, second.sent) == ([[0, 2]], [[1]])
    assert first.shutting_down and second.shutting_down and not scheduler.pending


def test_what_a_dead_worker_held_goes_to_another_after_what_was_waiting() -> None:
    scheduler, first, second = _scheduled(FreeWorkerScheduling, 6)
    crashed = scheduler.remove_node(cast(WorkerController, first))
    assert crashed == "cases.yaml::case0"  # the item it was running is reported as its crash
    for index in (1, 3, 4):
        scheduler.mark_test_complete(cast(WorkerController, second), index)
    assert second.sent == [[1, 3], [4], [5], [2]]


@pytest.mark.slow
def test_a_round_under_two_workers_starts_its_two_longest_cases_on_different_workers(tmp_path: Path) -> None:
    """Through the plugin and xdist: five cases that stop at their fetch, ordered by a seeded run.
    Under xdist's own ``load`` the first worker would get the two longest (the first two items)."""
    project = tmp_path / "project"
    owners = ["ann", "bob", "cat", "dan", "eve"]
    rows = rounds.unfetchable_rows(owners, tmp_path)
    rounds.write_case_file(project / "cases" / "cases.yaml", rows)
    seconds = {"ann": 1.0, "bob": 2.0, "cat": 50.0, "dan": 40.0, "eve": 3.0}  # cat, then dan, are longest
    records = [timed(f"{owner}__trap-vertex", value) for owner, value in seconds.items()]
    folder = project / "results" / "round-2" / "runs" / "20261201T000000Z-aaaaaa"
    write_run(folder, records, manifest_data([each.case for each in records], "20261201T000000Z-aaaaaa"))
    done = rounds.run_pytest(
        project,
        "--bench-round=2",
        "--bench-allow-dirty",
        "--bench-no-preflight",
        "--bench-interpreter=minor",
        f"--bench-work={tmp_path / 'work'}",
        "-v",
        "-n",
        "2",
    )
    output = done.stdout + done.stderr
    worker = dict((case, gw) for gw, case in re.findall(r"\[(gw\d)\] .*?cases\.yaml::(\w+)__trap-vertex", done.stdout))
    assert set(worker) == set(owners), output[-3000:]
    assert worker["cat"] != worker["dan"], output[-3000:]
