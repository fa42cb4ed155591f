"""One repository of a Gate 1 scan or a fix dry run: its workspace, checkout and obelize step.

The same isolation as a round case: a work folder of its own, a HOME of its own, the allow-listed
environment, every step through the executor (process group, capped log), the checkout fetched at
its pin through the shared repository cache.  No virtualenv is built: obelize runs from the tool
the session resolved, and nothing of the repository is installed or executed.  What obelize
writes is read bounded and untrusted, through ``runfolder``'s readers.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench._util.strict_model import FrozenModel
from pytest_obelize_bench.case.checkout import fetch_checkout
from pytest_obelize_bench.case.kinds import FIXTURE_COPY_IGNORE
from pytest_obelize_bench.case.work_folder import stage
from pytest_obelize_bench.isolation.executor import OfflineExecutor, ProcessExecutor
from pytest_obelize_bench.isolation.gitquery import HarnessInfo
from pytest_obelize_bench.isolation.policy import DEFAULT_LIMITS, MeasureStep
from pytest_obelize_bench.isolation.steps import StepRunner
from pytest_obelize_bench.isolation.workspace import check_isolation
from pytest_obelize_bench.measure.frame import FrameRepository
from pytest_obelize_bench.tool.adapter import OBELIZE
from pytest_obelize_bench.tool.info import ToolInfo
from pytest_obelize_bench.tool.invoke import run_tool
from pytest_obelize_bench.tool.packs import PackInfo
from pytest_obelize_bench.tool.run_documents import path_problem

SCAN_TIMEOUT_S = 900.0
FIX_TIMEOUT_S = DEFAULT_LIMITS["fix"]
PROBE_TIMEOUT_S = 300.0
FETCH_TIMEOUT_S = DEFAULT_LIMITS["fetch"]
WORKERINPUT_KEY = "obelize_bench_measure"

#: Runs in the tool's interpreter from the checkout's parent: what the repository declares about
#: its Python, read by obelize's own scan/runtime.py (the protocol's instrument for that figure).
RUNTIME_PROGRAM = """\
import json, sys
from pathlib import Path
out = {"answered": False, "declared": None, "path": None, "blocked": False}
try:
    from obelize import config as configuration
    from obelize.packs import loader
    from obelize.scan import runner, runtime
    root = Path(sys.argv[1])
    spec = loader.to_scan_spec(loader.load(sys.argv[2]))
    scanned = configuration.with_fixture_dirs(configuration.load(root).config, root, [])
    tree = runner.read(root, scanned, (spec,))
    floor = runtime.detect(tuple(tree.walk.manifests), tree.contents, spec)
    if floor.declared is not None:
        out["declared"] = str(floor.declared.declared)
        out["path"] = str(floor.declared.path)
    out["blocked"] = floor.blocked is not None
    out["answered"] = True
except Exception as exc:
    out["problem"] = (type(exc).__name__ + ": " + str(exc))[:300]
print(json.dumps(out))
"""


class MeasureContext(FrozenModel):
    """What every worker of a Gate 1 or dry-run session shares, computed once on the controller."""

    mode: str  # "gate1" or "dryrun"
    pack: str
    frame_path: str
    labels_dir: str | None
    results_dir: str
    work_root: str
    project_root: str
    repo_cache: str | None = None
    tool: ToolInfo | None = None
    #: what the tool says of the pack (None when the session resolved no tool)
    pack_provenance: PackInfo | None = None
    harness: HarnessInfo = HarnessInfo()
    run_at: str | None = None

    @property
    def label(self) -> str:
        """The work folder's name for this measurement (one component)."""
        return "gate1" if self.mode == "gate1" else "dryrun-" + self.pack.replace("/", "__")

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str) -> MeasureContext:
        return cls.model_validate_json(text)


@dataclass
class RepoRun:
    """One repository's workspace and step runner, and the first error that stopped it."""

    repo: FrameRepository
    offline: bool
    workspace: Any = None
    runner: Any = None
    elider: Any = None
    error: CaseError | None = None

    @property
    def checkout(self) -> Path:
        return Path(self.workspace.checkout)


def _executor(offline: bool) -> Any:
    """The executor every step of a measurement goes through (the offline one for fixtures)."""
    executor = ProcessExecutor()
    return OfflineExecutor(executor) if offline else executor


