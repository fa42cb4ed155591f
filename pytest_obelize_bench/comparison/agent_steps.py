"""One dev case of the comparison, on the worker: blind folders, both arms, three scans.

The case's folder is named by a digest of its id under a neutral root, so no path the agent
sees names the case or this project.  In it: ``base`` (the checkout at the pin, never touched
after), ``obelize`` and ``tree`` (one copy per arm), ``meta`` (the agent's stamps and report),
``given`` (the rendered prompt and the guide snapshot, read-only to the agent) and the
harness's own ``logs``, ``home`` and ``tmp``.  Every step runs through the executor under
bubblewrap when the session has it: obelize's ``fix`` and ``scan`` with the case's policy, the
agent with its own (its tree and ``meta`` writable, ``given`` and its program's paths
read-only, the harness's folders hidden, the network only if its arm file says so).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench._util.digests import sha256_text
from pytest_obelize_bench.case.checkout import fetch_checkout
from pytest_obelize_bench.casefile.cases import Case
from pytest_obelize_bench.comparison.arm_context import ComparisonContext
from pytest_obelize_bench.comparison.rows import Change, Finding
from pytest_obelize_bench.comparison.trees import changes_against_pin, compiles, missing_files, read_stamp
from pytest_obelize_bench.grading.grade import expected_rows, grade
from pytest_obelize_bench.grading.record import SuiteResult
from pytest_obelize_bench.isolation.elide import Elider
from pytest_obelize_bench.isolation.executor import Completed, Executor, ProcessExecutor, step_environment
from pytest_obelize_bench.isolation.sandbox import (
    HarnessPaths,
    Policy,
    SandboxExecutor,
    bwrap_argv,
    case_layout,
    harness_paths,
)
from pytest_obelize_bench.isolation.steps import StepRunner
from pytest_obelize_bench.measure.scan_findings import read_findings
from pytest_obelize_bench.tool.adapter import OBELIZE
from pytest_obelize_bench.tool.evidence_copy import patch_publishable
from pytest_obelize_bench.tool.fix_step import run_fix
from pytest_obelize_bench.tool.info import ToolInfo

#: Left out of every copy and every diff: obelize's run folders.
RUN_FOLDER = ".obelize"
SCAN_TIMEOUT_S = 900.0


def blind_slug(case_id: str) -> str:
    """The case's folder name: eight hex digits of sha256(case id), as upstream's ``slug``."""
    return sha256_text(case_id)[:8]


@dataclass(frozen=True)
class Blind:
    """The folders of one case (``folder`` is ``<root>/<slug>``)."""

    folder: Path

    def __getattr__(self, name: str) -> Path:
        if name in ("base", "obelize", "tree", "meta", "given", "logs", "home", "tmp"):
            return self.folder / name
        raise AttributeError(name)

    def second(self) -> tuple[Path, Path]:
        """The repeat's tree and meta folder."""
        return self.folder / "tree-2", self.folder / "meta-2"


class PolicyExecutor:
    """Runs every step under one fixed bubblewrap policy (the agent's)."""

    def __init__(self, inner: Executor, *, program: str, policy: Policy, tmp: Path) -> None:
        self.inner, self.program, self.policy, self.tmp = inner, program, policy, tmp

    def run(
        self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float, log: Path, step: str = ""
    ) -> Completed:
        inside = {**env, "TMPDIR": os.fspath(self.tmp)}
        wrapped = bwrap_argv(self.program, self.policy, argv, cwd=Path(cwd), env=inside)
        return self.inner.run(wrapped, cwd=cwd, env=inside, timeout=timeout, log=log, step=step)


@dataclass
class ArmRun:
    """What one arm left on one case."""

    changes: list[Change]
    written: list[str]
    compiles: bool | None
    missing: list[str]
    findings: list[Finding]
    started_at: int | None = None
    finished_at: int | None = None
    runtime_seconds: float | None = None
    #: the unified diff against the pin, when the repository's licence lets it be published
    diff: str | None = None


def prepare_blind(root: Path, case_id: str) -> Blind:
    """The case's folders, emptied and made (the trees are left for the checkout and copies)."""
    blind = Blind(Path(root) / blind_slug(case_id))
    if blind.folder.exists():
        shutil.rmtree(blind.folder)
    for name in ("meta", "given", "logs", "home", "tmp"):
        (blind.folder / name).mkdir(parents=True)
    return blind


