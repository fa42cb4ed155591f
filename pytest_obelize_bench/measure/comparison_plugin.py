"""The pytest side of the comparison arm: ``--bench-compare=ARM.yaml --bench-round=N``.

Registered from the main plugin.  Each dev-split case of the round's case file is one item (the
holdout is never shown to an agent); the worker hands its row over on the report as a JSON
string, and the controller writes ``results/comparison/round-N.json`` and the comparison block
only when every dev case produced one: a ``-k`` run reports and publishes nothing.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_obelize_bench.options.read import options_of

if TYPE_CHECKING:
    from pytest_obelize_bench.isolation.sandbox import Settings
    from pytest_obelize_bench.options.model import ComparisonOptions
    from pytest_obelize_bench.tool.info import ToolInfo

WORKERINPUT_KEY = "obelize_bench_compare"
PROMPT_FILE = Path("comparison") / "COMPARISON_PROMPT.md"

CONTEXT_KEY = pytest.StashKey[dict[str, Any]]()
CASES_KEY = pytest.StashKey[list[Any]]()
CASE_FILE_KEY = pytest.StashKey[Path]()
ROW_KEY = pytest.StashKey[str]()
STATUS_KEY = pytest.StashKey[list[str]]()


def _path(config: pytest.Config, text: str) -> Path:
    path = Path(text).expanduser()
    if path.is_absolute():
        return path
    invocation = Path(config.invocation_params.dir)
    return invocation / path if (invocation / path).exists() else Path(config.rootpath) / path


def _dev_cases(config: pytest.Config, round_number: int) -> tuple[Path, list[Any]]:
    from pytest_obelize_bench.casefile.cases import CaseFileError, load_case_file

    case_path = _path(config, options_of(config).cases).resolve()
    try:
        case_file = load_case_file(case_path)
    except CaseFileError as exc:
        raise pytest.UsageError("the comparison cannot start:\n" + "\n".join(exc.problems)) from None
    if case_file.round != round_number:
        raise pytest.UsageError(f"--bench-round={round_number}: {case_path} is round {case_file.round}")
    dev = [c for c in case_file.cases if c.split == "dev" and not c.control and c.retired is None]
    return case_path, sorted(dev, key=lambda case: case.id)


def _context(config: pytest.Config, asked: ComparisonOptions, case_path: Path, dev: list[Any]) -> dict[str, Any]:
    """Everything a worker needs, computed once on the controller (JSON-safe)."""
    from pytest_obelize_bench.isolation.gitquery import harness_provenance
    from pytest_obelize_bench.isolation.sandbox import SandboxUnavailable, Settings, choose
    from pytest_obelize_bench.isolation.workspace import default_work_root
    from pytest_obelize_bench.measure.comparison_arm import (
        ArmFileError,
        PromptError,
        load_template,
        read_arm,
        sha256_of,
    )

    options = options_of(config)
    arm_path = _path(config, asked.arm).resolve()
    try:
        arm, arm_sha, guide_path, guide_sha = read_arm(arm_path)
        template = load_template(case_path.parent / PROMPT_FILE)
    except (ArmFileError, PromptError) as exc:
        raise pytest.UsageError(str(exc)) from None
    work_root = Path(options.work) if options.work else default_work_root()  # absolute already (options)
    # Blind: a neutral root named by a digest, outside the work root, so no path the agent sees
    # names the project or the case.
    blind_root = Path(tempfile.gettempdir()) / ("w" + sha256_of(str(work_root).encode())[:10])
    tool: ToolInfo | None = None
    sandbox = Settings()
    exclude_newer = _exclude_newer(options.exclude_newer)
    if not options.collect_only:
        from pytest_obelize_bench.tool.info import ToolError
        from pytest_obelize_bench.tool.venv import resolve_tool

        try:
            tool = resolve_tool(options.obelize, tool_root=work_root / "tools")
            sandbox = choose(options.sandbox)
        except ToolError as exc:
            raise pytest.UsageError(f"--obelize: {exc}") from None
        except SandboxUnavailable as exc:
            raise pytest.UsageError(f"--bench-sandbox=bwrap: {exc}") from None
    suites = _round_context(config, asked.round, case_path, work_root / "comparison", exclude_newer, tool, sandbox)
    return {
        "round": asked.round,
        "arm": arm.model_dump(mode="json"),
        "arm_sha256": arm_sha,
        "guide": arm.guide.model_dump(mode="json"),
        "guide_path": str(guide_path),
        "guide_sha256": guide_sha,
        "guide_bytes": guide_path.stat().st_size,
        "template": template,
        "template_sha256": sha256_of(template.encode("utf-8")),
        "project_root": str(config.rootpath),
        "results_dir": str(_path(config, options.results).resolve()),
        "work_root": str(work_root),
        "blind_root": str(blind_root),
        "keep": options.keep,
        "repo_cache": options.repo_cache,
        "tool": None if tool is None else tool.model_dump(mode="json"),
        "sandbox_program": sandbox.program,
        "exclude_newer": exclude_newer,
        "round_context": suites,
        "repeat": [case.id for case in dev[: asked.repeat]],
        "harness": harness_provenance(Path(config.rootpath)).model_dump(mode="json"),
    }


def _exclude_newer(text: str | None) -> str:
    from pytest_obelize_bench.case.environment import exclude_newer_now, validate_exclude_newer

    try:
        return validate_exclude_newer(text) if text else exclude_newer_now()
    except ValueError as exc:
        raise pytest.UsageError(f"--exclude-newer: {exc}") from None


def _round_context(
    config: pytest.Config,
    round_number: int,
    case_path: Path,
    work_root: Path,
    exclude_newer: str,
    tool: ToolInfo | None,
    sandbox: Settings,
) -> dict[str, Any]:
    """The round context the suites' stages read (comparison_suite.py), as JSON-safe fields."""
    from pytest_obelize_bench.case.context import RoundContext
    from pytest_obelize_bench.case.environment import default_uv_cache
    from pytest_obelize_bench.isolation.gitquery import harness_provenance
    from pytest_obelize_bench.isolation.limits import LimitError, parse_limits

    options = options_of(config)
    try:
        limits = parse_limits(options.step_timeout)
    except LimitError as exc:
        raise pytest.UsageError(str(exc)) from None
    context = RoundContext(
        mode="round",
        round=round_number,
        project_root=str(config.rootpath),
        cases_path=str(case_path),
        fixtures_dir=str(case_path.parent / "fixtures"),
        results_dir=str(_path(config, options.results).resolve()),
        work_root=str(work_root),
        repo_cache=options.repo_cache,
        interpreter_policy=options.interpreter,
        python_search=tuple(str(Path(p).expanduser()) for p in options.python_path),
        exclude_newer=exclude_newer,
        uv_cache=str(default_uv_cache(work_root.parent)),
        tool=tool,
        harness=harness_provenance(Path(config.rootpath)),
        step_limits=limits,
        sandbox=sandbox,
    )
    return context.model_dump(mode="json")


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    asked = options_of(config).comparison  # checked with its round when the options were read
    if asked is None:
        return
    case_path, dev = _dev_cases(config, asked.round)
    config.stash[CASES_KEY] = dev
    config.stash[CASE_FILE_KEY] = case_path
    config.args = [str(case_path)]
    config.args_source = pytest.Config.ArgsSource.ARGS
    if hasattr(config, "workerinput"):
        config.stash[CONTEXT_KEY] = json.loads(config.workerinput[WORKERINPUT_KEY])
        return
    context = _context(config, asked, case_path, dev)
    config.stash[CONTEXT_KEY] = context
    config.pluginmanager.register(CompareController(config, context, dev), "obelize-bench-compare")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    context = node.config.stash.get(CONTEXT_KEY, None)
    if context is not None:
        node.workerinput[WORKERINPUT_KEY] = json.dumps(context)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    case_path = parent.config.stash.get(CASE_FILE_KEY, None)
    if case_path is None or file_path.resolve() != case_path:
        return None
    return DevSplit.from_parent(parent, path=file_path)


