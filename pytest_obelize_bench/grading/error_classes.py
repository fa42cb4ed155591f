"""Whose failure an error is: the machine's (infrastructure) or the tool's under test.

Both classes stay in every denominator as ``error``, as the protocol says; the class only decides
how a round is shown and whether it may be published. Pure, so the rule is one table to read.
"""

from __future__ import annotations

from typing import Literal

ErrorClass = Literal["infrastructure", "tool"]
INFRASTRUCTURE: ErrorClass = "infrastructure"
TOOL: ErrorClass = "tool"
ERROR_CLASSES: tuple[ErrorClass, ...] = (INFRASTRUCTURE, TOOL)

#: Reasons that say the machine, the network or the harness failed, whatever the step.
INFRASTRUCTURE_REASONS = frozenset(
    {
        "fetch_failed",
        "venv_failed",
        "install_failed",
        "version_mismatch",
        "work_root_not_isolated",
        "harness_crashed",
        "worker_lost",
        "worker_refused",
        "program_refused",
        "network_failed",
        "disk_full",
    }
)
#: Reasons that say the tool under test failed.
TOOL_REASONS = frozenset(
    {
        "obelize_failed",
        "no_run_folder",
        "run_folder_unreadable",
        "run_folder_too_large",
        # the comparison arm's agent failed: the arm under test, not the machine
        "agent_failed",
        "stamp_missing",
        "stamp_impossible",
        # the release under test does not ship the pack a frame is drawn for: the tool's answer
        "pack_absent",
    }
)
#: Steps that run before the tool or only prepare the machine: a timeout there is not the tool's.
INFRASTRUCTURE_STEPS = frozenset(
    {
        "isolation",
        "harness",
        "fetch",
        "venv",
        "resolve",
        "install",
        "install-from",
        "install-from-check",
        "install-to",
        "install-to-check",
        "freeze",
        "baseline",
    }
)


def error_class(reason: str, step: str) -> ErrorClass:
    """The class of an error reason at a step.

    A reason this table does not know is judged by its step: before or around the tool it is the
    machine's, at ``fix``, ``compile`` or the after-run it is the tool's (its patch ran there).
    """
    if reason in INFRASTRUCTURE_REASONS:
        return INFRASTRUCTURE
    if reason in TOOL_REASONS:
        return TOOL
    return INFRASTRUCTURE if step in INFRASTRUCTURE_STEPS else TOOL


__all__ = [
    "ERROR_CLASSES",
    "INFRASTRUCTURE",
    "INFRASTRUCTURE_REASONS",
    "INFRASTRUCTURE_STEPS",
    "TOOL",
    "TOOL_REASONS",
    "ErrorClass",
    "error_class",
]