def _elider(blind: Blind, project_root: str) -> Any:
    return Elider(
        [("<work>", blind.folder), ("<repo>", Path(project_root)), ("<harness-python>", Path(sys.executable))]
    )


def _runner(executor: Executor, blind: Blind, log_name: str, project_root: str, env: Mapping[str, str]) -> Any:
    logs = blind.logs / log_name
    logs.mkdir(parents=True, exist_ok=True)
    return StepRunner(executor, logs=logs, elider=_elider(blind, project_root), env=env, cwd=blind.folder)


def step_env(blind: Blind) -> dict[str, str]:
    extra = {"PYTHONDONTWRITEBYTECODE": "1", "GIT_TERMINAL_PROMPT": "0", "NO_COLOR": "1"}
    return step_environment(os.environ, home=blind.home, extra=extra)


def session_tool(ctx: ComparisonContext) -> ToolInfo:
    """The obelize the session resolved; a collect-only session runs no item."""
    if ctx.tool is None:
        raise CaseError("obelize", "harness_crashed", "the session resolved no obelize")
    return ctx.tool


def _harness_paths(ctx: ComparisonContext) -> HarnessPaths:
    tool = session_tool(ctx)
    return harness_paths(
        project_root=ctx.project_root,
        results=ctx.results_dir,
        work_root=ctx.work_root,
        templates=ctx.round_context.templates_dir,
        tool_python=tool.python,
        tool_checkout=tool.checkout,
    )


def tree_executor(ctx: ComparisonContext, blind: Blind, tree: Path) -> Executor:
    """The executor of obelize's steps on ``tree``: the case's sandbox policy with ``tree`` as checkout."""
    inner = ProcessExecutor()
    program = ctx.sandbox_program
    if not program:
        return inner
    paths = _harness_paths(ctx)
    layout = case_layout(
        paths, checkout=tree, home=blind.home, tmp=blind.tmp, junit=blind.logs / "junit",
        env=step_env(blind), uv_cache=None, suites_network=False, offline=False,
    )  # fmt: skip
    return SandboxExecutor(inner, program=str(program), layout=layout)


def agent_executor(ctx: ComparisonContext, blind: Blind, tree: Path, meta: Path) -> Executor:
    """The agent's executor: its tree and meta writable, ``given`` and its program readable, no more."""
    inner = ProcessExecutor()
    program = ctx.sandbox_program
    if not program:
        return inner
    paths = _harness_paths(ctx)
    hidden = [paths.project_root, paths.results, paths.work_root, Path("/run"), Path("/etc/ssh")]
    if paths.real_home is not None:
        hidden.append(paths.real_home)
    read_only = [*paths.interpreters, blind.given, *(Path(p) for p in ctx.arm.read_only)]
    policy = Policy(
        writable=(tree.resolve(), meta.resolve(), blind.home.resolve(), blind.tmp.resolve()),
        read_only=tuple(read_only),
        hidden=tuple(hidden),
        masked=(Path("/etc/shadow"), Path("/etc/gshadow")),
        network=bool(ctx.arm.network),
    )
    return PolicyExecutor(inner, program=str(program), policy=policy, tmp=blind.tmp.resolve())


def fetch(case: Case, ctx: ComparisonContext, blind: Blind) -> None:
    """The checkout at the pin into ``base``, then one copy per arm (history included, run folders not)."""
    runner = _runner(ProcessExecutor(), blind, "fetch", ctx.project_root, step_env(blind))
    owner, _, name = case.full_name.partition("/") if case.full_name else ("", "", "")
    fetch_checkout(
        runner, url=case.repo or "", sha=case.sha or "", dest=blind.base,
        cache=Path(ctx.repo_cache) if ctx.repo_cache else None, owner=owner, name=name,
    )  # fmt: skip
    for tree in (blind.obelize, blind.tree):
        shutil.copytree(blind.base, tree, symlinks=True, ignore=shutil.ignore_patterns(RUN_FOLDER))


