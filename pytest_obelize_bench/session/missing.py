"""Records for cases that started and ended without one: no collected case is ever silent.

A worker killed with SIGKILL, an item failed by pytest-timeout's thread method, a stage that
raised past the pipeline, an interrupted session: each leaves a case that started and delivered
no record.  The controller notices it here and writes that case's ``error`` record with what is
known (the case, the round's provenance, the reason), so no published table says "no record"
for a case that ran.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench._util.clock import utc_now
from pytest_obelize_bench.case.context import RoundContext
from pytest_obelize_bench.case.kinds import kind_for
from pytest_obelize_bench.case.pipeline import build_record
from pytest_obelize_bench.case.run import CaseRun
from pytest_obelize_bench.casefile.cases import Case
from pytest_obelize_bench.grading.attempts import parse_item_name
from pytest_obelize_bench.grading.record import Record

#: xdist's report for the item a worker was running when it died.
CRASH_PHASE = "???"


def case_id_of(nodeid: str) -> str:
    """The case an item's node id names: the item's name, without its attempt suffix."""
    return parse_item_name(nodeid.rsplit("::", 1)[-1])[0]


def attempt_of(nodeid: str) -> int:
    """The attempt an item's node id names (``case[attempt-2]``); 1 without a suffix."""
    return parse_item_name(nodeid.rsplit("::", 1)[-1])[1]


@dataclass
class Watch:
    """Which items started and which delivered a record, on the controller (keyed by node id)."""

    cases: dict[str, Case]
    started: dict[str, str] = field(default_factory=dict)
    recorded: set[str] = field(default_factory=set)

    def start(self, nodeid: str) -> None:
        case_id = case_id_of(nodeid)
        if case_id in self.cases:
            self.started[nodeid] = case_id

    def record(self, nodeid: str) -> None:
        self.recorded.add(nodeid)

    def lost(self, nodeid: str, when: str, longrepr: object) -> tuple[Case, str, str] | None:
        """After a report: the case, reason and detail when its item ended with no record."""
        case_id = self.started.get(nodeid)
        if case_id is None or nodeid in self.recorded:
            return None
        if when == CRASH_PHASE:
            return self.cases[case_id], "worker_lost", _first_line(longrepr, "the worker running this case died")
        if when == "teardown":
            return self.cases[case_id], "harness_crashed", "the item ended without a record; see its pytest report"
        return None

    def unfinished(self) -> list[tuple[str, Case]]:
        """Items that started and have no record (the session is ending), with their case."""
        return [(nodeid, self.cases[self.started[nodeid]]) for nodeid in sorted(set(self.started) - self.recorded)]


def _first_line(longrepr: object, fallback: str) -> str:
    text = str(longrepr or "").strip().splitlines()
    return text[0][:200] if text else fallback


def lost_record(case: Case, context: RoundContext, *, step: str, reason: str, detail: str, attempt: int = 1) -> Record:
    """The ``error`` record of a case that produced none, with the round's provenance."""
    run = CaseRun(case=case, context=context, run_at=utc_now(), kind=kind_for(context), attempt_number=attempt)
    run.error = CaseError(step, reason, detail)
    return build_record(run)
