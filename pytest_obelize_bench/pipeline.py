"""The worker's side of one case: the protocol's steps in order, and the record they produce.

Each stage runs only if every stage before it succeeded; a ``CaseError`` stops the case
and becomes its ``error`` record, so the round goes on. Grading and tiers are pure
functions of what the stages left on disk.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pytest

from pytest_obelize_bench import __version__
from pytest_obelize_bench.cases import PACK_DISTRIBUTIONS, Case
from pytest_obelize_bench.context import RoundContext
from pytest_obelize_bench.errors import CaseError
from pytest_obelize_bench.outcome import OUTCOME_KEY, CaseOutcome
from pytest_obelize_bench.policy import Step

if TYPE_CHECKING:
    from pytest_obelize_bench.elide import Elider
    from pytest_obelize_bench.environment import Interpreter
    from pytest_obelize_bench.steps import StepRunner
    from pytest_obelize_bench.workspace import Workspace

from pytest_obelize_bench.record import (
    ErrorInfo,
    Provenance,
    Record,
    StepRecord,
    SuiteResult,
    comparable,
    differences,
)

#: The most graded facts (results/round-N/artefacts/<id>.json) one case may publish.
MAX_GRADED_FACTS_BYTES = 5_000_000
#: Left out of a fixture's copy: caches and any evidence folder a previous run left behind.
FIXTURE_COPY_IGNORE = shutil.ignore_patterns("__pycache__", ".pytest_cache", ".obelize", "*.pyc")


@dataclass
class CaseRun:
    """Everything one case has done so far; the fixtures hand it from stage to stage."""

    case: Case
    context: RoundContext
    run_at: str
    attempt_number: int = 1
    workspace: Workspace | None = None
    runner: StepRunner | None = None
    elider: Elider | None = None
    interpreter: Interpreter | None = None
    env: dict[str, str] = field(default_factory=dict)
    error: CaseError | None = None
    crash: str | None = None
    sdk_from: str | None = None
    sdk_to: str | None = None
    packages_sha256: str | None = None
    uv_version: str | None = None
    baseline: SuiteResult = field(default_factory=SuiteResult)
    after: SuiteResult = field(default_factory=SuiteResult)
    artefacts: Any = None
    patch_compiles: bool | None = None
    runtime_seconds: float | None = None

    @property
    def offline(self) -> bool:
        return self.context.mode == "fixtures"

    @property
    def checkout(self) -> Path:
        return self.tree().checkout

    # A stage reads what an earlier stage set; reaching one before it is set is a harness bug.
    def tree(self) -> Workspace:
        return _set(self.workspace, "workspace")

    def steps(self) -> StepRunner:
        return _set(self.runner, "runner")

    def venv(self) -> Interpreter:
        return _set(self.interpreter, "interpreter")

    def limit(self, step: str) -> float:
        """The step's time limit for this round (``--bench-step-timeout`` over the defaults)."""
        from pytest_obelize_bench.limits import limit

        return limit(self.context.step_limits, step)

    def attempt(self, stage: Callable[[], None]) -> CaseRun:
        """Run a stage unless an earlier one failed; turn any failure into this case's error."""
        if self.error is not None:
            return self
        try:
            stage()
        except CaseError as exc:
            self.error = exc
        except KeyboardInterrupt:
            raise  # Ctrl-C or SIGTERM: the controller records the running case as interrupted
        except BaseException as exc:  # a harness bug, or pytest-timeout: still a record
            if _is_pytest_timeout(exc):
                self.error = CaseError("harness", "timeout", "pytest-timeout ended the item; its step was killed")
                return self
            self.error = CaseError("harness", "harness_crashed", f"{type(exc).__name__}: {exc}"[:500])
            self.crash = traceback.format_exc()
        return self


def _is_pytest_timeout(exc: BaseException) -> bool:
    """pytest-timeout's signal method fails the item with ``pytest.fail("Timeout (>Ns) ...")``."""
    return isinstance(exc, pytest.fail.Exception) and "pytest-timeout" in str(exc)


def _utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


# -- stages (the fixtures call these) ---------------------------------------------------


