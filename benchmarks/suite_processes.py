"""Where the project's own suite spends its processor time, by the kind of process that spent it.

Run (as root, with Debian's ``acct`` and ``strace``): .venv/bin/python benchmarks/suite_processes.py [-- PYTEST ARGS]

The suite is processor-bound on a small machine (``docs/explanation/performance.md``), so its wall
time can only come down by less work; this says which work.  It runs the suite (``-n auto -q -p
no:randomly`` unless other pytest arguments follow ``--``) under two recorders at once:

* the kernel's process accounting (``accton``), which writes the user and system time of every
  process that ends, with its process id, whatever namespace or sandbox it ran in;
* ``strace -f``, stopping only at ``execve`` (``--seccomp-bpf``), which gives the command line each
  process id ran last.

Joined on the process id, each process gets a kind from its command line: an ``obelize`` run by its
subcommand, the suite's own processes, a pytest session a test started and its xdist workers, a
case's suite, a version check, uv and its interpreter queries, and so on (``kind_of``).  A process
that forked and never ran a program of its own has no command line: it is counted under its
process name.  Accounting is machine-wide, so run it on an idle machine; strace slows system calls,
so user time is the fairer figure and system time reads high.  The last line sets the ``obelize``
runs against what a suite of ``--target`` minutes could spend on this machine's cores.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from pytest_obelize_bench._util.markdown import table  # noqa: E402  # the project's one table writer
from tests.helpers.workers import usable_cores  # noqa: E402  # as -n auto counts them

DEFAULT_PYTEST = ("-n", "auto", "-q", "-p", "no:randomly")
#: What the run needs, by program, and the Debian package that brings it.
NEEDED = {"accton": "acct", "dump-acct": "acct", "strace": "strace"}
#: ``obelize``'s subcommands (0.8.0's ``--help``), and its version flag.
OBELIZE_COMMANDS = ("fix", "scan", "verify", "undo", "outdated", "upgrade", "mcp", "pack", "--version")
#: strace, stopping only where a process runs a program, and long enough strings for a ``python -c``.
RECORDER = ("strace", "-f", "-qq", "--seccomp-bpf", "-e", "trace=execve", "-e", "signal=none", "-s", "400")
#: The program an xdist worker is started with (execnet's ``popen`` gateway).
XDIST_WORKER = "import sys;exec(eval(sys.stdin.readline()))"

_EXECVE = re.compile(r'^(?P<pid>\d+)\s+execve\("(?P<path>(?:[^"\\]|\\.)*)", (?P<argv>\[.*?\]), 0x[0-9a-f]+.*\)\s+= 0$')
#: strace splits a call another process interrupts: ``<unfinished ...>``, later ``<... execve resumed>``.
_UNFINISHED, _RESUMED = " <unfinished ...>", re.compile(r"^(?P<pid>\d+)\s+<\.\.\. execve resumed>(?P<rest>.*)$")


@dataclass(frozen=True)
class Ended:
    """One process as the accounting file has it: what it spent, in seconds."""

    name: str
    pid: int
    ppid: int
    user: float
    system: float
    forked_only: bool


def commands(trace: Iterable[str]) -> dict[int, tuple[str, ...]]:
    """Each process id's last command line, from ``strace -e trace=execve`` lines (failed calls skipped),
    in the order the ids first ran one: the first is the process strace started."""
    found: dict[int, tuple[str, ...]] = {}
    pending: dict[int, str] = {}
    for raw in trace:
        line = raw.rstrip("\n")
        if line.endswith(_UNFINISHED):
            pending[int(line.split(None, 1)[0])] = line.removesuffix(_UNFINISHED)
            continue
        resumed = _RESUMED.match(line)
        if resumed is not None:
            line = pending.pop(int(resumed["pid"]), "") + resumed["rest"]
        matched = _EXECVE.match(line)
        if matched is None:
            continue
        text = matched["argv"].replace('"...', '"')  # strace marks a cut string with ... after its quote
        try:
            argv = ast.literal_eval(text)
        except (SyntaxError, ValueError):
            argv = [ast.literal_eval(f'"{matched["path"]}"')]
        found[int(matched["pid"])] = tuple(str(part) for part in argv)
    return found


def ended(dump: Iterable[str]) -> list[Ended]:
    """The processes of ``dump-acct``'s lines (version 3 records; times in hundredths of a second)."""
    processes = []
    for line in dump:
        fields = [field.strip() for field in line.split("|")]
        if len(fields) < 12 or fields[1] != "v3":
            continue
        processes.append(
            Ended(
                name=fields[0],
                pid=int(fields[9]),
                ppid=int(fields[10]),
                user=float(fields[2]) / 100,
                system=float(fields[3]) / 100,
                forked_only="F" in fields[11],
            )
        )
    return processes


