"""The test phases: the baseline (step 5) and the after-run (step 8), and the compile check (step 6).

A suite's exit code is a measurement, never a reason to stop the case.  Its counts come only from
the junit report the harness itself asked for, written outside the checkout, so a repository
cannot hand the harness a report of its own; without that report the counts are null, never 0.
"""

from __future__ import annotations

import os
import re
import shlex
import tempfile
import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pytest_obelize_bench._util.caps import JUNIT_BYTES
from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench._util.safe_io import NotRegular, TooLarge, read_bounded
from pytest_obelize_bench.grading.record import SuiteResult
from pytest_obelize_bench.isolation.policy import DEFAULT_LIMITS, PYTHON_NAMES, Step
from pytest_obelize_bench.isolation.steps import Runner
from pytest_obelize_bench.tool.run_documents import path_problem

#: Largest junit report read (a suite of tens of thousands of tests stays well under it).
MAX_JUNIT_BYTES = JUNIT_BYTES
#: Seconds the compile check may take before the case errors (a timeout is not "does not compile").
COMPILE_TIMEOUT_S = DEFAULT_LIMITS["compile"]
PYTEST_NAMES = frozenset({"pytest", "py.test"})
_PYTHON_BASENAME = re.compile(r"python[0-9.]*")
_JUNIT_FLAGS = ("--junitxml", "--junit-xml")

#: Runs in the case interpreter: compile() each named file's bytes; no import, no bytecode written.
COMPILE_PROGRAM = """\
import sys
bad = 0
for name in sys.argv[1:]:
    try:
        with open(name, "rb") as handle:
            compile(handle.read(), name, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, OSError) as error:
        bad += 1
        print(f"{name}: {type(error).__name__}: {error}")
    else:
        print(f"{name}: compiles")
sys.exit(1 if bad else 0)
"""


def _is_python(word: str, interpreter: Path) -> bool:
    return word == os.fspath(interpreter) or _PYTHON_BASENAME.fullmatch(os.path.basename(word)) is not None


def _is_pytest(argv: Sequence[str], interpreter: Path) -> bool:
    if not argv:
        return False
    first = argv[0]
    if first in PYTEST_NAMES:
        return True
    if "/" in first and first.rsplit("/", 1)[1] in PYTEST_NAMES:
        return True
    return _is_python(first, interpreter) and list(argv[1:3]) == ["-m", "pytest"]


def _names_junit(argv: Sequence[str]) -> bool:
    return any(arg in _JUNIT_FLAGS or arg.startswith(tuple(f"{flag}=" for flag in _JUNIT_FLAGS)) for arg in argv)


def suite_argv(test_cmd: str, *, interpreter: Path, junit: Path) -> tuple[list[str], bool]:
    """The argv of a test command, and whether it is a pytest command.

    Split with ``shlex`` (no shell ever runs it).  A leading ``python``/``python3`` becomes the
    case interpreter.  A pytest command (``pytest``, ``py.test``, a path ending in either, or
    ``<python> -m pytest``) gets ``--junitxml=<junit>`` unless it already names a report in either
    spelling (``--junitxml``/``--junit-xml``, with ``=`` or as a separate argument).  Raises
    ``ValueError`` for an empty or unsplittable command (a case-file problem).
    """
    argv = shlex.split(test_cmd)
    if not argv:
        raise ValueError("the test command is empty")
    if argv[0] in PYTHON_NAMES:
        argv[0] = os.fspath(interpreter)
    is_pytest = _is_pytest(argv, interpreter)
    if is_pytest and not _names_junit(argv[1:]):
        argv.append(f"--junitxml={os.fspath(junit)}")
    return argv, is_pytest


def _read_report(path: Path) -> bytes | None:
    """The junit report, or None when it is missing, a symlink, not a regular file or too large."""
    try:
        return read_bounded(path, MAX_JUNIT_BYTES)
    except (OSError, TooLarge, NotRegular):
        return None


def _count(element: ElementTree.Element, name: str) -> int:
    value = element.get(name)
    if value is None or value.strip() == "":
        return 0
    number = int(value)
    if number < 0:
        raise ValueError(f"{name} is negative")
    return number


def junit_counts(path: Path) -> tuple[int, int, int, int] | None:
    """(passed, failed, skipped, errors) summed over a junit report's ``testsuite`` elements.

    ``passed = tests - failures - errors - skipped``, as pytest writes ``tests``.  Only the
    innermost ``testsuite`` elements are summed (a nesting format repeats its children's totals
    on the parent).  None when the report is missing, not a regular file, over the size cap,
    declares entities, is not XML, has non-integer counts or counts that do not add up.
    """
    data = _read_report(Path(path))
    if data is None or b"<!ENTITY" in data:
        return None
    try:
        root = ElementTree.fromstring(data)
        suites = [element for element in root.iter("testsuite") if element.find(".//testsuite") is None]
        passed = failed = skipped = errors = 0
        for suite in suites:
            tests = _count(suite, "tests")
            failures, errs, skips = _count(suite, "failures"), _count(suite, "errors"), _count(suite, "skipped")
            if failures + errs + skips > tests:
                return None
            passed += tests - failures - errs - skips
            failed += failures
            skipped += skips
            errors += errs
    except (ElementTree.ParseError, ValueError):
        return None
    return passed, failed, skipped, errors