def prepare(repo: FrameRepository, context: MeasureContext, *, frame_dir: Path) -> RepoRun:
    """Workspace, runner and checkout at the pin (or the fixture's copy); errors are kept, not raised."""
    run = RepoRun(repo=repo, offline=repo.path is not None)
    try:
        staged = stage(
            Path(context.work_root),
            context.label,
            repo.id,
            project_root=Path(context.project_root),
            variables={"COLUMNS": "120", "NO_COLOR": "1"},
        )
        workspace = run.workspace = staged.workspace
        run.elider, env = staged.elider, staged.env
        run.runner = StepRunner(
            _executor(run.offline), logs=workspace.logs, elider=run.elider, env=env, cwd=workspace.checkout.parent
        )
        check_isolation(workspace.checkout)
        if repo.path is not None:
            shutil.copytree(frame_dir / repo.path, workspace.checkout, symlinks=True, ignore=FIXTURE_COPY_IGNORE)
        else:
            owner, _, name = repo.full_name.partition("/")
            fetch_checkout(
                run.runner,
                url=repo.url or "",
                sha=repo.sha or "",
                dest=workspace.checkout,
                cache=Path(context.repo_cache) if context.repo_cache else None,
                owner=owner,
                name=name,
                timeout=FETCH_TIMEOUT_S,
            )
    except CaseError as exc:
        run.error = exc
    except ValueError as exc:  # an unsafe id or owner name
        run.error = CaseError("fetch", "fetch_failed", str(exc)[:300])
    return run


def _tool_argv(context: MeasureContext) -> list[str]:
    if context.tool is None:
        raise CaseError("harness", "harness_crashed", "the session resolved no obelize")
    return list(context.tool.argv_prefix)


def _obelize(run: RepoRun, *, name: str, argv: list[str], timeout: float) -> tuple[Path, float]:
    """One obelize command in the checkout: the run folder it wrote, and the seconds it took."""
    done = run_tool(
        run.runner, number=MeasureStep.OBELIZE, name=name, argv=argv, checkout=run.checkout, timeout=timeout
    )
    return done.folder, done.duration_s


def run_scan(run: RepoRun, context: MeasureContext) -> tuple[Path, float]:
    """``obelize scan --pack <pack> --json`` (exit 0 always, without --fail-on): (run folder, seconds)."""
    argv = OBELIZE.scan_argv(_tool_argv(context), checkout=run.checkout, pack=context.pack)
    return _obelize(run, name="scan", argv=argv, timeout=SCAN_TIMEOUT_S)


def run_dry_fix(run: RepoRun, context: MeasureContext) -> tuple[Path, float]:
    """``obelize fix --pack <pack> --model none --json`` without ``--apply``: a dry run exits 0."""
    argv = OBELIZE.fix_argv(_tool_argv(context), checkout=run.checkout, pack=context.pack, apply=False)
    return _obelize(run, name="fix", argv=argv, timeout=FIX_TIMEOUT_S)


def declared_python(run: RepoRun, context: MeasureContext) -> dict[str, Any] | None:
    """What the repository declares about its Python, or None when the tool could not say."""
    if context.tool is None:
        return None
    argv = [context.tool.python, "-I", "-c", RUNTIME_PROGRAM, os.fspath(run.checkout), context.pack]
    completed = run.runner.run(MeasureStep.RUNTIME, "runtime", argv, timeout=PROBE_TIMEOUT_S, cwd=run.checkout.parent)
    if completed.timed_out or completed.exit_code != 0:
        return None
    try:
        answer = json.loads(completed.output(1 << 16).strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None
    if not isinstance(answer, dict) or answer.get("answered") is not True:
        return None
    declared, path, blocked = answer.get("declared"), answer.get("path"), answer.get("blocked")
    if declared is not None and (not isinstance(declared, str) or len(declared) > 200):
        return None
    if path is not None and (not isinstance(path, str) or path_problem(path) is not None):
        return None
    if not isinstance(blocked, bool):
        return None
    return {"declared": declared, "path": path, "blocked": blocked}


__all__ = [
    "MeasureContext",
    "RepoRun",
    "declared_python",
    "prepare",
    "run_dry_fix",
    "run_scan",
]
