"""The pytest side of the two other measurements: ``--bench-gate1`` and ``--bench-dryrun=PACK``.

Registered from the main plugin; import-light like it (only pytest and the options at import).  Each repository
of the frame is one item; the worker hands its record over on the report as a JSON string, and
the controller publishes the frame's records and its block only when every repository of the
frame produced one: a ``-k`` run, an interrupted run or a fixture frame publishes nothing.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_obelize_bench.measure.outcome import MEASURE_OUTCOME_KEY
from pytest_obelize_bench.options.declarations import DEFAULT_GATE1_FRAME
from pytest_obelize_bench.options.read import options_of

if TYPE_CHECKING:
    from pytest_obelize_bench.measure.frame import Frame, FrameRepository
    from pytest_obelize_bench.measure.labels import AnswerKey  # noqa: F401 (the stash key names it)
    from pytest_obelize_bench.measure.staging import MeasureContext
    from pytest_obelize_bench.tool.info import ToolInfo
    from pytest_obelize_bench.tool.packs import PackInfo

FRAME_KEY = pytest.StashKey["Frame"]()
KEYS_KEY = pytest.StashKey["dict[str, AnswerKey]"]()
MEASURE_CONTEXT_KEY = pytest.StashKey["MeasureContext"]()
FRAME_PATH_KEY = pytest.StashKey[Path]()


def _path(config: pytest.Config, text: str) -> Path:
    path = Path(text).expanduser()
    if path.is_absolute():
        return path
    invocation = Path(config.invocation_params.dir)
    return invocation / path if (invocation / path).exists() else Path(config.rootpath) / path


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "labelled: a Gate 1 repository with a hand-written answer key")
    asked = options_of(config).measurement  # checked alone and in pairs when the options were read
    if asked is None:
        return
    from pytest_obelize_bench.measure.frame import FrameError, load_frame
    from pytest_obelize_bench.measure.gate1_items import GATE1_PACK
    from pytest_obelize_bench.measure.labels import LabelError, load_keys

    mode = asked.kind
    pack = GATE1_PACK if asked.pack is None else asked.pack
    frame_path = _path(config, asked.frame or DEFAULT_GATE1_FRAME).resolve()
    try:
        frame = load_frame(frame_path)
        labels = frame_path.parent / "labels"
        keys = load_keys(labels, frame) if mode == "gate1" and labels.is_dir() else {}
    except (FrameError, LabelError) as exc:
        raise pytest.UsageError("the benchmark cannot start:\n" + "\n".join(exc.problems)) from None
    if mode == "dryrun" and frame.pack is not None and frame.pack != pack:
        raise pytest.UsageError(f"{frame_path}: the frame is drawn for {frame.pack}, not {pack}")
    config.stash[FRAME_KEY] = frame
    config.stash[KEYS_KEY] = keys
    config.stash[FRAME_PATH_KEY] = frame_path
    config.args = [str(frame_path)]
    config.args_source = pytest.Config.ArgsSource.ARGS
    if hasattr(config, "workerinput"):
        from pytest_obelize_bench.measure.staging import WORKERINPUT_KEY, MeasureContext

        config.stash[MEASURE_CONTEXT_KEY] = MeasureContext.from_json(config.workerinput[WORKERINPUT_KEY])
        return
    context = _build_context(config, mode, pack, frame_path, frame)
    config.stash[MEASURE_CONTEXT_KEY] = context
    from pytest_obelize_bench.measure.controller import MeasureController

    config.pluginmanager.register(MeasureController(config, context, frame, keys, frame_path), "obelize-bench-measure")


def _build_context(config: pytest.Config, mode: str, pack: str, frame_path: Path, frame: Frame) -> MeasureContext:
    from pytest_obelize_bench.isolation.gitquery import harness_provenance
    from pytest_obelize_bench.isolation.workspace import default_work_root
    from pytest_obelize_bench.measure.staging import MeasureContext

    options = options_of(config)
    work_root = Path(options.work) if options.work else default_work_root()  # absolute already (options)
    cache = options.repo_cache
    tool: ToolInfo | None = None
    provenance: PackInfo | None = None
    if not options.collect_only:
        from pytest_obelize_bench.tool.info import ToolError
        from pytest_obelize_bench.tool.packs import pack_provenance
        from pytest_obelize_bench.tool.venv import resolve_tool

        spec = options.obelize
        if frame.is_fixture and spec:
            raise pytest.UsageError(
                "a fixture frame runs the obelize installed beside the harness; --obelize does not apply"
            )
        try:
            tool = resolve_tool(spec, tool_root=work_root / "tools")
        except ToolError as exc:
            raise pytest.UsageError(f"--obelize: {exc}") from None
        provenance = pack_provenance(tool, pack)
    return MeasureContext(
        mode=mode,
        pack=pack,
        frame_path=str(frame_path),
        labels_dir=str(frame_path.parent / "labels") if mode == "gate1" else None,
        results_dir=str(_path(config, options.results).resolve()),
        work_root=str(work_root),
        project_root=str(config.rootpath),
        repo_cache=cache,
        tool=tool,
        pack_provenance=provenance,
        harness=harness_provenance(Path(config.rootpath)),
        run_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    from pytest_obelize_bench.measure.staging import WORKERINPUT_KEY

    context = node.config.stash.get(MEASURE_CONTEXT_KEY, None)
    if context is not None:
        node.workerinput[WORKERINPUT_KEY] = context.to_json()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    frame_path = parent.config.stash.get(FRAME_PATH_KEY, None)
    if frame_path is None or file_path.resolve() != frame_path:
        return None
    return FrameCollector.from_parent(parent, path=file_path)


class MeasureItem(pytest.Function):
    """One repository of the frame: a pytest Function (fixtures work) reported as its repository."""

    bench_repository: FrameRepository

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"repository {self.bench_repository.full_name}"


class FrameCollector(pytest.File):
    """The frame file: one item per repository, in the frame's order."""

    def collect(self) -> list[pytest.Item]:
        frame = self.config.stash[FRAME_KEY]
        keys = self.config.stash[KEYS_KEY]
        items: list[pytest.Item] = []
        for repo in frame.repositories:
            item = MeasureItem.from_parent(self, name=repo.id, callobj=_measure_repository)
            item.bench_repository = repo
            if repo.full_name in keys:
                item.add_marker("labelled")
            items.append(item)
        return items


