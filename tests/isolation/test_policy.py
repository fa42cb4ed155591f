"""The harness's fixed choices: every module reads them from ``policy``, so they cannot drift apart."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from pytest_obelize_bench.case.environment import install_pinned, run_install_commands
from pytest_obelize_bench.case.suite import suite_argv
from pytest_obelize_bench.isolation import policy
from pytest_obelize_bench.isolation.executor import step_environment
from pytest_obelize_bench.isolation.limits import parse_limits
from pytest_obelize_bench.isolation.sandbox import HarnessPaths, case_layout
from pytest_obelize_bench.tool.venv import install_environment

#: Everything a hostile harness environment could hand on, and the allow-listed names besides.
HOSTILE = {
    "GEMINI_API_KEY": "k",
    "GITHUB_TOKEN": "t",
    "AWS_SECRET_ACCESS_KEY": "s",
    "PYTEST_ADDOPTS": "-p evil",
    "PYTEST_XDIST_WORKER": "gw0",
    "VIRTUAL_ENV": "/elsewhere",
    "UV_PYTHON_DOWNLOADS": "automatic",
    "HOME": "/root",
}


def every_name(value: str = "v") -> dict[str, str]:
    names = {*policy.TOOL_INSTALL_ENVIRONMENT, *policy.STEP_ENVIRONMENT, *policy.BASE_ENVIRONMENT}
    return {name: f"{value}-{name}" for name in names}


def test_a_step_and_a_tool_install_inherit_the_same_base_and_no_secret() -> None:
    source = {**every_name(), **HOSTILE}
    step = step_environment(source, home=Path("/h"))
    tool = install_environment(Path("/h"), source)
    assert set(step) - {"HOME"} <= set(tool)  # the tool install's list extends the step's
    assert {name for name in tool if name not in step} <= set(policy.INDEX_ACCESS) | {"UV_PYTHON_DOWNLOADS"}
    for env in (step, tool):
        assert set(policy.BASE_ENVIRONMENT) <= set(env)
        assert env["HOME"] == "/h"
        assert not set(env) & (set(HOSTILE) - {"HOME", "UV_PYTHON_DOWNLOADS"})
    assert tool["UV_PYTHON_DOWNLOADS"] == "never" and "UV_PYTHON_DOWNLOADS" not in step


def test_the_sandbox_writes_exactly_the_package_caches_a_step_inherits(tmp_path: Path) -> None:
    env = step_environment(every_name(str(tmp_path)), home=tmp_path / "home")
    paths = HarnessPaths(
        real_home=None, project_root=tmp_path / "p", results=tmp_path / "r", work_root=tmp_path / "w", package=tmp_path
    )
    layout = case_layout(
        paths,
        checkout=tmp_path / "c",
        home=tmp_path / "h",
        tmp=tmp_path / "t",
        junit=tmp_path / "j",
        env=env,
        uv_cache=None,
        suites_network=False,
        offline=False,
    )
    inherited = {name for name in policy.PACKAGE_CACHES if name in env}
    assert inherited == set(policy.PACKAGE_CACHES)
    assert {Path(env[name]).name for name in inherited} == {p.name for p in layout.caches}
    assert env["UV_PYTHON_INSTALL_DIR"] not in {str(p) for p in layout.caches}  # interpreters are never written


class Recorder:
    def __init__(self) -> None:
        self.argvs: list[list[str]] = []
        self.env: dict[str, str] = {}

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
    ) -> object:
        self.argvs.append(list(argv))

        class Done:
            exit_code = 0
            timed_out = False
            launch_error = None

            def output(self, limit: int = 65536) -> str:
                return "1.0\n"

        return Done()


@pytest.mark.parametrize("name", sorted(policy.PYTHON_NAMES))
def test_install_commands_and_test_commands_read_python_names_alike(name: str, tmp_path: Path) -> None:
    interpreter = tmp_path / ".venv" / "bin" / "python"
    argv, _ = suite_argv(f"{name} -m pytest -q", interpreter=interpreter, junit=tmp_path / "r.xml")
    recorder = Recorder()
    run_install_commands(recorder, [f"{name} -m pip install ."], interpreter=interpreter, checkout=tmp_path)  # type: ignore[arg-type]  # a recording runner stands in for StepRunner
    assert argv[0] == recorder.argvs[0][0] == os.fspath(interpreter)
    other, _ = suite_argv("python2 -m pytest", interpreter=interpreter, junit=tmp_path / "r.xml")
    assert other[0] == "python2"


def test_every_uv_the_harness_runs_is_the_packaged_one(tmp_path: Path) -> None:
    recorder = Recorder()
    run_install_commands(recorder, ["uv pip install ."], interpreter=Path(sys.executable), checkout=tmp_path)  # type: ignore[arg-type]  # a recording runner
    install_pinned(
        recorder,  # type: ignore[arg-type]  # a recording runner
        number=policy.Step.INSTALL_FROM,
        name="install-from",
        distribution="x",
        version="1.0",
        interpreter=Path(sys.executable),
    )
    assert Path(policy.uv_binary()).is_file()
    assert [argv[0] for argv in recorder.argvs[:2]] == [policy.uv_binary(), policy.uv_binary()]


def test_the_default_limits_are_what_an_empty_option_gives() -> None:
    assert parse_limits(None) == dict(policy.DEFAULT_LIMITS)
    changed = parse_limits("suite=5")
    assert (changed["baseline"], changed["after"]) == (5.0, 5.0)
    assert policy.DEFAULT_LIMITS["baseline"] != 5.0  # the defaults themselves are never rewritten
    with pytest.raises(TypeError):
        policy.DEFAULT_LIMITS["fix"] = 1.0  # type: ignore[index]  # the mapping is read-only on purpose