def _module(argv: Sequence[str]) -> str | None:
    """The module a Python command line runs with ``-m``, written apart or joined (``-mpytest``)."""
    for index, part in enumerate(argv[1:], start=1):
        if part == "-m" and index + 1 < len(argv):
            return argv[index + 1]
        if part.startswith("-m") and len(part) > 2 and not part.startswith("--"):
            return part[2:]
    return None


def kind_of(argv: Sequence[str], *, suite: bool, project_venv: Path) -> str:
    """What a command line is, for this suite: ``suite`` says it is the suite's own process."""
    program = Path(argv[0]).name if argv else ""
    # Only an interpreter's own -m: bwrap's command line holds the one of the program it wraps.
    module = _module(argv) if program.startswith("python") else None
    if program == "strace":
        return "strace (the recording)"
    code = argv[argv.index("-c") + 1] if "-c" in argv[:-1] else ""  # the program of ``python -c``
    if program == "obelize" or module == "obelize" or "obelize.cli" in code:
        command = next((part for part in argv[1:] if part in OBELIZE_COMMANDS), "other")
        return f"obelize {command}"
    if suite:
        return "the suite itself (its controller and workers)"
    in_project = argv[0].startswith(f"{project_venv}{os.sep}") if argv else False
    if module == "pytest" or program in ("pytest", "py.test"):
        return "pytest sessions started by tests" if in_project else "case suites (pytest in a case venv)"
    if code == XDIST_WORKER:
        return "xdist workers of those sessions"
    if program == "obelize-bench" or module == "pytest_obelize_bench.cli":
        return "obelize-bench commands"
    if program == "uv":
        return "uv"
    if "describe_interpreter" in code:  # uv's program, which it runs in each interpreter it meets
        return "uv's interpreter queries"
    if "import obelize" in code or "from obelize" in code:
        return "the harness asking the tool's obelize (version, packs, a repository's runtime)"
    if "compileall" in code:
        return "bytecode compiles of templates"
    if "importlib.metadata" in code and "version" in code:
        return "version checks (importlib.metadata)"
    if program.startswith("python"):
        return "other Python, the project's venv" if in_project else "other Python, case venvs and tools"
    return program or "?"


@dataclass(frozen=True)
class Share:
    kind: str
    processes: int
    user: float
    system: float


def breakdown(
    processes: Iterable[Ended], lines: Mapping[int, Sequence[str]], *, suite_pid: int, project_venv: Path
) -> list[Share]:
    """Processor time by kind, most first; a process with no command line goes by its name, and so does
    one whose id another process of the run had too (ids wrap at ``pid_max``: the join cannot tell them)."""
    processes = list(processes)
    reused = {pid for pid, count in Counter(process.pid for process in processes).items() if count > 1}
    totals: dict[str, list[float]] = {}
    for process in processes:
        argv = lines.get(process.pid)
        if process.pid in reused:
            kind = f"process id used twice: {process.name}"
        elif argv is None or process.forked_only:  # a fork that ran no program, or one begun before strace
            kind = f"no command line recorded: {process.name}"
        else:
            own = process.pid == suite_pid or process.ppid == suite_pid
            kind = kind_of(argv, suite=own, project_venv=project_venv)
        total = totals.setdefault(kind, [0, 0.0, 0.0])
        total[0] += 1
        total[1] += process.user
        total[2] += process.system
    shares = [Share(kind, int(n), user, system) for kind, (n, user, system) in totals.items()]
    return sorted(shares, key=lambda share: (-(share.user + share.system), share.kind))


