"""The controller's side of a round: the only place that writes results and summaries.

Workers hand each record over on the test report as a JSON string; here it is written
atomically the moment it arrives, so an interrupted round keeps every case it finished.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_obelize_bench.cases import Case
from pytest_obelize_bench.context import RoundContext
from pytest_obelize_bench.record import (
    TIERS,
    Record,
    RecordError,
    parse_record,
    record_file_name,
    write_atomically,
)


class Controller:
    """Registered as a plugin on the controller (or the only process without xdist)."""

    def __init__(self, config: pytest.Config, context: RoundContext, gate: set[str]) -> None:
        self.config = config
        self.context = context
        self.records: dict[str, Record] = {}
        self.repeats: list[Record] = []
        self.written: list[Path] = []
        self.unreadable: list[str] = []
        self.gate = gate
        self.gated: list[str] = []
        self.round_lines: list[str] = []
        self.summary_error: str | None = None
        from pytest_obelize_bench.missing import Watch
        from pytest_obelize_bench.plugin import COLLECT_PATHS_KEY

        cases = {case.id: case for found in config.stash.get(COLLECT_PATHS_KEY, {}).values() for case in found}
        self.watch = Watch(cases)
        self.interrupted_missing: int | None = None

    @property
    def writes_results(self) -> bool:
        return self.context.mode == "round"

    def pytest_runtest_logstart(self, nodeid: str, location: object) -> None:
        self.watch.start(nodeid)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        text = getattr(report, "bench_record", None)
        if text is None:
            lost = self.watch.lost(report.nodeid, report.when, report.longrepr)
            if lost is not None:
                case, reason, detail = lost
                self._write_lost(report.nodeid, case, reason, detail)
            return
        try:
            record = parse_record(text, report.nodeid)
        except RecordError as exc:
            self.unreadable.append(str(exc))
            return
        self._accept(record, getattr(report, "bench_artefacts", None), report.nodeid)

    def _write_lost(self, nodeid: str, case: Case, reason: str, detail: str) -> None:
        from pytest_obelize_bench.missing import attempt_of, lost_record

        record = lost_record(case, self.context, step="harness", reason=reason, detail=detail, attempt=attempt_of(nodeid))
        self._accept(record, None, nodeid)

    def _accept(self, record: Record, artefacts: str | None, nodeid: str) -> None:
        self.watch.record(nodeid)
        # The first attempt is the case's record; repeats are kept apart (--bench-repeat).
        if record.attempt_number == 1:
            self.records[record.case] = record
        else:
            self.repeats.append(record)
        if self.writes_results:
            name = record_file_name(record.case, record.attempt)
            path = self.context.round_results / name
            write_atomically(path, record.to_json())
            self.written.append(path)
            if artefacts:
                write_atomically(self.context.round_results / "artefacts" / name, artefacts)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
        for nodeid, case in self.watch.unfinished():
            reason = "interrupted" if interrupted else "harness_crashed"
            self._write_lost(nodeid, case, reason, "the session ended while this case ran; finished records are kept")
        if interrupted:
            self.interrupted_missing = len(set(self.watch.cases) - set(self.records))
        if self.writes_results and self.records:
            self._finish_round(write=not self.config.getoption("--bench-no-summary"))
        self.gated = sorted({r.case for r in (*self.records.values(), *self.repeats) if r.tier in self.gate})
        if self.gated and session.exitstatus == pytest.ExitCode.OK:
            from pytest_obelize_bench.plugin import EXIT_TIER_GATE

            session.exitstatus = EXIT_TIER_GATE

    def _finish_round(self, *, write: bool) -> None:
        """Rewrite the round's block and summary.json (unless told not to), and keep the terminal lines."""
        from pytest_obelize_bench.cases import CaseFileError, load_case_file
        from pytest_obelize_bench.evidence import EvidenceError
        from pytest_obelize_bench.summary import load_round, terminal_lines, write_round_outputs

        results = Path(self.context.results_dir)
        try:
            case_file = load_case_file(self.context.cases_path)
            number = self.context.round or case_file.round
            if write:
                write_round_outputs(results, case_file, number)
            data = load_round(results, case_file, number)
        except (CaseFileError, RecordError, EvidenceError, OSError) as exc:
            self.summary_error = str(exc).splitlines()[0]
            return
        self.round_lines = terminal_lines(data, results, Path(self.context.work_root) / self.context.round_label)

    # -- terminal ---------------------------------------------------------------------

    def terminal_summary(self, terminal: Any, *, list_tiers: bool) -> None:
        if not self.records and not self.unreadable and self.interrupted_missing is None:
            return
        terminal.write_sep("=", "obelize-bench")
        if list_tiers:
            for tier in TIERS:
                cases = sorted(case for case, record in self.records.items() if record.tier == tier)
                if cases:
                    terminal.write_line(f"{tier} ({len(cases)}): {', '.join(cases)}")
        if self.context.mode == "round":
            for line in self.round_lines:
                terminal.write_line(line)
            terminal.write_line(f"records written this session: {len(self.written)} in {self.context.round_results}")
        else:
            counts = {tier: sum(r.tier == tier for r in self.records.values()) for tier in TIERS}
            terminal.write_line(
                "fixtures: " + ", ".join(f"{n} {tier}" for tier, n in counts.items() if n) + " (nothing written under results/)"
            )
        if self.interrupted_missing is not None:
            terminal.write_line(
                f"the round was interrupted: {self.interrupted_missing} of {len(self.watch.cases)} cases have no record",
                red=True,
                bold=True,
            )
        for problem in self.unreadable:
            terminal.write_line(f"unreadable record: {problem}", red=True)
        if self.summary_error:
            terminal.write_line(f"summary not written: {self.summary_error}", red=True)
        if self.gated:
            terminal.write_line(
                f"--bench-fail-on={','.join(sorted(self.gate))}: {', '.join(self.gated)}", red=True, bold=True
            )