def start_case(case: Case, context: RoundContext, attempt: int = 1) -> CaseRun:
    run = CaseRun(case=case, context=context, run_at=_utc_now(), attempt_number=attempt)

    def stage() -> None:
        from pytest_obelize_bench.elide import Elider
        from pytest_obelize_bench.executor import (
            OfflineExecutor,
            ProcessExecutor,
            step_environment,
        )
        from pytest_obelize_bench.steps import StepRunner
        from pytest_obelize_bench.workspace import check_isolation, prepare_workspace

        if context.refusal is not None:  # remote.py: this worker cannot run the controller's tool
            raise CaseError("harness", "worker_refused", f"{context.worker}: {context.refusal}")
        # A repeat gets a fresh tree of its own: <case>.attempt-N beside the first attempt's <case>.
        folder = case.id if attempt == 1 else f"{case.id}.attempt-{attempt}"
        workspace = prepare_workspace(Path(context.work_root), context.round_label, folder)
        run.workspace = workspace
        from pytest_obelize_bench.policy import uv_binary

        run.elider = Elider(
            [
                ("<case>", workspace.checkout),
                ("<logs>", workspace.logs),
                ("<work>", Path(context.work_root)),
                ("<repo>", Path(context.project_root)),
                ("<harness-python>", Path(sys.executable)),
                ("<harness-uv>", Path(uv_binary())),
                *[("<uv-cache>", Path(p)) for p in (os.environ.get("UV_CACHE_DIR"), context.uv_cache) if p],
                # Last and shortest: the harness's HOME holds pyenv's interpreters and its tools.
                ("<harness-home>", Path.home()),
            ]
        )
        # UV_SYSTEM_CERTS: uv trusts the operating system's certificates, so an install works
        # behind a proxy that re-signs TLS without passing any certificate variable through.
        extra = {
            "PYTHONDONTWRITEBYTECODE": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "UV_PYTHON_DOWNLOADS": "never",
            "UV_SYSTEM_CERTS": "1",
        }
        if not run.offline:
            extra["UV_EXCLUDE_NEWER"] = context.exclude_newer or ""
            if context.uv_cache and "UV_CACHE_DIR" not in os.environ:
                extra["UV_CACHE_DIR"] = context.uv_cache
        run.env = step_environment(os.environ, home=workspace.home, extra=extra)
        from pytest_obelize_bench.sandbox import sandbox_for_case

        executor = sandbox_for_case(ProcessExecutor(), context, case, workspace, run.env)
        run.runner = StepRunner(
            OfflineExecutor(executor) if run.offline else executor,
            logs=workspace.logs,
            elider=run.elider,
            env=run.env,
            cwd=workspace.checkout.parent,
        )
        check_isolation(workspace.checkout)

    return run.attempt(stage)


def stage_checkout(run: CaseRun) -> CaseRun:
    def stage() -> None:
        case = run.case
        if run.offline:
            shutil.copytree(Path(case.source or ""), run.checkout, symlinks=True, ignore=FIXTURE_COPY_IGNORE)
            return
        from pytest_obelize_bench.checkout import fetch_checkout

        owner, _, name = (case.full_name or "").partition("/")
        fetch_checkout(
            run.steps(),
            url=case.repo or "",
            sha=case.sha or "",
            dest=run.checkout,
            cache=Path(run.context.repo_cache) if run.context.repo_cache else None,
            owner=owner,
            name=name,
            timeout=run.limit("fetch"),
        )

    return run.attempt(stage)


def stage_venv(run: CaseRun) -> CaseRun:
    def stage() -> None:
        from pytest_obelize_bench.environment import (
            Interpreter,
            case_environment,
            create_venv,
            uv_version,
        )

        if run.offline:
            run.interpreter = Interpreter(
                requested="",
                used="",
                executable=Path(sys.executable),
                build=" ".join(sys.version.split()),
                machine=platform.machine(),
            )
            return
        run.uv_version = uv_version()
        venv = run.checkout / ".venv"
        run.interpreter = create_venv(
            run.steps(),
            key=run.case.python or "",
            policy=run.context.interpreter_policy,
            venv=venv,
            search_path=[Path(p) for p in run.context.python_search],
            timeout=run.limit("venv"),
        )
        run.env = case_environment(run.env, venv)
        run.steps().env = run.env

    return run.attempt(stage)


def stage_legacy_sdk(run: CaseRun) -> CaseRun:
    def stage() -> None:
        if run.offline:
            return
        from pytest_obelize_bench.environment import (
            install_pinned,
            run_install_commands,
        )

        case = run.case
        run_install_commands(
            run.steps(),
            case.install,
            interpreter=run.venv().executable,
            checkout=run.checkout,
            timeout=run.limit("install"),
        )
        legacy, _ = PACK_DISTRIBUTIONS[case.pack]
        run.sdk_from = _reused(
            run,
            [f"{legacy}=={case.from_version}"],
            lambda offline: install_pinned(
                run.steps(),
                number=Step.INSTALL_FROM,
                name="install-from",
                distribution=legacy,
                version=case.from_version or "",
                interpreter=run.venv().executable,
                timeout=run.limit("install"),
                offline=offline,
            ),
        )

    return run.attempt(stage)