def scan(ctx: ComparisonContext, blind: Blind, tree: Path, label: str, pack: str) -> list[Finding]:
    """``obelize scan`` with the session's obelize over ``tree``: its findings as record rows."""
    runner = _runner(tree_executor(ctx, blind, tree), blind, f"scan-{label}", ctx.project_root, step_env(blind))
    argv = OBELIZE.scan_argv(list(session_tool(ctx).argv_prefix), checkout=tree, pack=pack)
    completed = runner.run(2, "scan", argv, timeout=SCAN_TIMEOUT_S, cwd=tree)
    if completed.timed_out or completed.exit_code != 0 or completed.launch_error is not None:
        raise CaseError("scan", "obelize_failed", f"obelize scan of the {label} tree exited {completed.exit_code}")
    _, findings = read_findings(OBELIZE.run_folder(tree))
    return [(f.path, f.line, f.kind, f.symbol) for f in findings]


def run_obelize(case: Case, ctx: ComparisonContext, blind: Blind) -> tuple[ArmRun, int | None]:
    """``obelize fix`` on its copy, as step 6 runs it; its changes and the rows its plan migrated."""
    tool = session_tool(ctx)
    runner = _runner(tree_executor(ctx, blind, blind.obelize), blind, "obelize", ctx.project_root, step_env(blind))
    fixed = run_fix(runner, tool, checkout=blind.obelize, pack=case.pack)
    m = grade(
        case, fixed.artefacts, baseline=SuiteResult(), after=SuiteResult(), patch_compiles=None, runtime_seconds=None
    )
    planned = None if m.unmigrated is None else len(expected_rows(case)) - m.unmigrated
    shutil.rmtree(blind.obelize / RUN_FOLDER, ignore_errors=True)
    return after_arm(case, blind, blind.obelize, runtime=round(fixed.runtime_s, 3)), planned


def run_agent(case: Case, ctx: ComparisonContext, blind: Blind, tree: Path, meta: Path, prompt: Path) -> ArmRun:
    """The agent's command on its copy; its runtime is its two stamps, checked against the step's clock."""
    arm = ctx.arm
    env = step_env(blind)
    env.update({name: os.environ[name] for name in arm.env if name in os.environ})
    runner = _runner(agent_executor(ctx, blind, tree, meta), blind, f"agent-{tree.name}", ctx.project_root, env)
    began = int(time.time())
    completed = runner.run(
        6, "agent", arm.argv(prompt=prompt, tree=tree, meta=meta), timeout=arm.time_limit_seconds, cwd=tree
    )
    ended = int(time.time()) + 1
    if completed.timed_out:
        raise CaseError("agent", "timeout", f"the agent outlasted its limit of {arm.time_limit_seconds:g}s")
    if completed.launch_error is not None:
        raise CaseError("agent", "agent_failed", "the agent's command could not be started; see the step log")
    started, finished = read_stamp(meta / "started"), read_stamp(meta / "finished")
    for name, stamp in (("started", started), ("finished", finished)):
        if isinstance(stamp, str):
            raise CaseError("agent", "stamp_missing", f"{name}: {stamp}")
    assert isinstance(started, int) and isinstance(finished, int)
    if not began - 1 <= started <= finished <= ended:
        raise CaseError(
            "agent", "stamp_impossible",
            f"started {started}, finished {finished}: not inside the step's own clock [{began - 1}, {ended}]",
        )  # fmt: skip
    result = after_arm(case, blind, tree, runtime=float(finished - started))
    result.started_at, result.finished_at = started, finished
    return result


def after_arm(case: Case, blind: Blind, tree: Path, *, runtime: float | None) -> ArmRun:
    """The changes against the pin, the ``.py`` files written and whether they compile, key files deleted."""
    publish = patch_publishable(case.license)
    changes, diff = changes_against_pin(blind.base, tree, case.sha or "HEAD", exclude=RUN_FOLDER, with_diff=publish)
    written = sorted(c.path for c in changes if c.status != "D" and c.path.endswith(".py"))
    key_paths = {row.path for row in case.ground_truth.call_sites} | {row.path for row in case.ground_truth.manifests}
    return ArmRun(
        changes=changes,
        written=written,
        compiles=compiles(tree, written) if written else None,
        missing=missing_files(tree, key_paths),
        findings=[],
        runtime_seconds=runtime,
        diff=diff,
    )


__all__ = [
    "ArmRun",
    "Blind",
    "after_arm",
    "blind_slug",
    "fetch",
    "prepare_blind",
    "run_agent",
    "run_obelize",
    "scan",
]