class CompareItem(pytest.Function):
    bench_case: Any

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"comparison {self.bench_case.id}"


class DevSplit(pytest.File):
    """The case file: one item per dev case, never a holdout case or a control."""

    def collect(self) -> list[pytest.Item]:
        items: list[pytest.Item] = []
        for case in self.config.stash[CASES_KEY]:
            item = CompareItem.from_parent(self, name=case.id, callobj=_compare_case)
            item.bench_case = case
            items.append(item)
        return items


def _compare_case(request: pytest.FixtureRequest) -> None:
    """The body of every comparison item."""
    from pytest_obelize_bench.measure.comparison_items import item_status, run_case

    item = request.node
    assert isinstance(item, CompareItem), "only the dev split's items use this body"
    context = request.config.stash[CONTEXT_KEY]
    row = run_case(item.bench_case, context, repeat=item.bench_case.id in context["repeat"])
    item.stash[ROW_KEY] = row.model_dump_json()
    item.stash[STATUS_KEY] = list(item_status(row, str(context["arm"]["name"])))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    row = item.stash.get(ROW_KEY, None)
    if call.when == "call" and row is not None:
        report.bench_compare = row
        status: list[str] = item.stash[STATUS_KEY]
        report.bench_compare_status = status
    return report


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> tuple[str, str, str] | None:
    shown = getattr(report, "bench_compare_status", None)
    if shown is None or report.when != "call" or not report.passed:
        return None
    return str(shown[0]), str(shown[1]), str(shown[2])


