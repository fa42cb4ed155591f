"""The controller's side of a round: the only place that writes results and summaries.

Workers hand each record over on the test report as a JSON string. Here it is written
atomically into this session's run folder the moment it arrives, so an interrupted round keeps
every case it finished. Only at the end, and only when the run is one complete round with one
tool, is it published as the round (``records/publication.py``); the terminal summary is built from the
records received in this session, never from files on disk.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_obelize_bench.case.context import RoundContext
from pytest_obelize_bench.casefile.cases import Case, CaseFile
from pytest_obelize_bench.casefile.reviews import ReviewBook
from pytest_obelize_bench.grading.attempts import attempt_stem
from pytest_obelize_bench.grading.record import (
    TIERS,
    Record,
    RecordError,
    parse_record,
)
from pytest_obelize_bench.isolation.removal_queue import RemovalQueue
from pytest_obelize_bench.isolation.workspace import keeps_checkout
from pytest_obelize_bench.options.read import options_of
from pytest_obelize_bench.records.runs import BESIDE_SUFFIXES, add_record
from pytest_obelize_bench.report.round.case_entries import RoundData
from pytest_obelize_bench.report.round.publish_round import load_writers
from pytest_obelize_bench.report.round.terminal_lines import terminal_lines
from pytest_obelize_bench.session.junit import rewrite_junit
from pytest_obelize_bench.session.missing import Watch, attempt_of, lost_record
from pytest_obelize_bench.session.ordering import case_seconds
from pytest_obelize_bench.session.preflight import EarlyInterpreters, run_preflight
from pytest_obelize_bench.session.progress import Progress, terminal_stream
from pytest_obelize_bench.session.runlife import (
    finish_run,
    keep_resumed,
    open_manifest,
    recover,
    start_run,
    stopped_at_preflight,
)
from pytest_obelize_bench.session.stash_keys import (
    COLLECT_PATHS_KEY,
    ONLY_WORKERINPUT_KEY,
    ORDER_WORKERINPUT_KEY,
    ROUND_FILES_KEY,
)
from pytest_obelize_bench.session.tier_outcome import EXIT_PREFLIGHT, EXIT_RESULTS_UNWRITABLE, EXIT_TIER_GATE


class Controller:
    """Registered as a plugin on the controller (or the only process without xdist)."""

    def __init__(self, config: pytest.Config, context: RoundContext, gate: set[str]) -> None:
        self.config = config
        self.options = options_of(config)
        self.context = context
        self.records: dict[str, Record] = {}
        self.written: list[Path] = []
        #: case id -> ``gw0@host:<logs dir>`` for records that came from a remote worker (remote.py)
        self.remote_logs: dict[str, str] = {}
        self.unreadable: list[str] = []
        self.gate = gate
        self.gated: list[str] = []
        self.round_lines: list[str] = []
        self.publish_lines: list[str] = []
        self.summary_error: str | None = None
        self.run_id: str | None = None
        self.run_dir: Path | None = None
        #: the items a rerun or resume runs again (None: every selected item)
        self.only: list[str] | None = None
        #: a rerun's records to replace, by stem (``case`` or ``case.attempt-N``)
        self.rerun_stems: list[str] | None = None
        self.manifest: Any = None
        self.progress: Any = None
        #: repeats (--bench-repeat attempts after the first), kept apart from the headline records
        self.repeats: list[Record] = []

        cases = {case.id: case for found in config.stash.get(COLLECT_PATHS_KEY, {}).values() for case in found}
        self.watch = Watch(cases)
        self.interrupted_missing: int | None = None
        #: hook: resume (resume.py): the records --bench-resume keeps, by case
        self.kept: dict[str, Record] = {}
        #: xdist workers were asked for, but nothing runs again, so none was started (plugin.py)
        self.workers_skipped = False
        #: whether this session named a new run (not a rerun or a resume of an earlier one)
        self.new_run = False
        #: the one line saying the results folder could not be written (the session then stops)
        self.results_error: str | None = None
        self.session: pytest.Session | None = None
        #: finished checkouts, removed off the path of the reports (removal_queue.py)
        self.removals = RemovalQueue()
        #: each case's seconds in the round's latest run: the order the cases run in (ordering.py)
        self.case_seconds: dict[str, float] = {}
        if self.context.mode == "round" and self.context.round is not None:
            self.case_seconds = case_seconds(Path(self.context.results_dir), self.context.round, cases)
        if self.writes_results:
            start_run(self)
        #: the interpreter probes of the preflight, started now (preflight.py)
        self.early_interpreters: EarlyInterpreters | None = None
        if self.writes_results and self.options.preflight:
            away = self.unreachable
            runnable = [case for case in cases.values() if case.retired is None and case.id not in away]
            self.early_interpreters = EarlyInterpreters(runnable, self.context)

    @property
    def case_file(self) -> CaseFile:
        """The round's case file as the session read it when it started (``startup.RoundFiles``)."""
        found = self.config.stash[ROUND_FILES_KEY].case_file
        assert found is not None, "a round reads its case file at configure"
        return found

    @property
    def unreachable(self) -> dict[str, str]:
        """The rows ``--bench-unreachable`` named out of reach, with why (``startup.RoundFiles``)."""
        return dict(self.config.stash[ROUND_FILES_KEY].unreachable)

    @property
    def reviews(self) -> ReviewBook:
        found = self.config.stash[ROUND_FILES_KEY].reviews
        assert found is not None, "a round reads its reviews at configure"
        return found

    @property
    def writes_results(self) -> bool:
        return self.context.mode == "round" and not self.options.collect_only

    # -- the run -------------------------------------------------------------------------

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session
        if self.run_dir is None:
            return

        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        for line in recover(self):
            if terminal is not None:
                terminal.write_line(f"obelize-bench: {line}", yellow=True)
        open_manifest(self)
        if self.kept:  # hook: resume
            keep_resumed(self)
        self._start_progress()

    def _start_progress(self) -> None:
        """The live status line, on a terminal only (a log file gets the per-case lines instead)."""
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is None or not getattr(terminal, "isatty", False):
            return

        round_dir = Path(self.context.work_root) / self.context.round_label
        self.progress = Progress(round_dir, list(self.watch.cases), terminal_stream(), lambda: set(self.records))
        self.progress.start()

    def preflight_cases(self, cases: list[Any]) -> None:
        """Called once by the kernel with the cases this session will run (``kernel.py``)."""
        if not self.writes_results or not self.options.preflight:
            return

        # one check per case, however many attempts of it the session runs
        wanted = list({case.id: case for case in cases if case is not None and case.retired is None}.values())
        workers = int(getattr(self.config.option, "numprocesses", None) or 1)
        keep_all = self.options.keep == "all"
        problems = run_preflight(
            wanted, self.context, workers=workers, keep_all=keep_all, early=self.early_interpreters
        )
        if not problems:
            return
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        for line in problems:
            if terminal is not None:
                terminal.write_line(f"preflight: {line}", red=True)

        stopped_at_preflight(self)

        pytest.exit(
            f"preflight failed for {len(problems)} case(s); nothing ran (--bench-repo-cache=DIR supplies "
            "repositories offline, --bench-interpreter=minor uses this machine's interpreters; "
            "--bench-no-preflight runs anyway)",
            returncode=EXIT_PREFLIGHT,
        )

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        if self.only is not None:
            node.workerinput[ONLY_WORKERINPUT_KEY] = list(self.only)
        node.workerinput[ORDER_WORKERINPUT_KEY] = dict(self.case_seconds)

    # -- records as they arrive -------------------------------------------------------------

    def pytest_runtest_logstart(self, nodeid: str, location: object) -> None:
        self.watch.start(nodeid)
        if self.writes_results and self.options.publish:
            # While a worker runs the first case: neither before the workers start nor after the
            # last case (imported once; every later call finds them loaded).
            load_writers()

    @pytest.hookimpl(trylast=True)
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
        remote_logs = getattr(report, "bench_logs", None)  # remote.py: a remote worker's logs stay there
        if isinstance(remote_logs, str):
            self.remote_logs[record.case] = remote_logs[:1000]
        beside = getattr(report, "bench_beside", None)
        self._accept(record, text, getattr(report, "bench_artefacts", None), report.nodeid, beside)

    def _write_lost(self, nodeid: str, case: Case, reason: str, detail: str) -> None:
        """The error record of an item that ended without one (``missing.py``)."""
        record = lost_record(
            case, self.context, step="harness", reason=reason, detail=detail, attempt=attempt_of(nodeid)
        )
        self._accept(record, record.to_json(), None, nodeid)

    def _accept(self, record: Record, text: str, artefacts: str | None, nodeid: str, beside: object = None) -> None:
        self.watch.record(nodeid)
        # The first attempt is the case's record; repeats are kept apart (--bench-repeat).
        if record.attempt_number == 1:
            self.records[record.case] = record
        else:
            self.repeats.append(record)
        if record.tier == "error":
            # pytest's last-failed cache: ``--lf`` reruns exactly the cases that errored.
            lastfailed = self.config.pluginmanager.get_plugin("lfplugin")
            if lastfailed is not None:
                lastfailed.lastfailed[nodeid] = True
        if self.run_dir is not None and self.results_error is None:
            name = attempt_stem(record.case, record.attempt)
            try:
                given = beside if isinstance(beside, dict) else {}
                kept = {k: v for k, v in given.items() if k in BESIDE_SUFFIXES[1:] and isinstance(v, str)}
                path = add_record(self.run_dir, name, text, artefacts, kept)
            except OSError as exc:
                self._results_unwritable(exc)
                return
            self.written.append(path)
            self._tidy(record)

    def _results_unwritable(self, exc: OSError) -> None:
        """The results folder cannot take a record (a full disk, say): stop the session cleanly,
        keeping every record already written; one line says where and why."""
        where = exc.filename or self.run_dir
        self.results_error = (
            f"results: cannot write {where}: {exc.strerror or exc}; the session stopped, "
            f"keeping the {len(self.written)} record(s) already written in {self.run_dir}"
        )
        if self.session is not None:
            self.session.shouldstop = self.results_error

    def _tidy(self, record: Record) -> None:
        """``--bench-keep``: remove a finished case's checkout and venv (its logs stay)."""
        if record.case in self.remote_logs:  # that worker tidied its own disk
            return
        if keeps_checkout(self.options.keep, record.tier == "error"):
            return

        folder = attempt_stem(record.case, record.attempt)
        self.removals.remove(Path(self.context.work_root), self.context.round_label, folder)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.progress is not None:
            self.progress.stop()
        interrupted = int(exitstatus) == int(pytest.ExitCode.INTERRUPTED)
        for nodeid, case in self.watch.unfinished():
            reason = "interrupted" if interrupted else "harness_crashed"
            self._write_lost(nodeid, case, reason, "the session ended while this case ran; finished records are kept")
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        for line in self.removals.drain():  # the work root as tidy as --bench-keep says, before publishing
            if terminal is not None:
                terminal.write_line(f"obelize-bench: a finished checkout was left in the work root: {line}")
        if interrupted:
            self.interrupted_missing = len(set(self.watch.cases) - set(self.records))
        if self.new_run and self.run_dir is not None and not session.items and not self.records:
            # -k or -m that matched no case: nothing ran, so no run is left for `runs` to list
            shutil.rmtree(self.run_dir, ignore_errors=True)
            if terminal is not None:
                terminal.write_line(f"obelize-bench: no case was selected, so run {self.run_id} was not kept")
            self.run_dir = None
        if self.run_dir is not None and self.manifest is not None and not self.manifest.stopped:
            finish_run(self, interrupted=interrupted)
        if self.records and self.context.mode == "round":
            self._terminal_figures()
        xml = getattr(self.config.option, "xmlpath", None)
        if xml and self.context.mode == "round":  # a fixture at its expected tier is a pass there too
            rewrite_junit(Path(xml), self.records, Path(self.context.cases_path).stem)
        if self.kept and session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:  # hook: resume: all kept
            session.exitstatus = pytest.ExitCode.OK
        if self.results_error is not None:
            session.exitstatus = EXIT_RESULTS_UNWRITABLE
        self.gated = sorted({r.case for r in (*self.records.values(), *self.repeats) if r.tier in self.gate})
        if self.gated and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = EXIT_TIER_GATE

    def _terminal_figures(self) -> None:
        case_file = self.case_file
        number = int(self.context.round or case_file.round)
        data = RoundData(round=number, cases=list(case_file.cases), records=dict(self.records))
        self.round_lines = terminal_lines(data)

    # -- terminal ---------------------------------------------------------------------

    def _remote_log_lines(self) -> list[str]:
        """``logs on gw0@host: <dir>``, once per remote worker (remote.py)."""
        folders = {where.rpartition("/")[0] for where in self.remote_logs.values()}
        return [f"logs on {folder.replace(':', ': ', 1)}" for folder in sorted(folders)]

    def _case_lines(self, logs: Path, *, list_tiers: bool) -> list[str]:
        """The cases per tier (with ``-rT``), then each errored case with where its logs are."""
        lines = []
        if list_tiers:
            for tier in TIERS:
                cases = sorted(case for case, record in self.records.items() if record.tier == tier)
                if cases:
                    lines.append(f"{tier} ({len(cases)}): {', '.join(cases)}")
        for case, record in sorted(self.records.items()):
            if record.error is not None:
                where_logs = self.remote_logs.get(case) or logs / (case + ".logs")
                lines.append(f"{case}: {record.error.step}: {record.error.reason}; logs: {where_logs}")
        return lines

    def terminal_summary(self, terminal: Any, *, list_tiers: bool) -> None:
        if not self.records and not self.unreadable and self.interrupted_missing is None and not self.results_error:
            return
        terminal.write_sep("=", "obelize-bench")
        logs = Path(self.context.work_root) / self.context.round_label
        for line in self._case_lines(logs, list_tiers=list_tiers):
            terminal.write_line(line)
        if self.context.mode == "round":
            for line in self.round_lines:
                terminal.write_line(line)
            where = self.run_dir if self.run_dir is not None else self.context.round_results
            terminal.write_line(f"records written this session: {len(self.written)} in {where}")
            if self.kept:  # hook: resume
                terminal.write_line(f"resumed: {len(self.kept)} case(s) kept from run {self.run_id}, not run again")
            if self.workers_skipped:
                terminal.write_line("no case runs again, so no xdist worker was started")
            terminal.write_line(f"logs: {logs}")
            for line in self.publish_lines:
                published = " published as round " in line
                terminal.write_line(line, green=published, yellow=not published, bold=not published)
        else:
            counts = {tier: sum(r.tier == tier for r in self.records.values()) for tier in TIERS}
            terminal.write_line(
                "fixtures: "
                + ", ".join(f"{n} {tier}" for tier, n in counts.items() if n)
                + " (a fixture passes when it reaches the tier its expected.json names, error included; "
                "nothing written under results/)"
            )
            terminal.write_line(f"logs: {logs}")
        for line in self._remote_log_lines():
            terminal.write_line(line)
        if self.interrupted_missing is not None:
            terminal.write_line(
                f"the round was interrupted: {self.interrupted_missing} of {len(self.watch.cases)} cases "
                "have no record",
                red=True,
                bold=True,
            )
        for problem in self.unreadable:
            terminal.write_line(f"unreadable record: {problem}", red=True)
        if self.results_error:
            terminal.write_line(self.results_error, red=True, bold=True)
        if self.summary_error:
            terminal.write_line(f"summary not written: {self.summary_error}", red=True)
        if self.gated:
            terminal.write_line(
                f"--bench-fail-on={','.join(sorted(self.gate))}: {', '.join(self.gated)}", red=True, bold=True
            )
