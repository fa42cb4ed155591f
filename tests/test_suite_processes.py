"""benchmarks/suite_processes.py: joining strace's command lines to the accounting file's times.

The lines below keep the shapes the two recorders really write (``strace -f -e trace=execve`` and
Debian's ``dump-acct``): a call another process interrupted, a failed call, a string strace cut, a
fork that ran no program.  One test runs the real strace over a small process tree.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.suite_processes import RECORDER, XDIST_WORKER, Ended, Share, breakdown, commands, ended, kind_of, report
from pytest_obelize_bench.case.environment import VERSION_PROGRAM
from pytest_obelize_bench.tool.venv import RUN_MAIN

VENV = Path("/work/project/.venv")
OWN = f"{VENV}/bin/python"
CASE = "/tmp/w/round-2/owner__repo/.venv/bin/python"
ASKS_OBELIZE = "the harness asking the tool's obelize (version, packs, a repository's runtime)"

TRACE = f"""\
100  execve("{OWN}", ["{OWN}", "-m", "pytest", "-n", "2"], 0x7ffe /* 35 vars */) = 0
101  execve("{OWN}", ["{OWN}", "-u", "-c", "{XDIST_WORKER}"], 0x56 /* 37 vars */) = 0
102  execve("/root/.cargo/bin/uname", ["uname", "-p"], 0x55 /* 40 vars */) = -1 ENOENT (No such file or directory)
102  execve("/usr/bin/uname", ["uname", "-p"], 0x55a0 /* 40 vars */) = 0
103  execve("/usr/bin/bwrap", ["/usr/bin/bwrap", "--", "{CASE}", "-I", "-m", "obelize", "fix"], 0x7e <unfinished ...>
104  execve("{OWN}", ["{OWN}", "-mpytest", "--basetemp=/tmp/b"], 0x56 /* 30 vars */) = 0
103  <... execve resumed>)             = 0
105  execve("{CASE}", ["{CASE}", "-I", "-m", "obelize", "fix", "--repo", "."], 0x7e /* 6 vars */) = 0
106  execve("{CASE}", ["{CASE}", "-I", "-c", "def describe_interpreter():\\n    info = sys.ver"...], 0x7f) = 0
107  execve("/usr/bin/bwrap", ["/usr/bin/bwrap", "--version"], 0x7e /* 2 vars */ <unfinished ...>
107  <... execve resumed>)             = -1 EACCES (Permission denied)
"""


def _acct(name: str, user: int, system: int, pid: int, ppid: int, flags: str = "") -> str:
    """A line as ``dump-acct`` prints a version 3 record (times in hundredths of a second)."""
    return (
        f"{name:<16}|v3|{user:9.2f}|{system:9.2f}|{user + system:9.2f}|     0|     0|  3376.00|     0.00|"
        f"{pid:8d}|{ppid:8d}|{flags:<5}|       0|__      |Sun Dec  6 17:43:52 2026"
    )


def test_each_process_gets_its_last_command_line_with_interrupted_calls_joined() -> None:
    found = commands(TRACE.splitlines(keepends=True))
    assert next(iter(found)) == 100  # the first to run a program: the one strace started
    assert found[102] == ("uname", "-p")  # the failed lookup before it is no command line
    assert found[103][-4:] == ("-I", "-m", "obelize", "fix")  # joined across the other process's call
    assert found[106][3].endswith("info = sys.ver")  # a cut string keeps what strace printed of it
    assert 107 not in found  # its call failed once resumed


def test_the_accounting_lines_read_in_seconds_and_say_which_only_forked() -> None:
    lines = [_acct("python", 126, 18, 3966, 3853), _acct("strace", 0, 4, 3842, 3841, "SF"), "a line of no record"]
    first, second = ended(lines)
    assert first == Ended("python", 3966, 3853, 1.26, 0.18, forked_only=False)
    assert second.forked_only and second.system == 0.04


@pytest.mark.parametrize(
    ("argv", "suite", "kind"),
    [
        ((CASE, "-I", "-m", "obelize", "fix", "--repo", "."), False, "obelize fix"),
        ((OWN, "-I", "-m", "obelize", "scan", "--json"), True, "obelize scan"),
        (("python", "-I", "-c", RUN_MAIN, "fix"), False, "obelize fix"),
        (("/usr/bin/bwrap", "--", CASE, "-m", "obelize", "fix"), False, "bwrap"),  # the wrapper, not obelize
        ((OWN, "-m", "pytest", "-n", "auto"), True, "the suite itself (its controller and workers)"),
        ((OWN, "-mpytest", "--basetemp=/tmp/b"), False, "pytest sessions started by tests"),
        ((CASE, "-m", "pytest", "-q"), False, "case suites (pytest in a case venv)"),
        ((OWN, "-u", "-c", XDIST_WORKER), False, "xdist workers of those sessions"),
        ((CASE, "-I", "-c", "def describe_interpreter():\n"), False, "uv's interpreter queries"),
        ((CASE, "-I", "-c", "import json\nfrom obelize.packs import loader", "p"), False, ASKS_OBELIZE),
        ((CASE, "-I", "-c", "import compileall, sysconfig"), False, "bytecode compiles of templates"),
        ((CASE, "-I", "-c", VERSION_PROGRAM, "x"), False, "version checks (importlib.metadata)"),
        # a path that merely names obelize is not obelize
        ((CASE, "-c", "print(1)", "/tmp/obelize-bench-uv"), False, "other Python, case venvs and tools"),
        ((OWN, "-m", "pytest_obelize_bench.cli", "publish"), False, "obelize-bench commands"),
        (("/usr/bin/git", "status"), False, "git"),
    ],
)
def test_kinds(argv: tuple[str, ...], suite: bool, kind: str) -> None:
    assert kind_of(argv, suite=suite, project_venv=VENV) == kind


def test_the_breakdown_sums_by_kind_and_names_what_has_no_command_line() -> None:
    processes = [
        Ended("python", 100, 1, 0.5, 0.1, False),  # the suite's controller
        Ended("python", 101, 100, 3.0, 0.5, False),  # its worker
        Ended("python", 105, 103, 1.2, 0.1, False),  # obelize fix
        Ended("python", 108, 101, 1.0, 0.2, False),  # another obelize fix, traced below
        Ended("bwrap", 109, 103, 0.0, 0.01, True),  # bwrap's fork: no program of its own
        Ended("strace", 99, 98, 0.1, 2.0, False),  # begun before the recording
    ]
    lines = {**commands(TRACE.splitlines()), 108: (CASE, "-m", "obelize", "fix")}
    shares = {share.kind: share for share in breakdown(processes, lines, suite_pid=100, project_venv=VENV)}
    fixes = shares["obelize fix"]
    assert fixes.processes == 2 and fixes.user == pytest.approx(2.2) and fixes.system == pytest.approx(0.3)
    assert shares["the suite itself (its controller and workers)"].processes == 2
    assert shares["no command line recorded: bwrap"].processes == 1
    assert shares["no command line recorded: strace"].system == 2.0
    first = breakdown(processes, lines, suite_pid=100, project_venv=VENV)[0]
    assert first.kind == "the suite itself (its controller and workers)"  # most processor time first


def test_a_process_id_that_two_processes_had_is_not_joined_to_either_command_line() -> None:
    """Ids wrap at ``pid_max`` (32,768 on many machines, fewer than a suite's processes and threads)."""
    processes = [Ended("python", 105, 103, 1.2, 0.1, False), Ended("git", 105, 104, 0.0, 0.01, False)]
    lines = commands(TRACE.splitlines())
    kinds = {share.kind for share in breakdown(processes, lines, suite_pid=100, project_venv=VENV)}
    assert kinds == {"process id used twice: python", "process id used twice: git"}


def test_the_report_sets_obelize_against_the_target_and_sums_the_small_kinds() -> None:
    shares = [
        Share("obelize fix", 200, 270.0, 30.0),
        Share("obelize scan", 60, 55.0, 5.0),
        Share("pytest sessions started by tests", 190, 230.0, 10.0),
        Share("git", 5000, 0.5, 1.0),
        Share("uname", 90, 0.1, 0.0),
    ]
    lines = report(shares, wall=400.0, cores=2, target_minutes=4)
    assert "| obelize fix | 200 | 270.0 | 30.0 | 49.9 % |" in lines
    assert "| 2 other kinds, each under 0.5 % | 5090 | 0.6 | 1.0 | 0.3 % |" in lines
    assert not any(line.startswith("| git ") for line in lines)
    assert lines[-2] == "all processes: 555.6 s user, 46.0 s system, in 400.0 s of wall (1.50 cores busy of 2)"
    assert lines[-1] == "obelize: 260 runs, 360.0 processor-seconds, 75 % of the 480 a 4-minute suite has on 2 cores"


def _traced() -> bool:
    """Whether this process is traced already, as under the benchmark's own recording: a process has
    one tracer, so a strace started here could not follow its child."""
    status = Path("/proc/self/status")
    fields = (
        dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line) if status.exists() else {}
    )
    return fields.get("TracerPid", "0").strip() != "0"


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
@pytest.mark.skipif(_traced(), reason="this process is traced already (the benchmark's own recording)")
def test_the_real_strace_gives_each_process_of_a_tree_its_command_line(tmp_path: Path) -> None:
    trace = tmp_path / "exec.trace"
    tree = "\n".join(
        (
            "import subprocess, sys",
            "subprocess.run([sys.executable, '-I', '-c', 'print(1)'])",
            "subprocess.run(['git', '--version'])",
        )
    )
    argv = [*RECORDER, "-o", str(trace), sys.executable, "-c", tree]
    done = subprocess.run(argv, check=False, capture_output=True, text=True)
    if done.returncode != 0 and "Operation not permitted" in done.stderr:  # ptrace refused (a container's policy)
        pytest.skip(f"strace cannot trace here: {done.stderr.strip()[:200]}")
    assert done.returncode == 0, done.stderr
    with trace.open(encoding="utf-8") as handle:
        found = commands(handle)
    started, *children = found.values()
    assert started == (sys.executable, "-c", tree)
    assert (sys.executable, "-I", "-c", "print(1)") in children
    assert ("git", "--version") in children
    assert len(found) == 3
