"""One comparison item on the worker, and the record the controller writes from all of them.

The item runs both arms on their own blind copies, then the one instrument over all three trees;
whatever stops an arm becomes that arm's error on the case, and the other arm goes on.  The
controller writes ``results/comparison/round-N.json`` only when every dev case ran.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench._util.clock import utc_now
from pytest_obelize_bench._util.digests import sha256_text
from pytest_obelize_bench._util.safe_io import write_atomically
from pytest_obelize_bench.casefile.cases import Case
from pytest_obelize_bench.comparison.agent_steps import (
    Blind,
    blind_slug,
    fetch,
    prepare_blind,
    run_agent,
    run_obelize,
    scan,
)
from pytest_obelize_bench.comparison.arm import PromptError, render_prompt
from pytest_obelize_bench.comparison.arm_context import ComparisonContext
from pytest_obelize_bench.comparison.rows import (
    BASE,
    OBELIZE,
    ArmError,
    CaseComparison,
    ComparisonRecord,
    Guide,
    ObelizePass,
    Repeat,
    TestsAfter,
    dump_comparison,
)
from pytest_obelize_bench.comparison.suite_run import run_suites
from pytest_obelize_bench.isolation.machine import this_machine
from pytest_obelize_bench.isolation.public_text import public_text
from pytest_obelize_bench.isolation.workspace import keeps_checkout


def _given(ctx: ComparisonContext, blind: Blind, tree: Path, meta: Path, name: str) -> tuple[Path, str]:
    """The guide snapshot and the rendered prompt under ``given``: (prompt path, its sha256)."""
    guide = blind.given / ("guide" + Path(ctx.guide_path).suffix)
    if not guide.exists():
        shutil.copyfile(ctx.guide_path, guide)
    text = render_prompt(ctx.template, tree=tree, guide=guide, meta=meta)
    prompt = blind.given / name
    prompt.write_text(text, encoding="utf-8")
    return prompt, sha256_text(text)


def _error(arm: str, exc: CaseError) -> ArmError:
    """The arm's published error; its detail quotes a step's output (its runner labelled the
    harness's paths), so every other path and the machine's names are labelled too."""
    detail = public_text(exc.detail, None, os.environ.items(), this_machine())
    return ArmError(arm=arm, step=exc.step, reason=exc.reason, detail=detail[:300])


def run_case(case: Case, ctx: ComparisonContext, *, repeat: bool) -> CaseComparison:
    """Both arms on one case; never raises a ``CaseError`` (it becomes the arm's error).

    The blind folders hold three copies of the repository outside the work root. Once the row is
    made, the case's step logs, rendered prompt and the agent's meta folder are copied to
    ``<work>/comparison/<case>.logs``, and the blind folders are removed as ``--bench-keep``
    says for a round's checkout: kept with ``all``, or with ``failed`` when an arm errored.
    """
    blind = prepare_blind(Path(ctx.blind_root), case.id)
    row: CaseComparison | None = None
    try:
        row = _run_blind(case, ctx, blind, repeat=repeat)
        return row
    finally:
        kept = keeps_checkout(ctx.keep or "failed", row is None or bool(row.errors))
        keep_logs(blind, Path(ctx.work_root) / "comparison" / f"{case.id}.logs", clear=not kept)


def keep_logs(blind: Blind, logs: Path, *, clear: bool) -> None:
    """Copy what a reader needs afterwards under the work root; with ``clear``, remove the blind
    folders (and their root once no other case's are left in it)."""
    if logs.exists():
        shutil.rmtree(logs)
    for name in ("logs", "given", "meta"):
        if (blind.folder / name).is_dir():
            shutil.copytree(blind.folder / name, logs / name, symlinks=True)
    if clear:
        shutil.rmtree(blind.folder, ignore_errors=True)
        with contextlib.suppress(OSError):
            blind.folder.parent.rmdir()


def _run_blind(case: Case, ctx: ComparisonContext, blind: Blind, *, repeat: bool) -> CaseComparison:
    agent = ctx.arm.name
    findings: dict[str, list[Any]] = {}
    errors: list[ArmError] = []
    prompt_sha = None
    try:
        fetch(case, ctx, blind)
        prompt, prompt_sha = _given(ctx, blind, blind.tree, blind.meta, "prompt.md")
        findings[BASE] = scan(ctx, blind, blind.base, "base", case.pack)
    except (CaseError, PromptError) as exc:
        failure = exc if isinstance(exc, CaseError) else CaseError("prompt", "harness_crashed", str(exc))
        errors = [_error(agent, failure), _error(OBELIZE, failure)]
        return _row(case, findings, errors, prompt_sha, None, None, None)
    ours = None
    try:
        run, planned = run_obelize(case, ctx, blind)
        findings[OBELIZE] = scan(ctx, blind, blind.obelize, "obelize", case.pack)
        ours = (run, planned)
    except CaseError as exc:
        errors.append(_error(OBELIZE, exc))
    theirs = None
    try:
        theirs = run_agent(case, ctx, blind, blind.tree, blind.meta, prompt)
        findings[agent] = scan(ctx, blind, blind.tree, "agent", case.pack)
    except CaseError as exc:
        errors.append(_error(agent, exc))
    again = _repeat(case, ctx, blind) if repeat else None
    row = _row(case, findings, errors, prompt_sha, ours, theirs, again)
    return _with_suites(row, case, ctx, {agent: blind.tree} if theirs else {}, {OBELIZE: blind.obelize} if ours else {})


def _with_suites(
    row: CaseComparison, case: Case, ctx: ComparisonContext, agent: dict[str, Path], ours: dict[str, Path]
) -> CaseComparison:
    """The row with the baseline and each arm's after-run (suite_run.py) filled in."""
    suites = run_suites(case, ctx, {**agent, **ours})
    update: dict[str, Any] = {"tests_baseline": suites.baseline}
    if suites.error is not None:
        step, _, reason = suites.error.partition(": ")
        failed = [ArmError(arm=arm, step=step, reason=reason) for arm in (*agent, *ours)]
        update["errors"] = [*row.errors, *failed]
    for arm, result in suites.after.items():
        if arm == OBELIZE and row.obelize is not None:
            update["obelize"] = row.obelize.model_copy(update={"tests_after": result})
        elif arm != OBELIZE:
            update["tests_after"] = TestsAfter(**result.model_dump(), sdk_to=suites.sdk_to)
    return row.model_copy(update=update)


def _repeat(case: Case, ctx: ComparisonContext, blind: Blind) -> Repeat | None:
    """The agent a second time from the same bytes in a fresh tree; None when it measured nothing."""
    tree, meta = blind.second()
    shutil.copytree(blind.base, tree, symlinks=True, ignore=shutil.ignore_patterns(".obelize"))
    meta.mkdir()
    try:
        prompt, _ = _given(ctx, blind, tree, meta, "prompt-2.md")
        run = run_agent(case, ctx, blind, tree, meta, prompt)
        found = scan(ctx, blind, tree, "agent-2", case.pack)
    except (CaseError, PromptError):
        return None
    return Repeat(
        changes=run.changes,
        findings=found,
        started_at=run.started_at,
        finished_at=run.finished_at,
        runtime_seconds=run.runtime_seconds,
    )


def _row(
    case: Case,
    findings: dict[str, list[Any]],
    errors: list[ArmError],
    prompt_sha: str | None,
    ours: Any,
    theirs: Any,
    again: Repeat | None,
) -> CaseComparison:
    obelize = None
    if ours is not None:
        run, planned = ours
        obelize = ObelizePass(
            runtime_seconds=run.runtime_seconds,
            written=run.written,
            compiles=run.compiles,
            missing_key_files=run.missing,
            plan_migrated=planned,
        )
    return CaseComparison(
        slug=blind_slug(case.id),
        changes=theirs.changes if theirs is not None else [],
        compiles=theirs.compiles if theirs is not None else None,
        findings=findings,
        started_at=theirs.started_at if theirs is not None else None,
        finished_at=theirs.finished_at if theirs is not None else None,
        runtime_seconds=theirs.runtime_seconds if theirs is not None else None,
        missing_key_files=theirs.missing if theirs is not None else [],
        obelize_changes=ours[0].changes if ours is not None else [],
        repeat=again,
        tests_after=None,
        written=theirs.written if theirs is not None else [],
        obelize=obelize,
        errors=errors,
        prompt_sha256=prompt_sha,
        diffs={
            arm: run.diff
            for arm, run in (("obelize", ours[0] if ours else None), ("general_agent", theirs))
            if run is not None and run.diff
        },
    )


def item_status(row: CaseComparison, agent: str) -> tuple[str, str, str]:
    """The terminal's (category, letter, word) for a finished case."""
    if row.errors:
        arms = ", ".join(sorted({error.arm for error in row.errors}))
        return "compare-error", "!", f"ERROR ({arms}: {row.errors[0].reason})"
    return "compared", "c", f"COMPARED (agent {len(row.changes)} files, obelize {len(row.obelize_changes)} files)"


def build_record(
    ctx: ComparisonContext, rows: Mapping[str, CaseComparison], *, prepared_at: str | None = None
) -> ComparisonRecord:
    """The comparison record of a whole dev split, in upstream's shape plus this harness's fields."""
    prompts = {row.prompt_sha256 for row in rows.values() if row.prompt_sha256}
    guide = ctx.arm.guide
    return ComparisonRecord(
        schema_version=1,
        round=ctx.round,
        prepared_at=prepared_at or utc_now(),
        arms=sorted([ctx.arm.name, OBELIZE]),
        guide=Guide(url=guide.url, fetched_at=guide.fetched_at, sha256=ctx.guide_sha256, bytes=ctx.guide_bytes),
        cases=dict(sorted(rows.items())),
        exclude_newer=ctx.exclude_newer,
        # One digest for the template the prompts were rendered from; each case keeps its own rendering's.
        prompt_sha256=ctx.template_sha256 if prompts else None,
        arm_file_sha256=ctx.arm_sha256,
    )


def write_record(results_dir: Path, record: ComparisonRecord) -> Path:
    path = Path(results_dir) / "comparison" / f"round-{record.round}.json"
    write_atomically(path, dump_comparison(record))
    return path


__all__ = ["build_record", "item_status", "run_case", "write_record"]
