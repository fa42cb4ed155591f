"""Why a case measured nothing: the error reasons and the exception that carries one.

A step failure is data, not a crash: whatever goes wrong inside one case is raised as a
``CaseError`` and becomes that case's ``error`` record, so the round goes on.
"""

from __future__ import annotations

#: The protocol's reasons, then the ones this harness adds. Records may carry any of these.
ERROR_REASONS: tuple[str, ...] = (
    "fetch_failed",
    "venv_failed",
    "install_failed",
    "version_mismatch",
    "obelize_failed",
    "no_run_folder",
    "timeout",
    "work_root_not_isolated",
    # added by this harness
    "run_folder_unreadable",
    "program_refused",
    "harness_crashed",
    "suite_crashed",
    "worker_lost",
    "interrupted",
    "worker_refused",
    # the comparison arm's agent (comparison/agent_steps.py)
    "agent_failed",
    "stamp_missing",
    "stamp_impossible",
    # the machine's disk (a full work root)
    "disk_full",
)


class CaseError(Exception):
    """A step of one case failed; ``step`` names it, ``reason`` is one of ``ERROR_REASONS``."""

    def __init__(self, step: str, reason: str, detail: str) -> None:
        if reason not in ERROR_REASONS:
            raise ValueError(f"unknown error reason {reason!r}")
        super().__init__(f"{step}: {reason}: {detail}")
        self.step = step
        self.reason = reason
        self.detail = detail

    def as_dict(self) -> dict[str, str]:
        return {"step": self.step, "reason": self.reason, "detail": self.detail}
