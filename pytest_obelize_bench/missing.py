"""Records for cases that started and ended without one: no collected case is ever silent.

A worker killed with SIGKILL, an item failed by pytest-timeout's thread method, a stage that
raised past the pipeline, an interrupted session: each leaves a case that started and delivered
no record.  The controller notices it here and writes that case's ``error`` record with what is
known (the case, the round's provenance, the reason), so no published table says "no record"
for a case that ran.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pytest_obelize_bench.cases import Case
from pytest_obelize_bench.context import RoundContext
from pytest_obelize_bench.record import Record

#: xdist's report for the item a worker was running when it died.
CRASH_PHASE = "???"


def case_id_of(nodeid: str) -> str:
    """The case an item's node id names: the item's name, without a parameter suffix."""
    return nodeid.rsplit("::", 1)[-1].split("[", 1)[0]


@dataclass
class Watch:
    """Which cases started and which delivered a record, on the controller."""

    cases: dict[str, Case]
    started: dict[str, str] = field(default_factory=dict)
    recorded: set[str] = field(default_factory=set)

    def start(self, nodeid: str) -> None:
        case_id = case_id_of(nodeid)
        if case_id in self.cases:
            self.started[nodeid] = case_id

    def record(self, case_id: str) -> None:
        self.recorded.add(case_id)

    def lost(self, nodeid: str, when: str, longrepr: object) -> tuple[Case, str, str] | None:
        """After a report: the case, reason and detail when its item ended with no record."""
        case_id = self.started.get(nodeid)
        if case_id is None or case_id in self.recorded:
            return None
        if when == CRASH_PHASE:
            return self.cases[case_id], "worker_lost", _first_line(longrepr, "the worker running this case died")
        if when == "teardown":
            return self.cases[case_id], "harness_crashed", "the item ended without a record; see its pytest report"
        return None

    def unfinished(self) -> list[Case]:
        """Cases that started and have no record (the session is ending)."""
        return [self.cases[c] for c in sorted(set(self.started.values()) - self.recorded)]


def _first_line(longrepr: object, fallback: str) -> str:
    text = str(longrepr or "").strip().splitlines()
    return text[0][:200] if text else fallback


def lost_record(case: Case, context: RoundContext, *, step: str, reason: str, detail: str) -> Record:
    """The ``error`` record of a case that produced none, with the round's provenance."""
    from pytest_obelize_bench.errors import CaseError
    from pytest_obelize_bench.pipeline import CaseRun, _utc_now, build_record

    run = CaseRun(case=case, context=context, run_at=_utc_now())
    run.error = CaseError(step, reason, detail)
    return build_record(run)
