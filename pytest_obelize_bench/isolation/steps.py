"""Running a case's commands as numbered, recorded steps.

Every command of a case becomes a ``Step`` in its record (argv elided, exit code, duration,
timeout), and its output a log file ``<logs>/NN-<name>.log``.  A step given a ``reason`` must
succeed: its failure raises ``CaseError`` so the case ends as an ``error`` record and the round goes
on.  A step without one measures something (a suite's exit code) and never raises.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pytest_obelize_bench._util.case_error import ERROR_REASONS, CaseError
from pytest_obelize_bench.isolation.elide import Elider
from pytest_obelize_bench.isolation.executor import LAUNCH_FAILED_EXIT, Completed, Executor, ProgramRefused

_STEP_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass(frozen=True)
class Step:
    """One command as the public record shows it."""

    number: int
    name: str
    argv: tuple[str, ...]
    exit_code: int
    duration_s: float
    timed_out: bool

    def to_json(self) -> dict[str, Any]:
        """The record's form: exactly these six keys, argv as a list."""
        return {
            "number": self.number,
            "name": self.name,
            "argv": list(self.argv),
            "exit_code": self.exit_code,
            "duration_s": self.duration_s,
            "timed_out": self.timed_out,
        }


class StepOutcome(Protocol):
    """What a caller reads of a finished step (read-only: a finished step does not change)."""

    @property
    def exit_code(self) -> int: ...
    @property
    def duration_s(self) -> float: ...
    @property
    def timed_out(self) -> bool: ...
    @property
    def launch_error(self) -> str | None: ...

    def output(self, limit: int = 65536) -> str: ...


class Runner(Protocol):
    """What the stages need from a step runner: ``StepRunner`` is the real one, tests bring fakes."""

    def run(
        self,
        number: int,
        name: str,
        argv: Sequence[str],
        *,
        timeout: float,
        reason: str | None = None,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> StepOutcome: ...


class StepRunner:
    """Runs the steps of one case through an executor and keeps their record in ``steps``.

    ``env`` and ``cwd`` are the defaults of every step (a call may replace either whole);
    ``elider`` hides the harness's paths in recorded argvs and error details.  The log of the
    k-th step run here is ``<logs>/<k as two digits>-<name>.log``.
    """

    def __init__(
        self,
        executor: Executor,
        *,
        logs: Path,
        elider: Elider,
        env: Mapping[str, str],
        cwd: Path,
    ) -> None:
        self.executor = executor
        self.logs = Path(logs)
        self.elider = elider
        self.env = env
        self.cwd = Path(cwd)
        self.steps: list[Step] = []

    def next_log(self, name: str) -> Path:
        """The log file the next step called ``name`` will write."""
        return self.logs / f"{len(self.steps) + 1:02d}-{name}.log"

    def run(
        self,
        number: int,
        name: str,
        argv: Sequence[str],
        *,
        timeout: float,
        reason: str | None = None,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> Completed:
        """Run one step and record it; with ``reason``, raise ``CaseError`` if it failed.

        A program the executor refuses is recorded with exit 127 and raises ``program_refused``
        whatever ``reason`` is: no step of a fixtures pass may be skipped silently.
        """
        if not _STEP_NAME.fullmatch(name):
            raise ValueError(f"step name {name!r} is not a safe file name part")
        if reason is not None and reason not in ERROR_REASONS:
            raise ValueError(f"unknown error reason {reason!r}")
        args = [os.fspath(arg) for arg in argv]
        log = self.next_log(name)
        shown = self.elider.argv(args)
        try:
            completed = self.executor.run(
                args,
                cwd=self.cwd if cwd is None else cwd,
                env=self.env if env is None else env,
                timeout=timeout,
                log=log,
                step=name,
            )
        except ProgramRefused as refused:
            self.steps.append(Step(int(number), name, shown, LAUNCH_FAILED_EXIT, 0.0, False))
            self.logs.mkdir(parents=True, exist_ok=True)
            log.write_text(f"$ {shlex.join(args)}\n\n{refused}\n", encoding="utf-8")
            raise CaseError(name, "program_refused", self.elider.text(str(refused))) from None
        self.steps.append(
            Step(
                number=int(number),  # a record's number is a plain int, never a Step member
                name=name,
                argv=shown,
                exit_code=completed.exit_code,
                duration_s=completed.duration_s,
                timed_out=completed.timed_out,
            )
        )
        if reason is not None:
            self.raise_for(name, completed, reason=reason, timeout=timeout)
        return completed

    def raise_for(self, name: str, completed: Completed, *, reason: str, timeout: float) -> None:
        """Raise the ``CaseError`` a failed step ``name`` gives under ``reason``; else nothing.

        For callers that run a step as a measurement, inspect it, and then treat it as required.
        """
        if completed.timed_out:
            raise CaseError(name, "timeout", f"{name} outlasted {timeout:g}s")
        if completed.exit_code != 0 and disk_full_said(completed.output() + (completed.launch_error or "")):
            reason = DISK_FULL  # the machine's disk, not the step: whatever the step's own reason
        if completed.launch_error is not None:
            raise CaseError(name, reason, self.elider.text(completed.launch_error))
        if completed.exit_code != 0:
            said = last_words(completed.output())
            raise CaseError(
                name,
                reason,
                self.elider.text(
                    f"{name} exited {completed.exit_code}{': ' + said if said else ''}; see {completed.log}"
                ),
            )


#: The reason of a case whose work root filled up (ENOSPC, or the quota): infrastructure.
DISK_FULL = "disk_full"
#: What the operating system says, through any program, when a write finds no room.
_DISK_FULL_WORDS = ("No space left on device", "Disk quota exceeded")


def disk_full_said(text: str) -> bool:
    """Whether a program's output says a write found the disk full."""
    return any(words in text for words in _DISK_FULL_WORDS)


#: How much of a failed step's last output line an error detail quotes.
LAST_WORDS_CHARS = 200


def last_words(output: str) -> str:
    """The last non-blank line a failed command printed, cut short: what a user reads first."""
    lines = [line.strip() for line in output.splitlines() if line.strip() and not line.startswith("[obelize-bench:")]
    if not lines:
        return ""
    line = lines[-1]
    return line if len(line) <= LAST_WORDS_CHARS else line[: LAST_WORDS_CHARS - 3] + "..."
