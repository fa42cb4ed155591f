"""Gate 1 and the fix dry run as the kernel's items: ``--bench-gate1`` and ``--bench-dryrun=PACK``.

Each repository of the frame is one unit; the body hands its record over as a JSON string, and
the controller (``frame_controller.py``) publishes the frame's records and its block only when
every repository of the frame produced one. Registered from the entry point, so ``pytest --help``
loads it: what a measurement runs is imported inside the functions, for start-up time.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_obelize_bench.options.declarations import DEFAULT_GATE1_FRAME
from pytest_obelize_bench.options.read import options_of
from pytest_obelize_bench.session.kernel import (
    KIND_KEY,
    BenchItem,
    ControllerPreflight,
    Handover,
    Unit,
    hand_over,
    register_kind,
)

if TYPE_CHECKING:
    from pytest_obelize_bench.gate1.labels import AnswerKey
    from pytest_obelize_bench.measure.frame import Frame
    from pytest_obelize_bench.measure.repository_run import MeasureContext
    from pytest_obelize_bench.tool.info import ToolInfo
    from pytest_obelize_bench.tool.packs import PackInfo


class FrameKind(ControllerPreflight):
    """The frame's repositories, in the frame's order; a labelled one is marked."""

    def __init__(
        self, config: pytest.Config, frame_path: Path, frame: Frame, keys: dict[str, AnswerKey], context: MeasureContext
    ) -> None:
        self.controller_name = CONTROLLER_NAME
        self.config, self.frame_path, self.frame, self.keys, self.context = config, frame_path, frame, keys, context
        units = [
            Unit(
                name=repo.id,
                body=_measure_repository,
                label=f"repository {repo.full_name}",
                markers=("labelled",) if repo.full_name in keys else (),
                attributes={"bench_repository": repo},
            )
            for repo in frame.repositories
        ]
        self._files = {frame_path: units}

    def files(self) -> dict[Path, list[Unit]]:
        return self._files

    def worker_input(self) -> dict[str, Any]:
        from pytest_obelize_bench.measure.repository_run import WORKERINPUT_KEY

        return {WORKERINPUT_KEY: self.context.to_json()}


CONTROLLER_NAME = "obelize-bench-measure"


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "labelled: a Gate 1 repository with a hand-written answer key")
    asked = options_of(config).measurement  # checked alone and in pairs when the options were read
    if asked is None:
        return
    from pytest_obelize_bench.casefile.cases import CaseFileError, load_case_file
    from pytest_obelize_bench.gate1.case_keys import frame_of_cases
    from pytest_obelize_bench.gate1.labels import LabelError, load_keys
    from pytest_obelize_bench.gate1.scan_repository import GATE1_PACK
    from pytest_obelize_bench.measure.frame import FrameError, load_frame

    mode = asked.kind
    pack = GATE1_PACK if asked.pack is None else asked.pack
    from pytest_obelize_bench.session.startup import option_path

    root = Path(config.rootpath)
    try:
        if asked.cases is not None:  # Gate 1 over a case file: its cases are the frame, their keys the labels
            frame_path = option_path(config, asked.cases, root).resolve()
            frame, keys = frame_of_cases(load_case_file(frame_path), pack)
        else:
            frame_path = option_path(config, asked.frame or DEFAULT_GATE1_FRAME, root).resolve()
            frame = load_frame(frame_path)
            labels = frame_path.parent / "labels"
            keys = load_keys(labels, frame) if mode == "gate1" and labels.is_dir() else {}
    except (FrameError, LabelError, CaseFileError) as exc:
        raise pytest.UsageError("the benchmark cannot start:\n" + "\n".join(exc.problems)) from None
    frame, unreachable = _within_reach(config, frame, root)
    keys = {name: key for name, key in keys.items() if name not in unreachable}
    if mode == "dryrun" and frame.pack is not None and frame.pack != pack:
        raise pytest.UsageError(f"{frame_path}: the frame is drawn for {frame.pack}, not {pack}")
    if hasattr(config, "workerinput"):
        from pytest_obelize_bench.measure.repository_run import WORKERINPUT_KEY, MeasureContext

        context = MeasureContext.from_json(config.workerinput[WORKERINPUT_KEY])
        register_kind(config, FrameKind(config, frame_path, frame, keys, context))
        return
    context = _build_context(config, mode, pack, frame_path, frame)
    register_kind(config, FrameKind(config, frame_path, frame, keys, context))
    from pytest_obelize_bench.session.frame_controller import MeasureController

    controller = MeasureController(config, context, frame, keys, frame_path, unreachable)
    config.pluginmanager.register(controller, CONTROLLER_NAME)


def _within_reach(config: pytest.Config, frame: Frame, root: Path) -> tuple[Frame, dict[str, str]]:
    """The frame less the repositories ``--bench-unreachable`` names out of reach, and those, with why."""
    listed = options_of(config).unreachable
    if not listed:
        return frame, {}
    from pytest_obelize_bench.casefile.reach import ReachListError, read_reach_list, unreachable_pins
    from pytest_obelize_bench.session.startup import option_path

    try:
        pins = read_reach_list(option_path(config, listed, root))
    except ReachListError as exc:
        raise pytest.UsageError(f"the benchmark cannot start:\n--bench-unreachable: {exc}") from None
    away = unreachable_pins(((repo.full_name, repo.full_name, repo.sha) for repo in frame.repositories), pins)
    kept = [repo for repo in frame.repositories if repo.full_name not in away]
    if not kept:
        raise pytest.UsageError("--bench-unreachable: every repository of the frame is out of reach; nothing to run")
    return frame.model_copy(update={"repositories": kept}), away


def _build_context(config: pytest.Config, mode: str, pack: str, frame_path: Path, frame: Frame) -> MeasureContext:
    from pytest_obelize_bench.isolation.gitquery import harness_provenance
    from pytest_obelize_bench.isolation.workspace import default_work_root
    from pytest_obelize_bench.measure.repository_run import MeasureContext
    from pytest_obelize_bench.session.startup import option_path

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
    from pytest_obelize_bench._util.clock import utc_now

    return MeasureContext(
        mode=mode,
        pack=pack,
        frame_path=str(frame_path),
        labels_dir=str(frame_path.parent / "labels") if mode == "gate1" else None,
        results_dir=str(option_path(config, options.results, Path(config.rootpath)).resolve()),
        work_root=str(work_root),
        project_root=str(config.rootpath),
        repo_cache=cache,
        tool=tool,
        pack_provenance=provenance,
        harness=harness_provenance(Path(config.rootpath)),
        run_at=utc_now(),
    )


def _measure_repository(request: pytest.FixtureRequest) -> None:
    """The body of every frame item."""
    item = request.node
    kind = request.config.stash[KIND_KEY]
    assert isinstance(kind, FrameKind) and isinstance(item, BenchItem), "only the frame's items use this body"
    repo = item.bench_repository
    frame_dir = kind.frame_path.parent
    failure = None
    if kind.context.mode == "gate1":
        from pytest_obelize_bench.gate1.scan_repository import scan_unit

        key = kind.keys.get(repo.full_name)
        record_json, status, counts = scan_unit(repo, kind.context, frame_dir, key)
    else:
        from pytest_obelize_bench.dryrun.planned_fix import plan_unit

        record_json, status, failure = plan_unit(repo, kind.context, frame_dir)
        counts = None
    # Plain attributes of the report: xdist serializes them to the controller.
    attributes: dict[str, Any] = {"bench_measure": record_json}
    if counts:
        attributes["bench_measure_counts"] = counts
    hand_over(
        item,
        Handover(
            attributes=attributes,
            status=status,
            junit=("outcome", status[0]),
            section=None if counts is None else ("gate1", counts),
        ),
    )
    if failure is not None:
        pytest.fail(failure, pytrace=False)
