"""The worker's side of one case: the protocol's steps in order, and the record they produce.

Each stage runs only if every stage before it succeeded; a ``CaseError`` stops the case
and becomes its ``error`` record, so the round goes on. Grading and tiers are pure
functions of what the stages left on disk.
"""

from __future__ import annotations

import contextlib
import os
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pytest_obelize_bench import __version__
from pytest_obelize_bench._util.caps import GRADED_FACTS_BYTES
from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench.case.context import RoundContext
from pytest_obelize_bench.case.run import CaseRun
from pytest_obelize_bench.casefile.cases import Case
from pytest_obelize_bench.casefile.reviews import ReviewBook
from pytest_obelize_bench.casefile.schema import Review
from pytest_obelize_bench.isolation.policy import Step
from pytest_obelize_bench.isolation.sandbox import SandboxExecutor, case_layout, harness_paths

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pytest_obelize_bench.isolation.executor import Executor
    from pytest_obelize_bench.isolation.workspace import Workspace

from pytest_obelize_bench._util.clock import utc_now
from pytest_obelize_bench.case.content_key import content_key
from pytest_obelize_bench.case.environment import UNSANDBOXED_LINKS
from pytest_obelize_bench.case.kinds import kind_for
from pytest_obelize_bench.case.suite import compile_written, run_suite
from pytest_obelize_bench.case.work_folder import stage as stage_workspace
from pytest_obelize_bench.casefile.reviews import ReviewFileError, load_reviews, review_for, reviews_for_case
from pytest_obelize_bench.grading.attempts import attempt_stem
from pytest_obelize_bench.grading.grade import grade
from pytest_obelize_bench.grading.graded_facts import artefacts_to_json
from pytest_obelize_bench.grading.record import (
    ErrorInfo,
    Provenance,
    Record,
    StepRecord,
    SuiteResult,
)
from pytest_obelize_bench.grading.tiers import tier
from pytest_obelize_bench.isolation.executor import ProcessExecutor
from pytest_obelize_bench.isolation.machine import this_machine
from pytest_obelize_bench.isolation.public_text import public_detail, public_text
from pytest_obelize_bench.isolation.sandbox import provenance_label
from pytest_obelize_bench.isolation.steps import StepRunner
from pytest_obelize_bench.isolation.workspace import check_isolation
from pytest_obelize_bench.tool.evidence_copy import copy_artefacts, patch_digest, patch_publishable, published_beside
from pytest_obelize_bench.tool.fix_step import run_fix

#: The most graded facts (results/round-N/artefacts/<id>.json) one case may publish: the one cap
#: their readers use, so whatever a case publishes can be read back.
MAX_GRADED_FACTS_BYTES = GRADED_FACTS_BYTES


def sandbox_for_case(
    inner: Executor, context: RoundContext, case: Case, workspace: Workspace, env: Mapping[str, str]
) -> Executor:
    """``inner`` wrapped for this case when the session's sandbox is on, else ``inner`` itself.

    ``env`` is the step environment: its cache variables name the caches a step may write.
    """
    settings = context.sandbox
    if not settings.enabled or settings.program is None:
        return inner
    tool = context.tool
    paths = harness_paths(
        project_root=context.project_root,
        results=context.results_dir,
        work_root=context.work_root,
        templates=context.templates_dir,
        tool_python=None if tool is None else tool.python,
        tool_checkout=None if tool is None else tool.checkout,
    )
    layout = case_layout(
        paths,
        checkout=workspace.checkout,
        home=workspace.home,
        tmp=workspace.tmp,
        junit=workspace.logs / "junit",
        env=env,
        uv_cache=context.uv_cache,
        suites_network=bool(case.tests_require_network),
        offline=context.mode == "fixtures",
    )
    return SandboxExecutor(inner, program=settings.program, layout=layout)


# -- stages (the fixtures call these) ---------------------------------------------------


