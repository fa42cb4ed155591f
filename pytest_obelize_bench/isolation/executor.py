"""The one seam through which the harness runs a program.

Every command of a case goes through an ``Executor``: an argv list (never a shell), a working
directory, an environment, a timeout and a log file.  ``ProcessExecutor`` is the real one;
``OfflineExecutor`` wraps it for ``--fixtures-only``, where nothing but the running interpreter may
run; unit tests substitute fakes.  A step that goes wrong is reported in the returned ``Completed``
(or, for a refused program, as ``ProgramRefused``), never as an unrelated crash.

Why the process handling is this careful: a repository's suite is untrusted code.  It can leave
background processes behind, fill gigabytes of output, ignore SIGTERM or start a session of its own
that keeps the output pipe open.  None of that may hang the round, exhaust memory, or let a process
outlive its step.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import BinaryIO, Protocol

from pytest_obelize_bench.isolation.policy import STEP_ENVIRONMENT, inherited
from pytest_obelize_bench.isolation.process_group import (
    HAVE_PROC,
    Pump,
    group_answers_signal,
    group_has_live_member,
    signal_group,
    wait_for_exit,
    wait_until,
)

#: Bytes of a step's output kept in its log (2 MiB, stdout and stderr merged).  Beyond it the
#: output is still read and discarded, so the child never blocks on a full pipe, and a marker line
#: says how many bytes were dropped.  A suite that prints 20 MB costs 2 MiB of disk and no memory.
OUTPUT_CAP_BYTES = 2 * 1024 * 1024
#: Seconds between SIGTERM to a step's process group and SIGKILL.
KILL_GRACE_S = 3.0
#: Seconds the reader keeps draining the pipe after the step's process group is gone.  Only a
#: process that left the group (its own session) can still hold the pipe open then; it is not
#: waited for.
DRAIN_GRACE_S = 1.0
#: Exit code of a step that outlasted its timeout (as coreutils ``timeout``).
TIMEOUT_EXIT = 124
#: Exit code of a step that could not be started (as a shell's "command not found").
LAUNCH_FAILED_EXIT = 127
#: The environment names a step inherits from the harness, when the harness has them.
ALLOWED_ENVIRONMENT: tuple[str, ...] = STEP_ENVIRONMENT

_MARK = "obelize-bench"
_EMPTY: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True)
class Completed:
    """What one finished step left: its exit code, timing, and where its output went.

    The output itself stays on disk in ``log`` (after a header of ``output_offset`` bytes) so no
    step's output is ever held in memory whole.
    """

    exit_code: int
    duration_s: float
    timed_out: bool
    launch_error: str | None
    truncated: bool
    log: Path
    output_offset: int

    def output(self, limit: int = 65536) -> str:
        """The first ``limit`` bytes the command printed, decoded as UTF-8 with replacement."""
        try:
            with open(self.log, "rb") as handle:
                handle.seek(self.output_offset)
                data = handle.read(max(0, limit))
        except OSError:
            return ""
        return data.decode("utf-8", errors="replace")


class Executor(Protocol):
    """Runs one program to completion; never raises for the program's own failure."""

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        timeout: float,
        log: Path,
        step: str = "",
    ) -> Completed: ...


class ProgramRefused(Exception):
    """The offline executor refused a program: ``--fixtures-only`` must not reach the network."""

    def __init__(self, program: str) -> None:
        super().__init__(f"--fixtures-only runs no program but the running interpreter; refused: {program}")
        self.program = program


def step_environment(
    source: Mapping[str, str],
    *,
    home: Path,
    extra: Mapping[str, str] = _EMPTY,
    allowed: Iterable[str] = ALLOWED_ENVIRONMENT,
) -> dict[str, str]:
    """The environment of a step: allow-listed names from ``source``, an own HOME, and ``extra``.
    Building a tool venv allows a few more names (``TOOL_INSTALL_ENVIRONMENT``).

    Nothing else of the harness's environment is passed on, so no credential (GEMINI_API_KEY,
    GITHUB_TOKEN, AWS_*), no tool configuration (PYTEST_ADDOPTS) and no xdist state
    (PYTEST_XDIST_*) reaches an install, a suite or obelize.  ``extra`` holds what the harness
    itself sets (VIRTUAL_ENV, UV_EXCLUDE_NEWER, UV_PYTHON_DOWNLOADS, GIT_TERMINAL_PROMPT, ...).
    """
    env = inherited(allowed, source)
    env["HOME"] = os.fspath(home)
    env.update(extra)
    return env