class CompareController:
    """The controller's side: collect every case's row, write a whole dev split, render its block."""

    def __init__(self, config: pytest.Config, context: dict[str, Any], dev: list[Any]) -> None:
        self.config, self.context, self.dev = config, context, dev
        self.rows: dict[str, Any] = {}
        self.lines: list[str] = []
        self.preflighted = False

    # -- the preflight: every selected case's repository reachable or cached ------------------

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self.config.pluginmanager.get_plugin("dsession") is None:
            self._preflight([item.name for item in session.items])

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self._preflight([nodeid.rpartition("::")[2] for nodeid in ids])

    def _preflight(self, selected: list[str]) -> None:
        options = options_of(self.config)
        if self.preflighted or options.collect_only or not options.preflight:
            return
        self.preflighted = True
        from pytest_obelize_bench.isolation.reachability import Repository
        from pytest_obelize_bench.measure.controller import stop_unless_reachable

        wanted = set(selected)
        repositories = [Repository(case.id, case.repo, case.full_name) for case in self.dev if case.id in wanted]
        cache = Path(self.context["repo_cache"]) if self.context.get("repo_cache") else None
        root = Path(self.context["work_root"]) / "preflight" / f"comparison-round-{self.context['round']}"
        stop_unless_reachable(self.config, repositories, cache, root)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        text = getattr(report, "bench_compare", None)
        if text is None:
            return
        from pytest_obelize_bench.measure.comparison_record import CaseComparison

        case_id = report.nodeid.rsplit("::", 1)[-1]
        self.rows[case_id] = CaseComparison.model_validate_json(text)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if not self.rows:
            return
        from pytest_obelize_bench.measure.comparison_items import build_record, write_record

        wanted = [case.id for case in self.dev]
        missing = [case for case in wanted if case not in self.rows]
        if missing:
            self.lines.append(
                f"not published: {len(self.rows)} of {len(wanted)} dev cases ran, "
                "and a partial comparison is never published"
            )
            return
        record = build_record(self.context, self.rows)
        path = write_record(Path(self.context["results_dir"]), record)
        self.lines.append(f"comparison record: {path}")
        if not options_of(self.config).publish:
            return
        self.lines += _render(path, self.config.stash[CASE_FILE_KEY])

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.rows:
            return
        terminalreporter.write_sep("=", f"obelize-bench comparison, round {self.context['round']}")
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
    from pytest_obelize_bench._util.locks import LockBusy, holder_lock
    from pytest_obelize_bench._util.safe_io import write_atomically
    from pytest_obelize_bench.measure.blocks import apply_blocks
    from pytest_obelize_bench.measure.comparison_block import comparison_blocks
    from pytest_obelize_bench.report.document import DOCUMENT_LOCK, DOCUMENT_NAME

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
