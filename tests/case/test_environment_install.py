"""A case's environment installed: templates, pins and reuse, on real uv virtualenvs."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench.case.environment import (
    Interpreter,
    case_environment,
    check_installed_version,
    default_uv_cache,
    exclude_newer_now,
    install_pinned,
    run_install_commands,
    uv_version,
    validate_exclude_newer,
)
from pytest_obelize_bench.case.kinds import RepositoryCase
from pytest_obelize_bench.isolation.elide import Elider
from pytest_obelize_bench.isolation.executor import Completed, step_environment
from pytest_obelize_bench.isolation.policy import uv_binary
from pytest_obelize_bench.isolation.steps import StepRunner
from tests.helpers.round_context import round_context, tool


class _Answering:
    """A fake executor: records every step's argv and environment, and prints ``answer``."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.calls: list[tuple[list[str], dict[str, str]]] = []

    def run(
        self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float, log: Path, step: str = ""
    ) -> Completed:
        self.calls.append((list(argv), dict(env)))
        log.parent.mkdir(parents=True, exist_ok=True)
        header = "$ step\n\n"
        log.write_text(header + self.answer + "\n")
        return Completed(0, 0.01, False, None, False, log, len(header))


@pytest.mark.usefixtures("index_uv_cache")
def test_pinned_install_and_an_exact_string_mismatch(
    venv_runner: tuple[StepRunner, Interpreter],
) -> None:
    runner, interpreter = venv_runner
    assert (
        install_pinned(
            runner,
            number=4,
            name="install-from",
            distribution="six",
            version="1.16.0",
            interpreter=interpreter.executable,
        )
        == "1.16.0"
    )
    assert [(s.number, s.name, s.exit_code) for s in runner.steps[-2:]] == [
        (4, "install-from", 0),
        (4, "install-from-check", 0),
    ]
    # uv installs 1.16.0 for "==1.16" (PEP 440 pads zeros); the pin as written is not what runs.
    with pytest.raises(CaseError) as failed:
        install_pinned(
            runner,
            number=7,
            name="install-to",
            distribution="six",
            version="1.16",
            interpreter=interpreter.executable,
        )
    assert failed.value.as_dict() == {
        "step": "install-to-check",
        "reason": "version_mismatch",
        "detail": "six: pinned 1.16, installed 1.16.0",
    }


@pytest.mark.usefixtures("index_uv_cache")
def test_uv_pip_install_in_an_install_command_targets_the_case_venv(
    venv_runner: tuple[StepRunner, Interpreter],
) -> None:
    runner, interpreter = venv_runner
    run_install_commands(
        runner, ["uv pip install six==1.17.0"], interpreter=interpreter.executable, checkout=runner.cwd
    )
    assert (
        check_installed_version(
            runner,
            number=3,
            name="install-check",
            distribution="six",
            version="1.17.0",
            interpreter=interpreter.executable,
        )
        == "1.17.0"
    )


@pytest.mark.usefixtures("index_uv_cache")
def test_the_legacy_sdk_installs_at_its_pin(venv_runner: tuple[StepRunner, Interpreter]) -> None:
    runner, interpreter = venv_runner
    assert (
        install_pinned(
            runner,
            number=4,
            name="install-from",
            distribution="google-generativeai",
            version="0.8.6",
            interpreter=interpreter.executable,
        )
        == "0.8.6"
    )


def test_an_invalid_pin_is_a_harness_error(runner: StepRunner) -> None:
    with pytest.raises(ValueError, match="single exact version"):
        install_pinned(runner, number=4, name="x", distribution="six", version="1.0,<2", interpreter=Path("/p"))
    with pytest.raises(ValueError, match="distribution name"):
        install_pinned(runner, number=4, name="x", distribution="six==1", version="1.0", interpreter=Path("/p"))


def test_exclude_newer() -> None:
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", exclude_newer_now())
    assert validate_exclude_newer("2025-06-01T00:00:00Z") == "2025-06-01T00:00:00Z"
    assert validate_exclude_newer("2025-06-01T02:30:00+02:00") == "2025-06-01T00:30:00Z"
    assert validate_exclude_newer("2025-06-01") == "2025-06-01T00:00:00Z"
    for bad in ("", "yesterday", "2025-06-01T00:00:00", "2025-13-01", "2025-06-01 garbage"):
        with pytest.raises(ValueError, match="not a UTC time"):
            validate_exclude_newer(bad)


def test_default_uv_cache(tmp_path: Path) -> None:
    assert default_uv_cache(tmp_path, {}) == tmp_path / "uv-cache"
    assert default_uv_cache(tmp_path, {"UV_CACHE_DIR": "/shared/uv"}) == Path("/shared/uv")


def test_uv_binary_and_version() -> None:
    assert Path(uv_binary()).is_file()
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", uv_version())


def test_case_environment_activates_the_venv(tmp_path: Path) -> None:
    got = case_environment({"PATH": "/usr/bin", "HOME": "/h"}, tmp_path / ".venv")
    assert got == {
        "PATH": f"{tmp_path / '.venv' / 'bin'}{os.pathsep}/usr/bin",
        "HOME": "/h",
        "VIRTUAL_ENV": str(tmp_path / ".venv"),
    }


def test_a_case_install_never_carries_the_tools_cutoff_exemption(tmp_path: Path) -> None:
    """The round's tool was installed with ``--exclude-newer-package obelize=...``; a case sees the cutoff alone."""
    cutoff = "2026-09-29T00:00:00Z"
    context = round_context(
        tmp_path,
        round=1,
        exclude_newer=cutoff,
        tool=tool("0.1.0", exclude_newer_tool="2026-12-03T10:00:00Z"),
    )
    # even a machine whose environment names an exemption passes none to a step
    machine = {"PATH": os.environ.get("PATH", ""), "UV_EXCLUDE_NEWER_PACKAGE": "obelize=2099-01-01T00:00:00Z"}
    env = step_environment(machine, home=tmp_path / "home", extra=RepositoryCase().step_variables(context))
    assert env["UV_EXCLUDE_NEWER"] == cutoff
    assert not any("EXCLUDE_NEWER_PACKAGE" in name for name in env)

    executor = _Answering("0.8.6")
    runner = StepRunner(
        executor,
        logs=tmp_path / "logs",
        elider=Elider([("<case>", tmp_path)]),
        env=env,
        cwd=tmp_path,
    )
    constraints = tmp_path / "constraints.txt"
    constraints.write_text("google-generativeai==0.8.6\n")
    for held in (None, constraints):
        install_pinned(
            runner,
            number=4,
            name="install-from",
            distribution="google-generativeai",
            version="0.8.6",
            interpreter=tmp_path / "python",
            constraints=held,
        )
    assert executor.calls
    for argv, step_env in executor.calls:
        assert not any(arg.startswith("--exclude-newer") for arg in argv), argv
        assert step_env["UV_EXCLUDE_NEWER"] == cutoff
        assert not any("EXCLUDE_NEWER_PACKAGE" in name for name in step_env)