def start_case(case: Case, context: RoundContext, attempt: int = 1, reviews: ReviewBook | None = None) -> CaseRun:
    own = case.origin == "fixture"  # a fixture's answers are in its own reviews.yaml
    run = CaseRun(
        case=case,
        context=context,
        run_at=utc_now(),
        kind=kind_for(context),
        attempt_number=attempt,
        reviews=None if own else reviews,
    )

    def stage() -> None:
        if context.refusal is not None:  # remote.py: this worker cannot run the controller's tool
            raise CaseError("harness", "worker_refused", f"{context.worker}: {context.refusal}")
        # UV_SYSTEM_CERTS: uv trusts the operating system's certificates, so an install works
        # behind a proxy that re-signs TLS without passing any certificate variable through.
        variables = {"UV_PYTHON_DOWNLOADS": "never", "UV_SYSTEM_CERTS": "1", **run.kind.step_variables(context)}
        if not (context.sandbox.enabled and context.sandbox.program):
            variables.update(UNSANDBOXED_LINKS)  # no case can write into the shared uv cache through its venv
        # A repeat gets a fresh tree of its own: <case>.attempt-N beside the first attempt's <case>.
        staged = stage_workspace(
            Path(context.work_root),
            context.round_label,
            attempt_stem(case.id, attempt),
            project_root=Path(context.project_root),
            uv_cache=context.uv_cache,
            variables=variables,
        )
        workspace = run.workspace = staged.workspace
        run.elider, run.env = staged.elider, staged.env

        executor = sandbox_for_case(ProcessExecutor(), context, case, workspace, run.env)
        if isinstance(executor, SandboxExecutor):
            run.sandbox = executor
        run.runner = StepRunner(
            run.kind.wrap(executor),
            logs=workspace.logs,
            elider=run.elider,
            env=run.env,
            cwd=workspace.checkout.parent,
        )
        check_isolation(workspace.checkout)

    return run.attempt(stage)


def stage_checkout(run: CaseRun) -> CaseRun:
    return run.attempt(lambda: run.kind.checkout(run))


def stage_venv(run: CaseRun) -> CaseRun:
    return run.attempt(lambda: run.kind.venv(run))


def stage_legacy_sdk(run: CaseRun) -> CaseRun:
    return run.attempt(lambda: run.kind.legacy_sdk(run))


# -- steps 5 to 10 ---------------------------------------------------------------------


