"""The worker's step 6 ``fix``: run the tool under test over the checkout, then read its run folder.

The run folder is located once, here, and handed back with what was read from it, so the stage
that copies the evidence and the grader read the very folder this step checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench.grading.graded_facts import Artefacts
from pytest_obelize_bench.isolation.policy import DEFAULT_LIMITS, Step
from pytest_obelize_bench.isolation.steps import Runner
from pytest_obelize_bench.tool.adapter import OBELIZE, ToolAdapter
from pytest_obelize_bench.tool.info import ToolInfo
from pytest_obelize_bench.tool.invoke import run_tool

FIX_TIMEOUT_S = DEFAULT_LIMITS["fix"]


@dataclass(frozen=True)
class FixResult:
    """What step 6 left: the graded facts, the step's runtime, and the run folder they came from."""

    artefacts: Artefacts
    runtime_s: float
    folder: Path


def fix_argv(tool: ToolInfo, *, checkout: Path, pack: str, adapter: ToolAdapter = OBELIZE) -> list[str]:
    """``fix`` as step 6 runs it: applied, never prompting, no model, JSON, and no ``--verify``."""
    return adapter.fix_argv(tool.argv_prefix, checkout=checkout, pack=pack)


def run_fix(
    runner: Runner,
    tool: ToolInfo,
    *,
    checkout: Path,
    pack: str,
    timeout: float = FIX_TIMEOUT_S,
    adapter: ToolAdapter = OBELIZE,
) -> FixResult:
    """Step 6 ``fix``: run the tool, then read its run folder.

    Grading comes from the run folder, never from the exit code; the code only says whether
    there is a run folder to read (``adapter.fix_exit_codes``).  A run whose pointer still names
    the folder that was there before, or whose apply the tree gate refused (the harness left
    the checkout dirty, so nothing about the migration was measured), is an error, not a grade.
    """
    checkout = Path(checkout)
    argv = fix_argv(tool, checkout=checkout, pack=pack, adapter=adapter)
    done = run_tool(
        runner,
        number=Step.FIX,
        name="fix",
        argv=argv,
        checkout=checkout,
        timeout=timeout,
        exit_codes=adapter.fix_exit_codes,
        adapter=adapter,
    )
    folder = done.folder
    artefacts = adapter.read(folder, checkout)
    gate = sorted(set(artefacts.refused) & adapter.tree_refusals)
    if gate:
        raise CaseError(
            "fix",
            "obelize_failed",
            f"obelize refused the whole apply ({', '.join(gate)}): the checkout had uncommitted "
            "changes before step 6, so the run measured nothing",
        )
    return FixResult(artefacts=artefacts, runtime_s=done.duration_s, folder=folder)


__all__ = ["FIX_TIMEOUT_S", "FixResult", "fix_argv", "run_fix"]