def suite_status(*, is_pytest: bool, exit_code: int, timed_out: bool, junit_errors: int | None) -> str:
    """The protocol's status of one phase, in the words obelize verify uses.

    A timeout is inconclusive whatever the code.  pytest: 0 pass, 1 fail, 2 fail when its junit
    report counts an error (an unimportable test module) and otherwise inconclusive, 3-5 and any
    other code inconclusive.  Any other command: 0 pass, anything else fail.
    """
    if timed_out:
        return "inconclusive"
    if not is_pytest:
        return "pass" if exit_code == 0 else "fail"
    if exit_code == 0:
        return "pass"
    if exit_code == 1:
        return "fail"
    if exit_code == 2 and junit_errors is not None and junit_errors > 0:
        return "fail"
    return "inconclusive"


def run_suite(
    runner: Runner,
    *,
    phase: Literal["baseline", "after"],
    number: int,
    test_cmd: str | None,
    interpreter: Path,
    junit_dir: Path,
    timeout: float,
    cwd: Path,
) -> SuiteResult:
    """Run one test phase as step ``number`` named ``phase``; its exit code is a measurement.

    ``not_run`` without a test command.  The report goes to a fresh folder made for this step
    under ``junit_dir``, so a previous run's report, or one a repository planted, is never read.
    A suite that outlasts its limit, or whose program
    cannot be started, is a timeout or crash at a step: the case measured nothing, so it is a
    ``CaseError`` (``timeout``, or ``suite_crashed``) and never a status.
    """
    if test_cmd is None:
        return SuiteResult(status="not_run")
    junit_dir = Path(junit_dir)
    junit_dir.mkdir(parents=True, exist_ok=True)
    # A fresh folder with an unguessable name, made for this step: no report can be there before
    # the step starts, and a repository cannot name the path in advance.
    junit = Path(tempfile.mkdtemp(prefix=f"{phase}-", dir=junit_dir)) / "report.xml"
    argv, is_pytest = suite_argv(test_cmd, interpreter=interpreter, junit=junit)
    asked = is_pytest and argv[-1] == f"--junitxml={os.fspath(junit)}"
    completed = runner.run(number, phase, argv, timeout=timeout, cwd=cwd)
    if completed.timed_out:
        raise CaseError(phase, "timeout", f"the {phase} suite outlasted {timeout:g}s")
    if completed.launch_error is not None:
        raise CaseError(
            phase, "suite_crashed", f"the {phase} suite could not be started: {completed.launch_error}"[:300]
        )
    # Counts only from the report this step asked for: a command that names its own report, or
    # is not pytest, has null counts whatever files appear.
    counts = junit_counts(junit) if asked else None
    status = suite_status(
        is_pytest=is_pytest,
        exit_code=completed.exit_code,
        timed_out=False,
        junit_errors=None if counts is None else counts[3],
    )
    if counts is None:
        return SuiteResult(status=status)  # type: ignore[arg-type]
    passed, failed, skipped, errors = counts
    return SuiteResult(status=status, passed=passed, failed=failed + errors, skipped=skipped)  # type: ignore[arg-type]


def compile_written(
    runner: Runner,
    *,
    interpreter: Path,
    checkout: Path,
    written: Sequence[str],
    timeout: float = COMPILE_TIMEOUT_S,
) -> bool | None:
    """Whether every ``.py`` file the run wrote compiles under the case interpreter (step 6).

    None only when the run wrote nothing at all; True when it wrote files but no ``.py`` file
    (nothing it wrote fails to compile).  The interpreter runs isolated (``-I``: no user site,
    no PYTHON* variables, the checkout not on sys.path) and ``-B``, and only calls ``compile()`` on
    each file's bytes, so nothing of the repository is imported and no bytecode is written.
    A timeout is ``CaseError("compile", "timeout")`` and an interpreter that cannot start is
    ``CaseError("compile", "venv_failed")``: neither says the patch does not compile.
    """
    if not written:
        return None
    files = [path for path in written if path.endswith(".py")]
    if not files:
        return True
    for path in files:
        problem = path_problem(path)
        if problem is not None:
            raise CaseError("compile", "run_folder_unreadable", f"written path {path[:200]!r} {problem}")
    argv = [os.fspath(interpreter), "-I", "-B", "-c", COMPILE_PROGRAM, *files]
    completed = runner.run(Step.FIX, "compile", argv, timeout=timeout, cwd=checkout)
    if completed.timed_out:
        raise CaseError("compile", "timeout", f"compile outlasted {timeout:g}s")
    if completed.launch_error is not None:
        raise CaseError("compile", "venv_failed", "the case interpreter could not be started; see the step log")
    return completed.exit_code == 0


__all__ = [
    "COMPILE_PROGRAM",
    "COMPILE_TIMEOUT_S",
    "MAX_JUNIT_BYTES",
    "compile_written",
    "junit_counts",
    "run_suite",
    "suite_argv",
    "suite_status",
]
