"""Running one command of the tool under test over a checkout, and finding the run folder it wrote.

Every obelize command the harness runs (a case's ``fix``, Gate 1's ``scan``, the dry run's ``fix``
without ``--apply``) goes through here, so each gets the same verdicts: a timeout, a tool that
could not start or exited with a code the adapter does not accept, and a ``latest`` pointer that
still names the run folder that was there before (a repository may commit one) are errors, never
grades.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench.isolation.steps import Runner, last_words
from pytest_obelize_bench.tool.adapter import OBELIZE, ToolAdapter


@dataclass(frozen=True)
class ToolRun:
    """The run folder a command wrote, and how long the command took."""

    folder: Path
    duration_s: float


def _pointer(checkout: Path, adapter: ToolAdapter) -> str | None:
    """The run folder ``latest`` names before the run, if any."""
    try:
        return adapter.run_folder(checkout).name
    except CaseError:
        return None


def run_tool(
    runner: Runner,
    *,
    number: int,
    name: str,
    argv: Sequence[str],
    checkout: Path,
    timeout: float,
    exit_codes: Collection[int] = (0,),
    adapter: ToolAdapter = OBELIZE,
) -> ToolRun:
    """Step ``number`` (``name``): the tool's command in the checkout; the fresh run folder it wrote."""
    checkout = Path(checkout)
    before = _pointer(checkout, adapter)
    completed = runner.run(number, name, list(argv), timeout=timeout, cwd=checkout)
    if completed.timed_out:
        raise CaseError(name, "timeout", f"obelize {name} outlasted {timeout:g}s")
    if completed.launch_error is not None:
        raise CaseError(name, "obelize_failed", "obelize could not be started; see the step log")
    if completed.exit_code not in exit_codes:
        said = last_words(completed.output())
        raise CaseError(
            name,
            "obelize_failed",
            f"obelize {name} exited {completed.exit_code}{': ' + said if said else ''}; see the step log",
        )
    try:
        folder = adapter.run_folder(checkout)
    except CaseError as exc:
        raise CaseError(name, exc.reason, exc.detail) from None
    if before is not None and folder.name == before:
        raise CaseError(name, "no_run_folder", ".obelize/latest still names the run that was there before obelize ran")
    return ToolRun(folder=folder, duration_s=completed.duration_s)


__all__ = ["ToolRun", "run_tool"]
