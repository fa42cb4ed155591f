"""Recording steps: numbering, log names, elided argv, and which failures raise."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench.isolation.elide import Elider
from pytest_obelize_bench.isolation.executor import Completed, OfflineExecutor, ProcessExecutor
from pytest_obelize_bench.isolation.steps import Step, StepRunner


class Scripted:
    """A fake executor answering each call with the next scripted (exit, timed_out, launch)."""

    def __init__(self, *answers: tuple[int, bool, str | None]) -> None:
        self.answers = list(answers)
        self.calls: list[dict[str, object]] = []

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
        self.calls.append({"argv": list(argv), "cwd": cwd, "env": dict(env), "log": log, "step": step})
        exit_code, timed_out, launch = self.answers.pop(0) if self.answers else (0, False, None)
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("$ x\n\nout\n")
        return Completed(exit_code, 0.25, timed_out, launch, False, log, 5)


@pytest.fixture
def where(tmp_path: Path) -> dict[str, Path]:
    paths = {
        "case": tmp_path / "work" / "round-1" / "o__r",
        "logs": tmp_path / "work" / "round-1" / "o__r.logs",
    }
    paths["case"].mkdir(parents=True)
    return paths


def runner_for(executor: object, where: dict[str, Path]) -> StepRunner:
    elider = Elider([("<case>", where["case"]), ("<logs>", where["logs"])])
    return StepRunner(
        executor,  # type: ignore[arg-type]
        logs=where["logs"],
        elider=elider,
        env={"PATH": "/usr/bin"},
        cwd=where["case"],
    )


def test_steps_are_numbered_logged_and_elided(where: dict[str, Path]) -> None:
    fake = Scripted()
    runner = runner_for(fake, where)
    runner.run(1, "fetch", ["git", "init", "-q", str(where["case"])], timeout=300)
    runner.run(1, "fetch", ["git", "-C", str(where["case"]), "checkout"], timeout=300)
    runner.run(2, "venv", ["uv", "venv", f"{where['case']}/.venv"], timeout=300)
    assert [call["log"] for call in fake.calls] == [
        where["logs"] / "01-fetch.log",
        where["logs"] / "02-fetch.log",
        where["logs"] / "03-venv.log",
    ]
    assert fake.calls[0]["argv"] == ["git", "init", "-q", str(where["case"])]  # unelided to run
    assert fake.calls[0]["cwd"] == where["case"]
    assert runner.steps == [
        Step(1, "fetch", ("git", "init", "-q", "<case>"), 0, 0.25, False),
        Step(1, "fetch", ("git", "-C", "<case>", "checkout"), 0, 0.25, False),
        Step(2, "venv", ("uv", "venv", "<case>/.venv"), 0, 0.25, False),
    ]
    assert runner.steps[2].to_json() == {
        "number": 2,
        "name": "venv",
        "argv": ["uv", "venv", "<case>/.venv"],
        "exit_code": 0,
        "duration_s": 0.25,
        "timed_out": False,
    }


def test_cwd_and_env_can_be_replaced_per_step(where: dict[str, Path], tmp_path: Path) -> None:
    fake = Scripted()
    runner = runner_for(fake, where)
    runner.run(1, "fetch", ["git"], timeout=1, cwd=tmp_path, env={"HOME": "/h"})
    assert fake.calls[0]["cwd"] == tmp_path and fake.calls[0]["env"] == {"HOME": "/h"}


def test_without_a_reason_an_exit_code_is_a_measurement(where: dict[str, Path]) -> None:
    runner = runner_for(Scripted((1, False, None), (124, True, None), (127, False, "nope")), where)
    assert runner.run(5, "baseline", ["pytest"], timeout=600).exit_code == 1
    assert runner.run(8, "after", ["pytest"], timeout=600).timed_out
    assert runner.run(6, "compile", ["x"], timeout=600).exit_code == 127
    assert [step.exit_code for step in runner.steps] == [1, 124, 127]


def test_a_failed_required_step_raises_its_reason(where: dict[str, Path]) -> None:
    runner = runner_for(Scripted((2, False, None)), where)
    with pytest.raises(CaseError) as failed:
        runner.run(3, "install", ["uv", "pip", "install", "x"], timeout=900, reason="install_failed")
    assert failed.value.as_dict() == {
        "step": "install",
        "reason": "install_failed",
        "detail": "install exited 2: out; see <logs>/01-install.log",
    }
    assert runner.steps[0].exit_code == 2  # recorded before raising


def test_a_timeout_raises_timeout_whatever_the_reason(where: dict[str, Path]) -> None:
    runner = runner_for(Scripted((124, True, None)), where)
    with pytest.raises(CaseError) as failed:
        runner.run(1, "fetch", ["git"], timeout=300, reason="fetch_failed")
    assert (failed.value.step, failed.value.reason, failed.value.detail) == (
        "fetch",
        "timeout",
        "fetch outlasted 300s",
    )


def test_a_launch_error_raises_the_steps_reason_with_the_message(where: dict[str, Path]) -> None:
    runner = runner_for(ProcessExecutor(), where)
    program = str(where["case"] / "no-such-tool")
    with pytest.raises(CaseError) as failed:
        runner.run(2, "venv", [program], timeout=10, reason="venv_failed")
    assert failed.value.reason == "venv_failed"
    assert failed.value.detail == "cannot run <case>/no-such-tool: No such file or directory"
    assert runner.steps[0] == Step(2, "venv", ("<case>/no-such-tool",), 127, runner.steps[0].duration_s, False)


def test_a_refused_program_is_recorded_and_raises_program_refused(where: dict[str, Path]) -> None:
    runner = runner_for(OfflineExecutor(ProcessExecutor()), where)
    with pytest.raises(CaseError) as failed:
        runner.run(5, "baseline", ["pytest", "-q"], timeout=600)
    assert failed.value.as_dict() == {
        "step": "baseline",
        "reason": "program_refused",
        "detail": "--fixtures-only runs no program but the running interpreter; refused: pytest",
    }
    assert runner.steps == [Step(5, "baseline", ("pytest", "-q"), 127, 0.0, False)]
    assert "refused: pytest" in (where["logs"] / "01-baseline.log").read_text()
    done = runner.run(6, "fix", [sys.executable, "-c", "print('ok')"], timeout=60)
    assert done.exit_code == 0 and done.log == where["logs"] / "02-fix.log"


def test_a_real_step_end_to_end(where: dict[str, Path]) -> None:
    runner = runner_for(ProcessExecutor(), where)
    runner.env = {"PATH": os.environ["PATH"]}
    done = runner.run(6, "compile", [sys.executable, "-c", "import os; print(os.getcwd())"], timeout=30)
    assert done.output().strip() == str(where["case"])
    assert runner.steps[0].argv[0] == sys.executable  # not a harness path given to this elider


def test_bad_names_and_reasons_are_harness_bugs(where: dict[str, Path]) -> None:
    runner = runner_for(Scripted(), where)
    with pytest.raises(ValueError, match="safe file name"):
        runner.run(1, "../escape", ["x"], timeout=1)
    with pytest.raises(ValueError, match="unknown error reason"):
        runner.run(1, "fetch", ["x"], timeout=1, reason="oops")
    assert runner.steps == []


def test_last_words_quotes_the_last_line_cut_short() -> None:
    from pytest_obelize_bench.isolation.steps import LAST_WORDS_CHARS, last_words

    assert last_words("first\n\nfatal: no such commit\n\n") == "fatal: no such commit"
    assert last_words("error\n[obelize-bench: timed out after 5s; process group killed]\n") == "error"
    assert last_words("") == ""
    long = last_words("x" * 1000)
    assert len(long) == LAST_WORDS_CHARS and long.endswith("...")


def test_a_step_number_from_the_enum_is_recorded_as_a_plain_int(where: dict[str, Path]) -> None:
    import json

    from pytest_obelize_bench.isolation import policy

    runner = runner_for(Scripted((0, False, None), (3, False, None)), where)
    runner.run(policy.Step.BASELINE, "baseline", ["pytest"], timeout=60)
    runner.run(policy.MeasureStep.RUNTIME, "runtime", ["python"], timeout=60)
    numbers = [step.to_json()["number"] for step in runner.steps]
    assert [type(number) for number in numbers] == [int, int]
    assert json.dumps([step.to_json() for step in runner.steps]).count('"number": 5') == 1
    assert numbers == [5, 3]
