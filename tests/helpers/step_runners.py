"""Step runners for tests of the code that takes one: a fake that answers from a function, and a real
one (a subprocess, a timeout, no shell). Both record every call."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Done:
    exit_code: int = 0
    duration_s: float = 0.1
    timed_out: bool = False
    launch_error: str | None = None
    truncated: bool = False
    log: Path = Path("/dev/null")

    def output(self, limit: int = 65536) -> str:
        return ""


@dataclass
class Call:
    number: int
    name: str
    argv: list[str]
    timeout: float
    reason: str | None
    cwd: Path | None


@dataclass
class FakeRunner:
    """Records each step; ``act`` may write files (a junit report, a run folder) and gives the result."""

    act: Callable[[list[str]], Done] = lambda argv: Done()
    calls: list[Call] = field(default_factory=list)

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
    ) -> Done:
        self.calls.append(Call(number, name, list(argv), timeout, reason, cwd))
        return self.act(list(argv))


@dataclass
class SubprocessRunner:
    """Runs each step for real; with ``home``, in an environment of PATH, LANG and that HOME only."""

    home: Path | None = None
    calls: list[Call] = field(default_factory=list)

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
    ) -> Done:
        self.calls.append(Call(number, name, list(argv), timeout, reason, cwd))
        if self.home is not None:
            env = {"PATH": os.environ.get("PATH", ""), "HOME": str(self.home), "LANG": "C.UTF-8"}
        start = time.monotonic()
        try:
            proc = subprocess.run(
                list(argv),
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return Done(124, round(time.monotonic() - start, 3), True)
        except OSError as error:
            return Done(127, round(time.monotonic() - start, 3), False, str(error))
        return Done(proc.returncode, round(time.monotonic() - start, 3))


__all__ = ["Call", "Done", "FakeRunner", "SubprocessRunner"]
