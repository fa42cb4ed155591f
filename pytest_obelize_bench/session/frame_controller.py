"""The controller's side of a Gate 1 or dry-run session: preflight, collect, guard, publish.

Before anything runs, every selected repository must be reachable or cached (the round's
preflight, exit status 4). The records arrive on the reports; a whole frame is published only
when something was measured and no error is the machine's (unless
``--bench-publish-with-infra-errors``), with a note naming the session (``measure_publication.py``).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_obelize_bench._util.locks import LockBusy
from pytest_obelize_bench.dryrun import planned_fix
from pytest_obelize_bench.gate1 import scan_repository
from pytest_obelize_bench.isolation.reachability import Repository
from pytest_obelize_bench.measure.measure_publication import (
    dryrun_error_parts,
    infrastructure_repositories,
    refusal,
    scan_error_parts,
)
from pytest_obelize_bench.options.read import options_of
from pytest_obelize_bench.records.runs import new_run_id
from pytest_obelize_bench.session.kernel import partial_line
from pytest_obelize_bench.session.preflight import stop_unless_reachable

if TYPE_CHECKING:
    from pytest_obelize_bench.gate1.labels import AnswerKey
    from pytest_obelize_bench.measure.frame import Frame
    from pytest_obelize_bench.measure.repository_run import MeasureContext


class MeasureController:
    """The controller's side: collect the records, publish a whole frame, print the figures."""

    def __init__(
        self,
        config: pytest.Config,
        context: MeasureContext,
        frame: Frame,
        keys: dict[str, AnswerKey],
        frame_path: Path,
        unreachable: dict[str, str] | None = None,
    ) -> None:
        self.config = config
        #: the frame's repositories ``--bench-unreachable`` named out of reach, with why (not in ``frame``)
        self.unreachable = dict(unreachable or {})
        self.options = options_of(config)
        self.context = context
        self.frame = frame
        self.keys = keys
        self.frame_path = frame_path
        self.records: dict[str, Any] = {}
        self.counts: list[str] = []
        self.unreadable: list[str] = []
        self.lines: list[str] = []

    def preflight(self, selected: list[str]) -> None:
        """Called once by the kernel with the items this session will run (``kernel.py``)."""
        if self.options.collect_only or not self.options.preflight:
            return

        wanted = set(selected)
        repositories = [
            Repository(repo.id, repo.url, repo.full_name)
            for repo in self.frame.repositories
            if repo.id in wanted and repo.url is not None
        ]
        cache = Path(self.context.repo_cache) if self.context.repo_cache else None
        stop_unless_reachable(
            self.config, repositories, cache, Path(self.context.work_root) / "preflight" / self.context.label
        )

    def _parse(self, text: str) -> Any:
        return (scan_repository if self.context.mode == "gate1" else planned_fix).parse_record(text)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        text = getattr(report, "bench_measure", None)
        if text is None:
            return
        try:
            record = self._parse(text)
        except ValueError as exc:
            self.unreadable.append(f"{report.nodeid}: {str(exc).splitlines()[0]}")
            return
        self.records[record.full_name] = record
        counts = getattr(report, "bench_measure_counts", None)
        if counts:
            self.counts.append(counts)

    def _frame_label(self) -> str:
        try:
            return self.frame_path.relative_to(Path(self.config.rootpath).resolve()).as_posix()
        except ValueError:
            return self.frame_path.name

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if not self.records:
            return
        wanted = [repo.full_name for repo in self.frame.repositories]
        if self.context.mode == "gate1":
            self.lines = scan_repository.pooled_lines(self.keys, self.records)
        else:
            self.lines = [planned_fix.outcome_line(self.records)]
        if self.frame.is_fixture:
            self.lines.append("fixture frame: nothing written under results/")
            return
        partial = partial_line(sum(name in self.records for name in wanted), len(wanted), "repositories of the frame")
        if partial is not None:
            self.lines.append(partial)
            return

        split = scan_error_parts if self.context.mode == "gate1" else dryrun_error_parts
        errors = {name: parts for name, record in self.records.items() if (parts := split(record.error))}
        infrastructure = infrastructure_repositories(errors)
        refused = refusal(
            "scanned" if self.context.mode == "gate1" else "planned",
            len(self.records) - len(errors),
            len(self.records),
            infrastructure,
            allow_infrastructure=self.options.publish_with_infra_errors,
        )
        # a release without the pack is a point of the pack's history: kept, never the published dry run
        if self.context.mode != "gate1" and planned_fix.pack_absent_error(self.context) is not None:
            refused = None
        if refused is not None:
            self.lines.append(refused)
            return
        write_block = self.options.summary
        label, run, count = self._frame_label(), new_run_id(), len(infrastructure)
        try:
            if self.context.mode == "gate1":
                self.lines += scan_repository.publish(
                    self.context,
                    self.frame,
                    self.keys,
                    self.records,
                    frame_label=label,
                    write_block=write_block,
                    session=run,
                    infrastructure=count,
                    unreachable=self.unreachable,
                    from_cases=self.options.measurement is not None and self.options.measurement.cases is not None,
                )
            else:
                self.lines += planned_fix.publish(
                    self.context,
                    self.frame,
                    self.records,
                    frame_label=label,
                    write_block=write_block,
                    session=run,
                    infrastructure=count,
                )
        except (OSError, ValueError, LockBusy) as exc:
            self.lines.append(f"not published: {str(exc).splitlines()[0]}")
            return
        if write_block:  # the site's pages are drawn from the same documents: stale the moment they change
            self.lines += self._rewrite_site()

    def _rewrite_site(self) -> list[str]:
        """The results document's figures and pages again, as ``obelize-bench summarize`` writes them: a new
        measurement has a chart and a page of its own, stale the moment its document changes."""
        # the summary's writers: loaded only by a session that publishes, as a round's controller loads them
        from pytest_obelize_bench.report.summarize import summarize
        from pytest_obelize_bench.session.startup import option_path

        cases = option_path(self.config, self.options.cases, Path(self.config.rootpath))
        out = io.StringIO()
        if summarize(Path(self.context.results_dir), cases, check=False, out=out) != 0:
            reason = (out.getvalue().strip().splitlines() or ["unknown"])[-1]
            return [f"results figures and pages not rewritten ({reason}); run `obelize-bench summarize`"]
        return [line for line in out.getvalue().splitlines() if "results pages" in line]

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.records and not self.unreadable:
            return
        terminalreporter.write_sep(
            "=", "obelize-bench " + ("gate 1" if self.context.mode == "gate1" else f"dry run {self.context.pack}")
        )
        if self.unreachable:
            terminalreporter.write_line(
                f"not run, out of reach here ({len(self.unreachable)} repositories, --bench-unreachable):"
            )
            for name, reason in self.unreachable.items():
                terminalreporter.write_line(f"  {name}: {reason}")
        for line in sorted(self.counts):
            terminalreporter.write_line(line)
        for line in self.lines:
            terminalreporter.write_line(line)
        for problem in self.unreadable:
            terminalreporter.write_line(f"unreadable record: {problem}", red=True)
