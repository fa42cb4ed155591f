"""The suites over both arms' trees, run as step 8 runs obelize's in a round.

The round's own stages, unchanged: a workspace of the case's (not the agent's, which never sees
it), the checkout at the pin, a uv venv on the case's interpreter, the reviewed installs, the
legacy SDK, the baseline suite over the untouched tree; then the new SDK beside the legacy one
and, for each arm, its tree swapped into the checkout (the venv and the history stay) and the
suite run again.  Every install resolves as of the round's ``exclude_newer``, every step gets a
step's environment and the case's sandbox.  A case with no test command runs nothing here.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pytest_obelize_bench.case.pipeline import stage_checkout, stage_legacy_sdk, stage_venv, start_case
from pytest_obelize_bench.case.suite import run_suite
from pytest_obelize_bench.casefile.cases import Case
from pytest_obelize_bench.comparison.arm_context import ComparisonContext
from pytest_obelize_bench.grading.record import SuiteResult
from pytest_obelize_bench.isolation.policy import Step

#: Kept in the checkout when an arm's tree is swapped in: the case's venv and the pin's history.
KEPT = frozenset({".venv", ".git"})
#: Never copied from an arm's tree.
SKIPPED = frozenset({".git", ".obelize"})


@dataclass
class Suites:
    """The baseline over the pin, the after-run per arm, and what stopped them, if anything."""

    baseline: SuiteResult | None = None
    after: dict[str, SuiteResult] = field(default_factory=dict)
    sdk_to: str | None = None
    error: str | None = None


def swap_in(checkout: Path, tree: Path) -> None:
    """Make ``checkout`` hold ``tree``'s files, keeping its venv and history."""
    for entry in checkout.iterdir():
        if entry.name in KEPT:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    for entry in tree.iterdir():
        if entry.name in SKIPPED or entry.name in KEPT:
            continue
        target = checkout / entry.name
        if entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, target, symlinks=True)
        else:
            shutil.copy2(entry, target, follow_symlinks=False)


def run_suites(case: Case, ctx: ComparisonContext, trees: Mapping[str, Path]) -> Suites:
    """Baseline over the pin, then each arm's after-run; never raises for a case's failure."""
    suites = Suites()
    if case.test_cmd is None or not trees:
        return suites
    run = start_case(case, ctx.round_context)
    for stage in (stage_checkout, stage_venv, stage_legacy_sdk):
        run = stage(run)

    def suite(phase: str) -> SuiteResult:
        return run_suite(
            run.steps(),
            phase="baseline" if phase == "baseline" else "after",
            number=Step.BASELINE if phase == "baseline" else Step.AFTER,
            test_cmd=case.test_cmd,
            interpreter=run.venv().executable,
            junit_dir=run.tree().logs / "junit",
            timeout=run.limit("baseline" if phase == "baseline" else "after"),
            cwd=run.checkout,
        )

    def baseline() -> None:
        suites.baseline = suite("baseline")

    def new_sdk() -> None:
        run.kind.new_sdk(run)
        suites.sdk_to = run.sdk_to

    run.attempt(baseline)
    run.attempt(new_sdk)
    for arm, tree in trees.items():

        def after(arm: str = arm, tree: Path = tree) -> None:
            swap_in(run.checkout, tree)
            suites.after[arm] = suite("after")

        run.attempt(after)
    if run.error is not None:
        suites.error = f"{run.error.step}: {run.error.reason}"
    elif run.crash is not None:
        suites.error = "harness: harness_crashed"
    return suites


__all__ = ["Suites", "run_suites", "swap_in"]