def _measure_repository(request: pytest.FixtureRequest) -> None:
    """The body of every measurement item."""
    config = request.config
    context = config.stash[MEASURE_CONTEXT_KEY]
    frame_dir = config.stash[FRAME_PATH_KEY].parent
    item = request.node
    assert isinstance(item, MeasureItem), "only the frame's items use this body"
    repo = item.bench_repository
    if context.mode == "gate1":
        from pytest_obelize_bench.measure import gate1_items

        key = config.stash[KEYS_KEY].get(repo.full_name)
        gate1_items.run_item(item, repo, context, frame_dir, key)
    else:
        from pytest_obelize_bench.measure import dryrun_items

        dryrun_items.run_item(item, repo, context, frame_dir)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    outcome = item.stash.get(MEASURE_OUTCOME_KEY, None)
    if call.when == "call" and outcome is not None:
        # Plain attributes of the report: xdist serializes them to the controller.
        report.bench_measure = outcome.record_json
        report.bench_measure_status = list(outcome.status)
        if outcome.counts:
            report.bench_measure_counts = outcome.counts
        item.user_properties.append(("outcome", outcome.status[0]))
    return report


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> tuple[str, str, str] | None:
    shown = getattr(report, "bench_measure_status", None)
    if shown is None or report.when != "call" or not report.passed:
        return None
    category, letter, word = shown
    return str(category), str(letter), str(word)