#: Kinds under this share of all processor time are summed into one row.
SMALL = 0.005


def report(shares: Sequence[Share], *, wall: float, cores: int, target_minutes: float) -> list[str]:
    """The table and the closing lines: seconds, never a bare share without its total."""
    user = sum(share.user for share in shares)
    system = sum(share.system for share in shares)
    small = [share for share in shares if share.user + share.system < SMALL * (user + system)]
    rows = [share for share in shares if share not in small]
    if small:
        rows.append(
            Share(
                f"{len(small)} other kinds, each under {100 * SMALL:g} %",
                sum(share.processes for share in small),
                sum(share.user for share in small),
                sum(share.system for share in small),
            )
        )
    cells = [
        (
            share.kind,
            share.processes,
            f"{share.user:.1f}",
            f"{share.system:.1f}",
            f"{100 * (share.user + share.system) / (user + system):.1f} %",
        )
        for share in rows
    ]
    lines = table(("kind", "processes", "user s", "system s", "share of all"), ("---", *["---:"] * 4), cells, str)
    obelize = [share for share in shares if share.kind.startswith("obelize ")]
    spent_obelize = sum(share.user + share.system for share in obelize)
    budget = target_minutes * 60 * cores
    suite = f"a {target_minutes:g}-minute suite has on {cores} cores"
    lines += [
        "",
        f"all processes: {user:.1f} s user, {system:.1f} s system, in {wall:.1f} s of wall "
        f"({(user + system) / wall:.2f} cores busy of {cores})",
        f"obelize: {sum(share.processes for share in obelize)} runs, {spent_obelize:.1f} processor-seconds, "
        f"{100 * spent_obelize / budget:.0f} % of the {budget:.0f} {suite}",
    ]
    return lines


def _missing() -> str | None:
    if os.geteuid() != 0:
        return "process accounting needs root"
    absent = sorted({package for program, package in NEEDED.items() if shutil.which(program) is None})
    return f"install Debian's {' and '.join(absent)} (apt-get install {' '.join(absent)})" if absent else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--target", type=float, default=4.0, help="minutes the suite should take (default 4)")
    parser.add_argument("--keep", type=Path, default=None, help="keep the trace and the accounting file here")
    parser.add_argument("pytest_args", nargs="*", help="after --: the suite's pytest arguments")
    arguments = parser.parse_args()
    problem = _missing()
    if problem:
        raise SystemExit(f"suite_processes.py: {problem}")
    folder = arguments.keep or Path(tempfile.mkdtemp(prefix="obelize-bench-processes-"))
    folder.mkdir(parents=True, exist_ok=True)
    accounting, trace = folder / "suite.pacct", folder / "exec.trace"
    accounting.write_bytes(b"")
    accounting.chmod(0o600)
    pytest_args = tuple(arguments.pytest_args) or DEFAULT_PYTEST
    argv = [*RECORDER, "-o", str(trace), sys.executable, "-m", "pytest", *pytest_args]
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(["accton", str(accounting)], check=True, stdout=subprocess.DEVNULL)
    try:
        started = time.monotonic()
        done = subprocess.run(argv, cwd=PROJECT, env=env, check=False)
        wall = time.monotonic() - started
    finally:
        subprocess.run(["accton", "off"], check=False, stdout=subprocess.DEVNULL)
    with trace.open(encoding="utf-8", errors="replace") as handle:
        lines = commands(handle)
    dump = subprocess.run(["dump-acct", str(accounting)], capture_output=True, text=True, check=True).stdout
    if not lines:
        raise SystemExit(f"suite_processes.py: strace recorded no program in {trace} (exit {done.returncode})")
    suite_pid = next(iter(lines))
    shares = breakdown(ended(dump.splitlines()), lines, suite_pid=suite_pid, project_venv=Path(sys.prefix))
    cores = usable_cores()
    print("\n".join(report(shares, wall=wall, cores=cores, target_minutes=arguments.target)))
    print(json.dumps({"suite exit": done.returncode, "recorded in": str(folder) if arguments.keep else None}))
    if arguments.keep is None:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
