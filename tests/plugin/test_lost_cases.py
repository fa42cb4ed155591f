"""No case ends without a record: timeouts, a killed worker, a stage that raises, SIGTERM.

Each test builds fixture repositories whose suite misbehaves on purpose and runs the real plugin
in a subprocess (the fixtures pass: no network, real obelize), then reads what it left.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

FIXTURES = Path(__file__).resolve().parents[2] / "cases" / "fixtures"


def add_fixture(pytester: pytest.Pytester, name: str, test_cmd: str, base: str = "unverified") -> Path:
    """A copy of a shipped fixture under a new id, with its own test command."""
    target = pytester.path / "cases" / "fixtures" / name
    shutil.copytree(FIXTURES / base, target)
    data = yaml.safe_load((target / "case.yaml").read_text(encoding="utf-8"))
    data["id"] = name
    data["test_cmd"] = test_cmd
    (target / "case.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    (target / "expected.json").unlink()
    return target


def run(pytester: pytest.Pytester, *args: str, work: Path | None = None) -> pytest.RunResult:
    work = work or pytester.path / "work"
    return pytester.runpytest_subprocess(
        "--fixtures-only", "-p", "no:cacheprovider", f"--bench-work={work}", "-rT", *args
    )


def written_error(fixture: Path) -> dict[str, str] | None:
    error: dict[str, str] | None = json.loads((fixture / "expected.json").read_text(encoding="utf-8"))["error"]
    return error


SLEEP = 'python -c "import time; time.sleep(120)"'


def test_a_step_limit_from_the_command_line_errors_the_case_as_a_timeout(pytester: pytest.Pytester) -> None:
    fixture = add_fixture(pytester, "sleeper", SLEEP)
    started = time.monotonic()
    result = run(pytester, "--bench-step-timeout=suite=2", "--bench-update-expected")
    assert time.monotonic() - started < 90
    assert result.ret == 0
    assert written_error(fixture) == {
        "step": "baseline",
        "reason": "timeout",
        "detail": "the baseline suite outlasted 2s",
    }


@pytest.mark.parametrize("value", ["suite", "sute=3", "fix=-1", "fix=nan", "fix=soon"])
def test_a_bad_step_limit_is_a_usage_error(pytester: pytest.Pytester, value: str) -> None:
    add_fixture(pytester, "plain", "python check.py")
    result = run(pytester, f"--bench-step-timeout={value}", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--bench-step-timeout:*"])


def test_pytest_timeout_leaves_a_timeout_record_not_a_missing_one(pytester: pytest.Pytester) -> None:
    fixture = add_fixture(pytester, "sleeper", SLEEP)
    started = time.monotonic()
    result = run(pytester, "--timeout=4", "--bench-update-expected")
    assert time.monotonic() - started < 90
    assert written_error(fixture) == {
        "step": "harness",
        "reason": "timeout",
        "detail": "pytest-timeout ended the item; its step was killed",
    }
    result.stdout.fnmatch_lines(["error (1): sleeper"])


def test_a_killed_worker_gives_its_case_a_worker_lost_record(pytester: pytest.Pytester) -> None:
    add_fixture(pytester, "killer", 'python -c "import os, signal; os.kill(os.getppid(), signal.SIGKILL)"')
    shutil.copytree(FIXTURES / "clean", pytester.path / "cases" / "fixtures" / "clean")
    # Unsandboxed: inside bwrap's PID namespace a suite cannot reach the worker at all.
    result = run(pytester, "-n", "2", "--bench-sandbox=none")
    text = result.stdout.str()
    assert "crashed while running" in text
    result.stdout.fnmatch_lines(["error (1): killer", "verified_success (1): clean"])


def test_a_stage_that_raises_anything_still_gives_a_record(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory
) -> None:
    add_fixture(pytester, "plain", "python check.py")
    pytester.makeconftest(
        """
        import pytest_obelize_bench.case.suite as suite

        def broken(*args, **kwargs):
            raise BaseException("not even an Exception")

        suite.run_suite = broken
        """
    )
    # The conftest would make the work root unisolated if the work root sat below it.
    result = run(pytester, work=tmp_path_factory.mktemp("work"))
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*harness crashed inside this case*", "error (1): plain"])


def test_sigterm_kills_the_running_step_and_says_how_many_cases_are_missing(pytester: pytest.Pytester) -> None:
    marker = pytester.path / "suite.pid"
    add_fixture(
        pytester,
        "a-sleeper",
        'python -c "import os, pathlib, time; '
        f'pathlib.Path({str(marker)!r}).write_text(str(os.getpid())); time.sleep(120)"',
    )
    add_fixture(pytester, "b-later", "python check.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    proc = subprocess.Popen(
        # Unsandboxed, so the suite can leave its host PID where the test reads it.
        [
            sys.executable,
            "-m",
            "pytest",
            "--fixtures-only",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            "-rT",
            "--bench-sandbox=none",
            f"--bench-work={pytester.path / 'work'}",
        ],
        cwd=pytester.path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while not marker.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert marker.exists(), "the suite never started"
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
    assert "the round was interrupted: 1 of 2 cases have no record" in out
    assert "error (1): a-sleeper" in out
    suite_pid = int(marker.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(suite_pid, 0)


def test_a_published_error_detail_carries_no_secret_and_no_machine_path(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_notarealtoken0123456789")
    fixture = add_fixture(pytester, "leaky", "python check.py")
    pytester.makeconftest(
        """
        import os
        from pathlib import Path
        import pytest_obelize_bench.case.suite as suite
        from pytest_obelize_bench._util.case_error import CaseError

        def leaky(*args, junit_dir, **kwargs):
            said = f"token {os.environ['GITHUB_TOKEN']} in {Path.home() / '.netrc'} under {junit_dir}"
            raise CaseError("baseline", "install_failed", said + " " + "x" * 400)

        suite.run_suite = leaky
        """
    )
    run(pytester, "--bench-update-expected", work=tmp_path_factory.mktemp("work"))
    error = written_error(fixture)
    assert error is not None and error["reason"] == "install_failed"
    detail = error["detail"]
    assert "ghp_" not in detail and "<redacted>" in detail
    # pytester gives the session a HOME inside the project, so its label is <repo> there.
    assert str(pytester.path) not in detail and re.search(r"<(harness-home|repo)>/\.netrc", detail)
    assert "<logs>/junit" in detail
    assert len(detail) <= 200


def test_graded_facts_past_the_bound_error_the_case(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory
) -> None:
    fixture = add_fixture(pytester, "bulky", "python check.py")
    pytester.makeconftest(
        """
        import pytest_obelize_bench.case.pipeline as pipeline

        pipeline.MAX_GRADED_FACTS_BYTES = 200  # the real bound is 5 MiB; this fixture's facts are larger than 200 B
        """
    )
    run(pytester, "--bench-update-expected", work=tmp_path_factory.mktemp("work"))
    error = written_error(fixture)
    assert error is not None
    assert (error["step"], error["reason"]) == ("fix", "run_folder_unreadable")
    assert "over the 200 bytes a published round keeps per case" in error["detail"]
