"""The controller's side of the comparison arm: collect every case's row, write a whole dev split,
render its block."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_obelize_bench._util.locks import LockBusy, holder_lock
from pytest_obelize_bench._util.safe_io import write_atomically
from pytest_obelize_bench.comparison.block_text import comparison_blocks
from pytest_obelize_bench.comparison.case_run import build_record, write_record
from pytest_obelize_bench.comparison.rows import CaseComparison
from pytest_obelize_bench.isolation.reachability import Repository
from pytest_obelize_bench.options.read import options_of
from pytest_obelize_bench.records.results_document import DOCUMENT_LOCK, DOCUMENT_NAME, apply_blocks
from pytest_obelize_bench.session.kernel import partial_line
from pytest_obelize_bench.session.preflight import stop_unless_reachable

if TYPE_CHECKING:
    from pytest_obelize_bench.casefile.cases import Case
    from pytest_obelize_bench.comparison.arm_context import ComparisonContext


class CompareController:
    """The controller's side: collect every case's row, write a whole dev split, render its block."""

    def __init__(self, config: pytest.Config, context: ComparisonContext, dev: list[Case], case_path: Path) -> None:
        self.config, self.context, self.dev, self.case_path = config, context, dev, case_path
        self.rows: dict[str, CaseComparison] = {}
        self.lines: list[str] = []

    def preflight(self, selected: list[str]) -> None:
        """Called once by the kernel with the items this session will run (``kernel.py``): every
        selected case's repository reachable or cached."""
        options = options_of(self.config)
        if options.collect_only or not options.preflight:
            return

        wanted = set(selected)
        repositories = [
            Repository(case.id, case.repo, case.full_name)
            for case in self.dev
            if case.id in wanted and case.repo is not None
        ]
        cache = Path(self.context.repo_cache) if self.context.repo_cache else None
        root = Path(self.context.work_root) / "preflight" / f"comparison-round-{self.context.round}"
        stop_unless_reachable(self.config, repositories, cache, root)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        text = getattr(report, "bench_compare", None)
        if text is None:
            return

        case_id = report.nodeid.rsplit("::", 1)[-1]
        self.rows[case_id] = CaseComparison.model_validate_json(text)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if not self.rows:
            return

        wanted = [case.id for case in self.dev]
        partial = partial_line(sum(case in self.rows for case in wanted), len(wanted), "dev cases")
        if partial is not None:
            self.lines.append(partial)
            return
        record = build_record(self.context, self.rows)
        path = write_record(Path(self.context.results_dir), record)
        self.lines.append(f"comparison record: {path}")
        if not options_of(self.config).publish:
            return
        self.lines += _render(path, self.case_path)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.rows:
            return
        terminalreporter.write_sep("=", f"obelize-bench comparison, round {self.context.round}")
        # each errored case with its reasons, at any verbosity: the item's own line is only a letter
        for case, row in sorted(self.rows.items()):
            for error in row.errors:
                detail = f" ({error.detail})" if error.detail else ""
                terminalreporter.write_line(
                    f"compare-error: {case}: {error.arm}, step {error.step}: {error.reason}{detail}", red=True
                )
        for line in self.lines:
            terminalreporter.write_line(line)


def _render(record_path: Path, case_path: Path) -> list[str]:
    """Rewrite the results document's measurement blocks; the lines the terminal shows."""
    results = record_path.parent.parent
    document = results / DOCUMENT_NAME
    try:
        blocks = comparison_blocks(results, case_path)
        with holder_lock(results / DOCUMENT_LOCK, "the results document"):
            existing = document.read_text(encoding="utf-8") if document.exists() else "# Benchmark results\n"
            write_atomically(document, apply_blocks(existing, blocks))
    except (OSError, ValueError, LockBusy) as exc:
        return [f"block not written: {str(exc).splitlines()[0]}"]
    lines = [f"summary: {document}"]
    for line in blocks.get(f"comparison-round-{record_path.stem.split('-')[1]}", "").splitlines():
        if line.startswith("| `"):
            lines.append(line)
    return lines
