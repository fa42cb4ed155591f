"""The harness's own interpreter and a step runner over real uv virtualenvs, for the environment tests."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from pytest_obelize_bench.case.environment import (
    Interpreter,
    case_environment,
    describe_interpreter,
)
from pytest_obelize_bench.isolation.elide import Elider
from pytest_obelize_bench.isolation.executor import ProcessExecutor, step_environment
from pytest_obelize_bench.isolation.steps import StepRunner
from pytest_obelize_bench.isolation.workspace import prepare_workspace

HARNESS = describe_interpreter()


HARNESS_KEY = HARNESS["key"]


HARNESS_BIN = Path(os.path.realpath(getattr(sys, "_base_executable", sys.executable))).parent


def make_runner(root: Path, case: str, uv_cache: Path) -> StepRunner:
    space = prepare_workspace(root, "round-1", case)
    space.checkout.mkdir()
    env = step_environment(
        os.environ,
        home=space.home,
        extra={
            "UV_CACHE_DIR": str(uv_cache),
            "UV_EXCLUDE_NEWER": "2026-01-15T00:00:00Z",
            # PyPI is reached through a TLS-intercepting proxy here, whose CA only the system
            # store holds; SSL_CERT_FILE is (rightly) not inherited by a step.
            "UV_SYSTEM_CERTS": "1",
        },
    )
    elider = Elider([("<case>", space.checkout), ("<logs>", space.logs), ("<work>", root)])
    return StepRunner(ProcessExecutor(), logs=space.logs, elider=elider, env=env, cwd=space.checkout)


def venv_of(runner: StepRunner) -> Path:
    return runner.cwd / ".venv"


def activate(runner: StepRunner, interpreter: Interpreter) -> None:
    runner.env = case_environment(runner.env, venv_of(runner))


__all__ = ["HARNESS", "HARNESS_BIN", "HARNESS_KEY", "activate", "make_runner", "venv_of"]