class OfflineExecutor:
    """Wraps an executor and refuses every program but one interpreter (``--fixtures-only``).

    The fixtures pass runs in CI and must not reach the network; the running interpreter running
    obelize and the fixtures' own suites is all it needs.
    """

    def __init__(self, inner: Executor, allowed: str = sys.executable) -> None:
        self.inner = inner
        self.allowed = allowed

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        timeout: float,
        log: Path,
        step: str = "",
    ) -> Completed:
        """Run ``argv`` through the inner executor, or raise ``ProgramRefused``."""
        if not argv:
            raise ProgramRefused("(nothing)")
        if os.fspath(argv[0]) != self.allowed:
            raise ProgramRefused(os.fspath(argv[0]))
        return self.inner.run(argv, cwd=cwd, env=env, timeout=timeout, log=log, step=step)


class ProcessExecutor:
    """Runs a program as a subprocess in a session of its own, output streamed to its log.

    * argv list, never a shell; stdin is /dev/null; stdout and stderr are merged into one pipe
      that a reader thread copies into ``log`` in 64 KiB chunks, capped at ``OUTPUT_CAP_BYTES``.
    * The log starts with ``$ <argv>`` and a blank line (the header), then the output.
    * On timeout the whole process group gets SIGTERM, then SIGKILL after ``KILL_GRACE_S``;
      the exit code is 124.  When the child exits by itself, whatever it left in its group is
      killed the same way, so no background process outlives the step.
    * A process that started its own session is not reached (it is not in the group); if it holds
      the pipe open the reader gives up ``DRAIN_GRACE_S`` after the group is gone.
    * A program that cannot be started gives exit 127 and ``launch_error``, not an exception.
    * A child killed by signal N reports 128 + N, as a shell would, so exit codes are never
      negative.
    """

    def __init__(
        self,
        *,
        output_cap: int = OUTPUT_CAP_BYTES,
        kill_grace_s: float = KILL_GRACE_S,
        drain_grace_s: float = DRAIN_GRACE_S,
    ) -> None:
        self.output_cap = output_cap
        self.kill_grace_s = kill_grace_s
        self.drain_grace_s = drain_grace_s

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        timeout: float,
        log: Path,
        step: str = "",
    ) -> Completed:
        """Run ``argv`` to completion (or timeout) and return what it left."""
        args = [os.fspath(arg) for arg in argv]
        log = Path(log)
        log.parent.mkdir(parents=True, exist_ok=True)
        header = ("$ " + shlex.join(args) + "\n\n").encode("utf-8", errors="surrogateescape")
        # Unbuffered: each chunk reaches the file as it arrives, so a log can be watched live.
        with open(log, "wb", buffering=0) as sink:
            sink.write(header)
            return self._run(args, Path(cwd), env, timeout, log, sink, len(header))

    def _launch_failure(self, message: str, log: Path, sink: BinaryIO, offset: int, start: float) -> Completed:
        sink.write((message + "\n").encode("utf-8", errors="replace"))
        return Completed(
            exit_code=LAUNCH_FAILED_EXIT,
            duration_s=round(time.monotonic() - start, 3),
            timed_out=False,
            launch_error=message,
            truncated=False,
            log=log,
            output_offset=offset,
        )

    def _run(
        self,
        args: list[str],
        cwd: Path,
        env: Mapping[str, str],
        timeout: float,
        log: Path,
        sink: BinaryIO,
        offset: int,
    ) -> Completed:
        start = time.monotonic()
        if not args:
            return self._launch_failure("cannot run an empty command", log, sink, offset, start)
        if not cwd.is_dir():
            return self._launch_failure(
                f"cannot run {args[0]}: working directory {cwd} does not exist",
                log,
                sink,
                offset,
                start,
            )
        try:
            proc = subprocess.Popen(
                args,
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as error:
            reason = error.strerror or str(error)
            return self._launch_failure(f"cannot run {args[0]}: {reason}", log, sink, offset, start)
        assert proc.stdout is not None
        pump = Pump(proc.stdout.fileno(), sink, self.output_cap)
        pump.thread.start()
        pgid = proc.pid

        def group_alive() -> bool:
            if HAVE_PROC:
                # The leader stays unreaped (a zombie) here, so its pid cannot be reused as a
                # group id while the group is inspected and signalled.
                return group_has_live_member(pgid)
            proc.poll()  # reap the leader first, or the probe would count its zombie
            return group_answers_signal(pgid)

        try:
            exited = wait_for_exit(proc.pid, start + max(0.0, timeout))
            duration = round(time.monotonic() - start, 3)
            timed_out = not exited
            # One scan of /proc on the common path (about 0.3 ms per 70 processes): a group with no
            # live member after its leader's exit has none to wait for.
            if group_alive():
                signal_group(pgid, signal.SIGTERM)
                deadline = time.monotonic() + self.kill_grace_s
                if not wait_until(lambda: not group_alive(), deadline):
                    signal_group(pgid, signal.SIGKILL)
                    # The killed take a moment to go, waited for while the leader's zombie
                    # still holds the group id.
                    wait_until(lambda: not group_alive(), time.monotonic() + 1.0)
            returncode = proc.wait()
        finally:
            if proc.returncode is None:  # an exception above: leave nothing running
                signal_group(pgid, signal.SIGKILL)
                proc.wait()
            pump.thread.join(self.drain_grace_s)
            held_open = pump.thread.is_alive()
            if held_open:
                pump.stop.set()
                pump.thread.join()
            proc.stdout.close()
        if pump.error is not None:
            raise pump.error
        self._write_notes(sink, pump, timeout=timeout, timed_out=timed_out, held_open=held_open)
        return Completed(
            exit_code=_exit_code(returncode, timed_out=timed_out),
            duration_s=duration,
            timed_out=timed_out,
            launch_error=None,
            truncated=pump.dropped > 0,
            log=log,
            output_offset=offset,
        )

    def _write_notes(self, sink: BinaryIO, pump: Pump, *, timeout: float, timed_out: bool, held_open: bool) -> None:
        """The marker lines that end a log whose output was cut, timed out or held open."""
        notes = []
        if pump.dropped:
            notes.append(f"[{_MARK}: output cut at {self.output_cap} bytes; {pump.dropped} more bytes dropped]")
        if timed_out:
            notes.append(f"[{_MARK}: timed out after {timeout:g}s; process group killed]")
        if held_open:
            notes.append(
                f"[{_MARK}: stopped reading: a process outside the step's process group still held the output open]"
            )
        if notes:
            lead = b"" if pump.last_byte == b"\n" else b"\n"
            sink.write(lead + "\n".join(notes).encode("utf-8") + b"\n")


def _exit_code(returncode: int, *, timed_out: bool) -> int:
    """124 for a timeout, 128 + N for a child killed by signal N (as a shell says), else its own."""
    if timed_out:
        return TIMEOUT_EXIT
    if returncode < 0:
        return 128 - returncode
    return returncode


@dataclass(frozen=True)
class Answer:
    """What one of the harness's own short commands said: its exit, its output (bounded), a timeout."""

    exit_code: int
    output: str
    timed_out: bool
    launch_error: str | None

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and self.launch_error is None

    @property
    def last_line(self) -> str:
        """The output's last non-empty line, cut: what a one-line error quotes of a failed command."""
        lines = [line.strip() for line in self.output.splitlines() if line.strip()]
        return lines[-1][:300] if lines else "(no output)"


def run_program(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    timeout: float,
    cwd: Path | None = None,
    log: Path | None = None,
    limit: int = 1 << 20,
) -> Answer:
    """Run one of the harness's own commands (git, ``uv --version``, a probe) to completion.

    The same process handling as a step (no shell, its own session, the group killed, output
    capped), for code that is not a case step: the answer comes back in memory, at most ``limit``
    bytes of it.  Without ``log`` the output goes to a scratch file removed afterwards; without
    ``cwd`` the command runs in that scratch folder.
    """
    with tempfile.TemporaryDirectory(prefix="obelize-bench-run-") as scratch:
        completed = ProcessExecutor().run(
            argv,
            cwd=Path(scratch) if cwd is None else Path(cwd),
            env=env,
            timeout=timeout,
            log=Path(scratch) / "output.log" if log is None else Path(log),
        )
        text = completed.output(limit)
    return Answer(
        exit_code=completed.exit_code,
        output=text,
        timed_out=completed.timed_out,
        launch_error=completed.launch_error,
    )