def _suite(run: CaseRun, phase: Literal["baseline", "after"], number: int) -> SuiteResult:
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
    case = run.case

    def baseline() -> None:
        run.baseline = _suite(run, "baseline", Step.BASELINE)

    def fix() -> None:
        tool = run.context.tool
        if tool is None:
            raise CaseError("harness", "harness_crashed", "the session resolved no obelize")
        fixed = run_fix(run.steps(), tool, checkout=run.checkout, pack=case.pack, timeout=run.limit("fix"))
        run.artefacts, run.runtime_seconds = fixed.artefacts, fixed.runtime_s
        copy_artefacts(fixed.folder, run.tree().artefacts, publish_patch=patch_publishable(case.license))
        if run.artefacts is not None and run.artefacts.written:
            run.patch_sha256 = patch_digest(fixed.folder)

        size = len(artefacts_to_json(run.artefacts).encode("utf-8"))
        if size > MAX_GRADED_FACTS_BYTES:
            run.artefacts = None
            raise CaseError(
                "fix",
                "run_folder_unreadable",
                f"the run folder's graded facts are {size:,} bytes, over "
                f"the {MAX_GRADED_FACTS_BYTES:,} bytes a published round keeps per case",
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
        run.kind.new_sdk(run)

    def after() -> None:
        run.after = _suite(run, "after", Step.AFTER)

    for stage in (baseline, fix, compile_step, new_sdk, after):
        run.attempt(stage)


def _sandbox_label(run: CaseRun) -> str:
    return provenance_label(run.context.sandbox, suites_network=run.case.tests_require_network, offline=run.offline)


def _content_key(run: CaseRun) -> str | None:
    """The key ``--bench-resume`` compares; only a round case whose venv was made has one."""
    if run.offline or run.interpreter is None or not run.interpreter.used:
        return None

    context = run.context
    return content_key(
        run.case,
        tool=context.tool,
        packs=context.packs,
        interpreter_used=run.interpreter.used,
        exclude_newer=context.exclude_newer,
        sandbox=_sandbox_label(run),
        harness=context.harness,
        attempt=run.attempt_number,
    )


def patch_review(run: CaseRun) -> Review | None:
    """The review answer for the patch this run wrote, from the answers keyed to patches.

    The file was checked when the session started (``session/startup``); one that has become
    unreadable since gives no answer rather than another patch's.
    """
    context = run.context
    book = run.reviews
    if book is None:
        try:
            book = load_reviews(reviews_for_case(run.case, Path(context.cases_path), context.round))
        except ReviewFileError:
            return None
    return review_for(book, run.case.id, run.patch_sha256)


def build_record(run: CaseRun) -> Record:
    """Step 9 and 10: grade what is on disk, compute the tier, and name every provenance field."""
    case, context = run.case, run.context
    measurements = grade(
        case,
        run.artefacts,
        baseline=run.baseline,
        after=run.after,
        patch_compiles=run.patch_compiles,
        runtime_seconds=run.runtime_seconds,
        review=patch_review(run),
    )
    error = None
    if run.error is not None:
        detail = public_detail(run.error.detail, run.elider, os.environ.items(), this_machine())
        error = ErrorInfo(step=run.error.step, reason=run.error.reason, detail=detail)
    tool = context.tool
    pack = context.packs.get(case.pack)
    interpreter = run.interpreter
    executable = None
    if interpreter is not None and run.elider is not None:
        # As the case interpreter printed it; a path holds no secret, and an environment value
        # that is a path's tail (the shell's ``_``, ``.venv/bin/python``) must not hide its name.
        executable = public_text(str(interpreter.executable), run.elider, (), this_machine())
    provenance = Provenance(
        obelize_version=None if tool is None else tool.version,
        obelize_commit=None if tool is None else tool.commit,
        obelize_tree_dirty=None if tool is None else tool.tree_dirty,
        obelize_exclude_newer=None if tool is None else tool.exclude_newer_tool,
        pack=case.pack,
        pack_sha256=None if pack is None else pack.pack_sha256,
        spec_sha256=None if pack is None else pack.spec_sha256,
        python=case.python if case.origin == "corpus" else None,
        python_used=(interpreter.used or None) if interpreter is not None else None,
        python_executable=executable,
        python_build=interpreter.build if interpreter is not None else None,
        machine=interpreter.machine if interpreter is not None else platform.machine(),
        os=platform.system(),
        sdk_from=run.sdk_from,
        sdk_to=run.sdk_to,
        uv_version=run.uv_version,
        exclude_newer=run.kind.exclude_newer(context),
        packages_sha256=run.packages_sha256,
        run_at=run.run_at,
        harness_version=context.harness.version or __version__,
        harness_commit=context.harness.commit,
        harness_tree_dirty=context.harness.tree_dirty,
        allow_dirty=context.allow_dirty if context.mode == "round" else None,
        sandbox=_sandbox_label(run),
        content_key=_content_key(run),  # hook: resume (content_key.py)
        worker=context.worker,
        patch_sha256=run.patch_sha256,
        env_template=run.env_template,
        env_view=run.env_view,
        env_template_after=run.env_template_after,
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


@dataclass(frozen=True)
class Conclusion:
    """A finished case as the session reports it: its record and, when the item fails, why."""

    record: Record
    #: the line pytest shows for an ``error`` tier (paths resolved; the record keeps its labels).
    error_line: str | None
    #: the graded facts as JSON, for ``regrade`` and error analysis.
    artefacts_json: str | None
    #: why the item fails: a harness crash, or a fixture that missed its expectation.
    failure: str | None
    #: what is published beside the record, by suffix: obelize's patch.diff and the tails of the
    #: suites' logs, when the repository's licence lets them be published (the results pages show them)
    beside: dict[str, str] | None = None


def conclude_case(run: CaseRun, *, update_expected: bool) -> Conclusion:
    """The item's body without pytest: run what is left, grade, keep the record, judge it."""
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
        artefacts_json = artefacts_to_json(run.artefacts)
    if run.workspace is not None:
        # A copy beside the logs, for a reader of the work root; a full disk must not cost the record.
        with contextlib.suppress(OSError):
            (run.tree().logs / "record.json").write_text(record.to_json(), encoding="utf-8")
    if run.crash is not None:
        failure: str | None = f"the harness crashed inside this case (its record says harness_crashed):\n{run.crash}"
    else:
        failure = run.kind.judge(run, record, update_expected=update_expected)
    return Conclusion(record, error_line, artefacts_json, failure, _published_beside(run, record))


def _published_beside(run: CaseRun, record: Record) -> dict[str, str] | None:
    """The patch and the suites' log tails, published beside the record when the licence allows."""
    if run.workspace is None:
        return None
    steps = [step.name for step in record.steps]
    elider, names = run.elider, this_machine()

    def public(text: str) -> str:
        return public_text(text, elider, os.environ.items(), names)

    return published_beside(run.tree().logs, run.case.license, steps, public)
