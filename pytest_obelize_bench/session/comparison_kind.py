"""The comparison arm as the kernel's items: ``--bench-compare=ARM.yaml --bench-round=N``.

Each dev-split case of the round's case file is one unit (the holdout is never shown to an
agent); the body hands its row over as a JSON string, and the controller
(``comparison_controller.py``) writes ``results/comparison/round-N.json`` and the comparison
block only when every dev case produced one. Registered from the entry point, so ``pytest --help``
loads it: what a comparison runs is imported inside the functions, for start-up time.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_obelize_bench._util.digests import sha256_bytes
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
    from pytest_obelize_bench.casefile.cases import Case
    from pytest_obelize_bench.comparison.arm_context import ComparisonContext
    from pytest_obelize_bench.options.model import ComparisonOptions

PROMPT_FILE = Path("comparison") / "COMPARISON_PROMPT.md"
CONTROLLER_NAME = "obelize-bench-compare"


class ComparisonKind(ControllerPreflight):
    """The dev split's cases, ids sorted; never a holdout case or a control."""

    def __init__(self, config: pytest.Config, case_path: Path, dev: list[Case], context: ComparisonContext) -> None:
        self.controller_name = CONTROLLER_NAME
        self.config, self.case_path, self.dev, self.context = config, case_path, dev, context
        units = [
            Unit(name=case.id, body=_compare_case, label=f"comparison {case.id}", attributes={"bench_case": case})
            for case in dev
        ]
        self._files = {case_path: units}

    def files(self) -> dict[Path, list[Unit]]:
        return self._files

    def worker_input(self) -> dict[str, Any]:
        from pytest_obelize_bench.comparison.arm_context import WORKERINPUT_KEY

        return {WORKERINPUT_KEY: self.context.to_json()}


def _dev_cases(config: pytest.Config, round_number: int) -> tuple[Path, list[Case]]:
    from pytest_obelize_bench.casefile.cases import CaseFileError, load_case_file
    from pytest_obelize_bench.session.startup import option_path

    case_path = option_path(config, options_of(config).cases, Path(config.rootpath)).resolve()
    try:
        case_file = load_case_file(case_path)
    except CaseFileError as exc:
        raise pytest.UsageError("the comparison cannot start:\n" + "\n".join(exc.problems)) from None
    if case_file.round != round_number:
        raise pytest.UsageError(f"--bench-round={round_number}: {case_path} is round {case_file.round}")
    dev = [c for c in case_file.cases if c.split == "dev" and not c.control and c.retired is None]
    return case_path, sorted(dev, key=lambda case: case.id)


def _context(config: pytest.Config, asked: ComparisonOptions, case_path: Path, dev: list[Case]) -> ComparisonContext:
    """Everything a worker needs, computed once on the controller."""
    from pytest_obelize_bench.comparison.arm import ArmFileError, PromptError, load_template, read_arm
    from pytest_obelize_bench.comparison.arm_context import ComparisonContext
    from pytest_obelize_bench.session.startup import build_context, option_path

    options = options_of(config)
    rootdir = Path(config.rootpath)
    arm_path = option_path(config, asked.arm, rootdir).resolve()
    try:
        arm, arm_sha, guide_path, guide_sha = read_arm(arm_path)
        template = load_template(case_path.parent / PROMPT_FILE)
    except (ArmFileError, PromptError) as exc:
        raise pytest.UsageError(str(exc)) from None
    suites = build_context(config, "comparison", rootdir, {case_path: dev}, work_below="comparison")
    work_root = Path(suites.work_root).parent
    # Blind: a neutral root named by a digest, outside the work root, so no path the agent sees
    # names the project or the case.
    blind_root = Path(tempfile.gettempdir()) / ("w" + sha256_bytes(str(work_root).encode())[:10])
    return ComparisonContext(
        round=asked.round,
        arm=arm,
        arm_sha256=arm_sha,
        guide_path=str(guide_path),
        guide_sha256=guide_sha,
        guide_bytes=guide_path.stat().st_size,
        template=template,
        template_sha256=sha256_bytes(template.encode("utf-8")),
        project_root=str(rootdir),
        results_dir=suites.results_dir,
        work_root=str(work_root),
        blind_root=str(blind_root),
        keep=options.keep,
        repo_cache=options.repo_cache,
        tool=suites.tool,
        sandbox_program=suites.sandbox.program,
        exclude_newer=suites.exclude_newer,
        round_context=suites,
        repeat=[case.id for case in dev[: asked.repeat]],
        harness=suites.harness,
    )


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    asked = options_of(config).comparison  # checked with its round when the options were read
    if asked is None:
        return
    case_path, dev = _dev_cases(config, asked.round)
    if hasattr(config, "workerinput"):
        from pytest_obelize_bench.comparison.arm_context import WORKERINPUT_KEY, ComparisonContext

        context = ComparisonContext.from_json(config.workerinput[WORKERINPUT_KEY])
        register_kind(config, ComparisonKind(config, case_path, dev, context))
        return
    context = _context(config, asked, case_path, dev)
    register_kind(config, ComparisonKind(config, case_path, dev, context))
    from pytest_obelize_bench.session.comparison_controller import CompareController

    config.pluginmanager.register(CompareController(config, context, dev, case_path), CONTROLLER_NAME)


def _compare_case(request: pytest.FixtureRequest) -> None:
    """The body of every comparison item."""
    from pytest_obelize_bench.comparison.case_run import item_status, run_case

    item = request.node
    kind = request.config.stash[KIND_KEY]
    assert isinstance(kind, ComparisonKind) and isinstance(item, BenchItem), "only the dev split's items use this body"
    context = kind.context
    row = run_case(item.bench_case, context, repeat=item.bench_case.id in context.repeat)
    # Plain attributes of the report: xdist serializes them to the controller.
    hand_over(
        item, Handover(attributes={"bench_compare": row.model_dump_json()}, status=item_status(row, context.arm.name))
    )