# -- hook: environment reuse (envreuse.py) ------------------------------------------------
def _reused(run: CaseRun, installs: list[str], install: Callable[[bool], str]) -> str:
    """A pinned install, offline when an identical environment was resolved (see envreuse.py)."""
    from pytest_obelize_bench.envreuse import Marks, environment_key, reuse_install

    key = environment_key(
        interpreter_used=run.venv().used,
        exclude_newer=run.context.exclude_newer,
        uv_cache=run.env.get("UV_CACHE_DIR"),
        commands=run.case.install,
        installs=installs,
    )
    marks = Marks(Path(run.context.work_root))
    return reuse_install(install, marks=marks, key=key, exclude_newer=run.context.exclude_newer)


def _set[T](value: T | None, name: str) -> T:
    if value is None:
        raise RuntimeError(f"the case's {name} is used before the stage that sets it ran")
    return value


# -- steps 5 to 10 ---------------------------------------------------------------------


def _suite(run: CaseRun, phase: Literal["baseline", "after"], number: int) -> SuiteResult:
    from pytest_obelize_bench.suite import run_suite

    return run_suite(
        run.steps(),
        phase=phase,
        number=number,
        test_cmd=run.case.test_cmd,
        interpreter=run.venv().executable,
        junit_dir=run.tree().logs / "junit",
        timeout=run.limit(phase),
        cwd=run.checkout,
    )


def run_steps(run: CaseRun) -> None:
    """Steps 5 to 8; each one only if everything before it succeeded."""
    from pytest_obelize_bench.evidence_copy import copy_artefacts, patch_publishable
    from pytest_obelize_bench.fix_step import run_fix
    from pytest_obelize_bench.suite import compile_written
    from pytest_obelize_bench.tool_info import ToolInfo

    case = run.case

    def baseline() -> None:
        run.baseline = _suite(run, "baseline", Step.BASELINE)

    def fix() -> None:
        tool = ToolInfo.from_json(json.dumps(run.context.tool))
        fixed = run_fix(run.steps(), tool, checkout=run.checkout, pack=case.pack, timeout=run.limit("fix"))
        run.artefacts, run.runtime_seconds = fixed.artefacts, fixed.runtime_s
        copy_artefacts(fixed.folder, run.tree().artefacts, publish_patch=patch_publishable(case.license))
        from pytest_obelize_bench.graded_facts import artefacts_to_json

        size = len(artefacts_to_json(run.artefacts).encode("utf-8"))
        if size > MAX_GRADED_FACTS_BYTES:
            run.artefacts = None
            raise CaseError(
                "fix",
                "run_folder_unreadable",
                f"the run folder's graded facts are {size / 1e6:.1f} MB, over "
                f"the {MAX_GRADED_FACTS_BYTES / 1e6:.0f} MB "
                "a published round keeps per case",
            )

    def compile_step() -> None:
        run.patch_compiles = compile_written(
            run.steps(),
            interpreter=run.venv().executable,
            checkout=run.checkout,
            written=run.artefacts.written,
            timeout=run.limit("compile"),
        )

    def new_sdk() -> None:
        if run.offline:
            return
        from pytest_obelize_bench.environment import install_pinned, packages_digest

        legacy, new = PACK_DISTRIBUTIONS[case.pack]
        run.sdk_to = _reused(
            run,
            [f"{legacy}=={case.from_version}", f"{new}=={case.to_version}"],
            lambda offline: install_pinned(
                run.steps(),
                number=Step.INSTALL_TO,
                name="install-to",
                distribution=new,
                version=case.to_version or "",
                interpreter=run.venv().executable,
                timeout=run.limit("install"),
                offline=offline,
            ),
        )
        run.packages_sha256 = packages_digest(run.steps(), interpreter=run.venv().executable, checkout=run.checkout)

    def after() -> None:
        run.after = _suite(run, "after", Step.AFTER)

    for stage in (baseline, fix, compile_step, new_sdk, after):
        run.attempt(stage)


def _sandbox_label(run: CaseRun) -> str:
    from pytest_obelize_bench.sandbox import Settings, provenance_label

    settings = Settings.from_json(run.context.sandbox)
    return provenance_label(settings, suites_network=run.case.tests_require_network, offline=run.offline)


def _content_key(run: CaseRun) -> str | None:
    """The key ``--bench-resume`` compares; only a round case whose venv was made has one."""
    if run.offline or run.interpreter is None or not run.interpreter.used:
        return None
    from pytest_obelize_bench.content_key import content_key

    context = run.context
    return content_key(
        run.case,
        tool=context.tool,
        packs=context.packs,
        interpreter_used=run.interpreter.used,
        exclude_newer=context.exclude_newer,
        sandbox=_sandbox_label(run),
        harness=context.harness,
        harness_version=__version__,
        attempt=run.attempt_number,
    )


