"""A suite's phases and the compile step: what runs, which report is read, and what an error is."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import pytest

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench.case.suite import (
    compile_written,
    junit_counts,
    run_suite,
    suite_argv,
    suite_status,
)
from pytest_obelize_bench.grading.record import SuiteResult
from tests.helpers.step_runners import Done, FakeRunner, SubprocessRunner

INTERP = Path("/case/.venv/bin/python")


def junit_writer(text: str, code: int = 0, **done: object) -> Callable[[list[str]], Done]:
    def act(argv: list[str]) -> Done:
        flag = next((a for a in argv if a.startswith("--junitxml=")), None)
        if flag is not None:
            Path(flag.split("=", 1)[1]).write_text(text)
        return Done(exit_code=code, **done)  # type: ignore[arg-type]

    return act


def phase(
    runner: FakeRunner, tmp_path: Path, test_cmd: str | None, name: Literal["baseline", "after"] = "baseline"
) -> SuiteResult:
    return run_suite(
        runner,
        phase=name,
        number=5 if name == "baseline" else 8,
        test_cmd=test_cmd,
        interpreter=INTERP,
        junit_dir=tmp_path / "logs" / "junit",
        timeout=600,
        cwd=tmp_path / "case",
    )


def test_a_real_pytest_report(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_mix.py").write_text(
        textwrap.dedent("""
        import pytest

        def test_pass(): pass
        def test_pass_too(): pass
        def test_fail(): assert False
        @pytest.mark.skip
        def test_skip(): pass
        @pytest.fixture
        def broken(): raise RuntimeError
        def test_error(broken): pass
    """)
    )
    report = tmp_path / "junit.xml"
    argv, is_pytest = suite_argv(
        "python -m pytest -q -p no:cacheprovider", interpreter=Path(sys.executable), junit=report
    )
    assert is_pytest
    subprocess.run(argv, cwd=project, capture_output=True, timeout=120, check=False)
    assert junit_counts(report) == (2, 1, 1, 1)


@pytest.mark.parametrize(
    "is_pytest,code,timed_out,errors,status",
    [
        (True, 0, False, None, "pass"),
        (True, 1, False, None, "fail"),
        (True, 2, False, None, "inconclusive"),
        (True, 2, False, 0, "inconclusive"),
        (True, 2, False, 1, "fail"),
        (True, 3, False, 1, "inconclusive"),
        (True, 4, False, None, "inconclusive"),
        (True, 5, False, None, "inconclusive"),
        (True, 137, False, None, "inconclusive"),
        (True, 124, True, None, "inconclusive"),
        (True, 0, True, None, "inconclusive"),
        (False, 0, False, None, "pass"),
        (False, 1, False, None, "fail"),
        (False, 4, False, None, "fail"),
        (False, 5, False, None, "fail"),
        (False, 127, False, None, "fail"),
        (False, 0, True, None, "inconclusive"),
    ],
)
def test_suite_status(is_pytest: bool, code: int, timed_out: bool, errors: int | None, status: str) -> None:
    assert suite_status(is_pytest=is_pytest, exit_code=code, timed_out=timed_out, junit_errors=errors) == status


def test_no_test_command_is_not_run(tmp_path: Path) -> None:
    runner = FakeRunner()
    assert phase(runner, tmp_path, None) == SuiteResult(status="not_run", passed=None, failed=None, skipped=None)
    assert runner.calls == []


def test_a_pytest_phase_counts_from_the_harness_report(tmp_path: Path) -> None:
    runner = FakeRunner(junit_writer('<testsuite tests="6" failures="1" errors="1" skipped="1"/>', code=1))
    result = phase(runner, tmp_path, "python -m pytest -q", "after")
    assert result == SuiteResult(status="fail", passed=3, failed=2, skipped=1)
    call = runner.calls[0]
    assert (call.number, call.name, call.timeout, call.reason, call.cwd) == (8, "after", 600, None, tmp_path / "case")
    assert call.argv[:4] == [str(INTERP), "-m", "pytest", "-q"]
    report = Path(call.argv[4].removeprefix("--junitxml="))
    # A fresh, unguessable folder under the logs' junit folder, made for this step.
    assert report.name == "report.xml" and report.parent.parent == tmp_path / "logs" / "junit"
    assert report.parent.name.startswith("after-") and len(report.parent.name) > len("after-") + 4


def test_each_step_gets_a_report_path_that_did_not_exist_before(tmp_path: Path) -> None:
    seen: list[tuple[Path, bool, bool]] = []

    def act(argv: list[str]) -> Done:
        report = Path(argv[-1].removeprefix("--junitxml="))
        seen.append((report, report.exists(), any(report.parent.iterdir())))
        return Done(exit_code=0)  # the suite writes no report this time

    junit_dir = tmp_path / "logs" / "junit"
    junit_dir.mkdir(parents=True)
    (junit_dir / "baseline.xml").write_text('<testsuite tests="50"/>')  # a guess at the old fixed path
    first = phase(FakeRunner(act), tmp_path, "pytest")
    second = phase(FakeRunner(act), tmp_path, "pytest")
    assert first == second == SuiteResult(status="pass")  # counts null, never the planted 50
    assert [exists or populated for _, exists, populated in seen] == [False, False]
    assert seen[0][0] != seen[1][0]


def test_a_report_planted_at_the_harness_path_by_a_non_pytest_command_is_not_read(tmp_path: Path) -> None:
    # Whatever appears in the logs folder, a command the harness gave no report flag has null counts.
    def act(argv: list[str]) -> Done:
        for folder in (tmp_path / "logs" / "junit").iterdir():
            (folder / "report.xml").write_text('<testsuite tests="9"/>')
        return Done(exit_code=0)

    assert phase(FakeRunner(act), tmp_path, "python check.py") == SuiteResult(status="pass")


def test_a_non_pytest_command_has_null_counts(tmp_path: Path) -> None:
    runner = FakeRunner(lambda argv: Done(exit_code=0))
    assert phase(runner, tmp_path, "python check.py") == SuiteResult(status="pass")
    assert phase(FakeRunner(lambda argv: Done(exit_code=3)), tmp_path, "make test") == SuiteResult(status="fail")


def test_a_report_the_command_names_itself_is_not_read(tmp_path: Path) -> None:
    def act(argv: list[str]) -> Done:
        (tmp_path / "mine.xml").write_text('<testsuite tests="7"/>')
        return Done(exit_code=0)

    assert phase(FakeRunner(act), tmp_path, f"pytest --junitxml={tmp_path / 'mine.xml'}") == SuiteResult(status="pass")


def test_exit_2_with_a_collection_error_is_fail(tmp_path: Path) -> None:
    runner = FakeRunner(junit_writer('<testsuite tests="1" errors="1"/>', code=2))
    assert phase(runner, tmp_path, "pytest") == SuiteResult(status="fail", passed=0, failed=1, skipped=0)


def test_exit_2_without_errors_is_inconclusive(tmp_path: Path) -> None:
    runner = FakeRunner(junit_writer('<testsuite tests="3" failures="1"/>', code=2))
    assert phase(runner, tmp_path, "pytest").status == "inconclusive"


def test_a_suite_timeout_errors_the_case(tmp_path: Path) -> None:
    # A timeout at a step measured nothing: the protocol's error tier, not an inconclusive status.
    runner = FakeRunner(lambda argv: Done(exit_code=124, timed_out=True))
    with pytest.raises(CaseError) as failed:
        phase(runner, tmp_path, "pytest")
    assert (failed.value.step, failed.value.reason) == ("baseline", "timeout")


def test_a_suite_that_cannot_start_errors_the_case(tmp_path: Path) -> None:
    runner = FakeRunner(lambda argv: Done(exit_code=127, launch_error="cannot run make: not found"))
    with pytest.raises(CaseError) as failed:
        phase(runner, tmp_path, "make test")
    assert (failed.value.step, failed.value.reason) == ("baseline", "suite_crashed")
    assert "cannot run make: not found" in failed.value.detail


def test_a_real_suite(tmp_path: Path) -> None:
    case = tmp_path / "case"
    case.mkdir()
    (case / "test_ok.py").write_text("def test_one():\n    pass\n\ndef test_two():\n    pass\n")
    runner = SubprocessRunner()
    result = run_suite(
        runner,
        phase="baseline",
        number=5,
        test_cmd="python -m pytest -q -p no:cacheprovider",
        interpreter=Path(sys.executable),
        junit_dir=tmp_path / "junit",
        timeout=120,
        cwd=case,
    )
    assert result == SuiteResult(status="pass", passed=2, failed=0, skipped=0)
    assert not (case / "baseline.xml").exists()


def test_compiles_is_null_only_when_nothing_was_written() -> None:
    runner = FakeRunner()
    assert compile_written(runner, interpreter=INTERP, checkout=Path("/c"), written=[]) is None
    # A run that wrote only a manifest wrote no .py file that fails to compile.
    assert compile_written(runner, interpreter=INTERP, checkout=Path("/c"), written=["requirements.txt"]) is True
    assert runner.calls == []


def test_compile_step_shape() -> None:
    runner = FakeRunner(lambda argv: Done(exit_code=0))
    assert compile_written(runner, interpreter=INTERP, checkout=Path("/c"), written=["a.py", "req.txt", "pkg/b.py"])
    call = runner.calls[0]
    assert (call.number, call.name, call.timeout, call.reason, call.cwd) == (6, "compile", 120, None, Path("/c"))
    assert call.argv[:4] == [str(INTERP), "-I", "-B", "-c"]
    assert call.argv[5:] == ["a.py", "pkg/b.py"]


def test_a_compile_timeout_is_an_error_not_a_verdict() -> None:
    runner = FakeRunner(lambda argv: Done(exit_code=124, timed_out=True))
    with pytest.raises(CaseError) as excinfo:
        compile_written(runner, interpreter=INTERP, checkout=Path("/c"), written=["a.py"], timeout=5)
    assert (excinfo.value.step, excinfo.value.reason, excinfo.value.detail) == (
        "compile",
        "timeout",
        "compile outlasted 5s",
    )


def test_an_interpreter_that_cannot_start_is_an_error() -> None:
    runner = FakeRunner(lambda argv: Done(exit_code=127, launch_error="cannot run /case/python: No such file"))
    with pytest.raises(CaseError) as excinfo:
        compile_written(runner, interpreter=INTERP, checkout=Path("/c"), written=["a.py"])
    assert excinfo.value.reason == "venv_failed"
    assert "/case" not in excinfo.value.detail


def test_a_written_path_outside_the_checkout_is_refused() -> None:
    with pytest.raises(CaseError) as excinfo:
        compile_written(FakeRunner(), interpreter=INTERP, checkout=Path("/c"), written=["../x.py"])
    assert excinfo.value.reason == "run_folder_unreadable"


def test_real_compile(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "good.py").write_text("from google import genai\nclient = genai.Client()\n")
    (tmp_path / "pkg" / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\nname = '\xe9'\n")
    (tmp_path / "bad.py").write_text("def broken(:\n    pass\n")
    (tmp_path / "nul.py").write_bytes(b"x = 1\x00\n")
    (tmp_path / "side_effect.py").write_text("open('imported', 'w').write('x')\n")
    runner = SubprocessRunner()
    kwargs: dict[str, Any] = {"interpreter": Path(sys.executable), "checkout": tmp_path}
    assert compile_written(runner, written=["good.py", "pkg/latin.py", "side_effect.py"], **kwargs) is True
    assert compile_written(runner, written=["good.py", "bad.py"], **kwargs) is False
    assert compile_written(runner, written=["nul.py"], **kwargs) is False
    assert compile_written(runner, written=["missing.py"], **kwargs) is False
    assert not (tmp_path / "imported").exists()
    assert not list(tmp_path.rglob("__pycache__"))