def build_record(run: CaseRun) -> Record:
    """Step 9 and 10: grade what is on disk, compute the tier, and name every provenance field."""
    from pytest_obelize_bench.grade import grade
    from pytest_obelize_bench.tiers import tier

    case, context = run.case, run.context
    measurements = grade(
        case,
        run.artefacts,
        baseline=run.baseline,
        after=run.after,
        patch_compiles=run.patch_compiles,
        runtime_seconds=run.runtime_seconds,
    )
    error = None
    if run.error is not None:
        from pytest_obelize_bench.elide import public_detail

        detail = public_detail(run.error.detail, run.elider, os.environ.items())
        error = ErrorInfo(step=run.error.step, reason=run.error.reason, detail=detail)
    tool = context.tool or {}
    pack = context.packs.get(case.pack, {})
    interpreter = run.interpreter
    executable = None
    if interpreter is not None and run.elider is not None:
        executable = run.elider.text(str(interpreter.executable))
    provenance = Provenance(
        obelize_version=tool.get("version"),
        obelize_commit=tool.get("commit"),
        obelize_tree_dirty=tool.get("tree_dirty"),
        pack=case.pack,
        pack_sha256=pack.get("pack_sha256"),
        spec_sha256=pack.get("spec_sha256"),
        python=case.python if case.origin == "corpus" else None,
        python_used=(interpreter.used or None) if interpreter is not None else None,
        python_executable=executable,
        python_build=interpreter.build if interpreter is not None else None,
        machine=interpreter.machine if interpreter is not None else platform.machine(),
        os=platform.system(),
        sdk_from=run.sdk_from,
        sdk_to=run.sdk_to,
        uv_version=run.uv_version,
        exclude_newer=None if run.offline else context.exclude_newer,
        packages_sha256=run.packages_sha256,
        run_at=run.run_at,
        harness_version=context.harness.get("version", __version__),
        harness_commit=context.harness.get("commit"),
        harness_tree_dirty=context.harness.get("tree_dirty"),
        allow_dirty=context.allow_dirty if context.mode == "round" else None,
        sandbox=_sandbox_label(run),
        content_key=_content_key(run),  # hook: resume (content_key.py)
        worker=context.worker,
    )
    steps = [] if run.runner is None else [StepRecord(**step.to_json()) for step in run.runner.steps]
    return Record(
        case=case.id,
        origin=case.origin,
        control=case.control,
        split=case.split,
        error=error,
        measurements=measurements,
        steps=steps,
        provenance=provenance,
        tier=tier(error, measurements),
        attempt=run.attempt_number,
    )


def finish_case(run: CaseRun, item: pytest.Item) -> None:
    """The item's body: run, grade, hand the record to the report, then judge fixtures."""
    if run.error is None:
        run_steps(run)
    record = build_record(run)
    error_line = None
    if record.error is not None:
        error = record.error
        error_line = f"the case errored at step {error.step}: {error.reason}: {error.detail}"
        if run.workspace is not None:  # the terminal shows paths resolved; the record keeps its labels
            error_line = error_line.replace("<logs>", str(run.tree().logs)) + f" (logs: {run.tree().logs})"
    artefacts_json = None
    if run.artefacts is not None:
        from pytest_obelize_bench.graded_facts import artefacts_to_json

        artefacts_json = artefacts_to_json(run.artefacts)
    item.stash[OUTCOME_KEY] = CaseOutcome(
        case_id=record.case,
        record_json=record.to_json(),
        tier=record.tier,
        error_line=error_line,
        artefacts_json=artefacts_json,
    )
    if run.workspace is not None:
        (run.tree().logs / "record.json").write_text(record.to_json(), encoding="utf-8")
    if run.crash is not None:
        pytest.fail(
            f"the harness crashed inside this case (its record says harness_crashed):\n{run.crash}", pytrace=False
        )
    if run.offline:
        if item.config.getoption("--bench-update-expected"):
            write_expected(run.case, record)
        else:
            check_expected(run.case, record)


def write_expected(case: Case, record: Record) -> None:
    """Rewrite a fixture's expected.json from this run (when obelize changed on purpose)."""
    import json

    from pytest_obelize_bench.safe_io import write_atomically

    write_atomically(expected_path(case), json.dumps(comparable(record), indent=2, sort_keys=True) + "\n")


def expected_path(case: Case) -> Path:
    return Path(case.source or "").parent / "expected.json"


def check_expected(case: Case, record: Record) -> None:
    """A fixture must reproduce its committed expected.json over the comparable view."""
    import json

    path = expected_path(case)
    if not path.is_file():
        pytest.fail(f"{path} is missing; write it with `obelize-bench fixtures --update`", pytrace=False)
    try:
        want = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        pytest.fail(f"{path}: not JSON: {exc}", pytrace=False)
    lines = differences(comparable(record), want)
    if lines:
        pytest.fail(f"{case.id} differs from {path}:\n  " + "\n  ".join(lines), pytrace=False)
