"""The executor: real subprocesses, real process groups, real pipes."""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
import textwrap
import threading
import time
import tracemalloc
from pathlib import Path

import pytest

from pytest_obelize_bench.isolation.executor import (
    ALLOWED_ENVIRONMENT,
    DRAIN_GRACE_S,
    KILL_GRACE_S,
    OUTPUT_CAP_BYTES,
    Completed,
    OfflineExecutor,
    ProcessExecutor,
    ProgramRefused,
    run_program,
    step_environment,
)

PY = sys.executable


def py(code: str) -> list[str]:
    return [PY, "-c", textwrap.dedent(code)]


def env() -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", os.defpath)}


def gone(pid: int) -> bool:
    """The pid no longer runs: absent, or a zombie nobody reaps (PID 1 here does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except FileNotFoundError:
        return True
    return stat[stat.rfind(b")") + 2 :].split()[0] in (b"Z", b"X")


def wait_gone(pid: int, seconds: float = 2.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if gone(pid):
            return True
        time.sleep(0.02)
    return gone(pid)


def run(
    tmp_path: Path,
    argv: list[str],
    timeout: float = 30,
    *,
    output_cap: int = OUTPUT_CAP_BYTES,
    kill_grace_s: float = KILL_GRACE_S,
    drain_grace_s: float = DRAIN_GRACE_S,
) -> Completed:
    executor = ProcessExecutor(output_cap=output_cap, kill_grace_s=kill_grace_s, drain_grace_s=drain_grace_s)
    return executor.run(argv, cwd=tmp_path, env=env(), timeout=timeout, log=tmp_path / "logs" / "01-step.log")


def test_exit_code_header_and_merged_output(tmp_path: Path) -> None:
    argv = py(
        """
        import sys
        print("to stdout", flush=True)
        print("to stderr", file=sys.stderr, flush=True)
        sys.exit(3)
        """
    )
    done = run(tmp_path, argv)
    assert done.exit_code == 3
    assert not done.timed_out and done.launch_error is None and not done.truncated
    assert isinstance(done.duration_s, float) and done.duration_s == round(done.duration_s, 3)
    raw = done.log.read_bytes()
    header = ("$ " + shlex.join(argv) + "\n\n").encode()
    assert raw.startswith(header)
    assert done.output_offset == len(header)
    assert done.output() == "to stdout\nto stderr\n"
    assert done.output(limit=4) == "to s"


def test_exit_zero_and_signal_exit_is_128_plus_n(tmp_path: Path) -> None:
    assert run(tmp_path, py("pass")).exit_code == 0
    killed = run(tmp_path, py("import os, signal; os.kill(os.getpid(), signal.SIGKILL)"))
    assert killed.exit_code == 128 + signal.SIGKILL


def test_output_is_streamed_to_the_log_while_the_step_runs(tmp_path: Path) -> None:
    go = tmp_path / "go"
    argv = py(
        f"""
        import os, time
        print("first", flush=True)
        for _ in range(1000):
            if os.path.exists({str(go)!r}):
                break
            time.sleep(0.01)
        print("second", flush=True)
        """
    )
    log = tmp_path / "logs" / "01-step.log"
    result: list[Completed] = []
    worker = threading.Thread(
        target=lambda: result.append(ProcessExecutor().run(argv, cwd=tmp_path, env=env(), timeout=30, log=log))
    )
    worker.start()

    def printed() -> bytes:
        header = len(("$ " + shlex.join(argv) + "\n\n").encode())
        return log.read_bytes()[header:] if log.exists() else b""

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and printed() != b"first\n":
        time.sleep(0.01)
    assert printed() == b"first\n"
    go.touch()
    worker.join(30)
    assert result[0].exit_code == 0
    assert result[0].output() == "first\nsecond\n"


def test_output_over_the_cap_is_cut_drained_and_not_held_in_memory(tmp_path: Path) -> None:
    total = 20 * 1024 * 1024
    argv = py(
        f"""
        import sys
        block = b"x" * 65535 + b"\\n"
        for _ in range({total} // 65536):
            sys.stdout.buffer.write(block)
        sys.stdout.flush()
        print("done", file=sys.stderr)
        """
    )
    tracemalloc.start()
    try:
        done = run(tmp_path, argv)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert done.exit_code == 0 and done.truncated
    size = done.log.stat().st_size
    assert size <= done.output_offset + OUTPUT_CAP_BYTES + 200
    dropped = total + len("done\n") - OUTPUT_CAP_BYTES
    tail = done.log.read_bytes()[-200:].decode()
    assert tail.endswith(f"\n[obelize-bench: output cut at {OUTPUT_CAP_BYTES} bytes; {dropped} more bytes dropped]\n")
    assert peak < 4 * 1024 * 1024, f"the executor held {peak} bytes"


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    argv = py(
        f"""
        import subprocess, time
        child = subprocess.Popen([{PY!r}, "-c", "import time; time.sleep(60)"])
        print(child.pid, flush=True)
        time.sleep(60)
        """
    )
    started = time.monotonic()
    done = run(tmp_path, argv, timeout=1.5)
    assert time.monotonic() - started < 10
    assert done.timed_out and done.exit_code == 124
    assert 1.5 <= done.duration_s < 5
    grandchild = int(done.output().split()[0])
    assert wait_gone(grandchild)
    assert "[obelize-bench: timed out after 1.5s; process group killed]" in done.output()


def test_background_process_left_by_a_normal_exit_is_killed(tmp_path: Path) -> None:
    argv = py(
        f"""
        import subprocess
        child = subprocess.Popen([{PY!r}, "-c", "import time; time.sleep(60)"])
        print(child.pid, flush=True)
        """
    )
    started = time.monotonic()
    done = run(tmp_path, argv)
    assert time.monotonic() - started < 5
    assert done.exit_code == 0 and not done.timed_out
    assert wait_gone(int(done.output().split()[0]))


def test_a_process_ignoring_sigterm_gets_sigkill_after_the_grace(tmp_path: Path) -> None:
    stubborn = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('armed', flush=True); time.sleep(60)"
    )
    argv = py(
        f"""
        import subprocess
        child = subprocess.Popen([{PY!r}, "-c", {stubborn!r}], stdout=subprocess.PIPE)
        child.stdout.readline()
        print(child.pid, flush=True)
        """
    )
    started = time.monotonic()
    done = run(tmp_path, argv, kill_grace_s=0.5)
    assert 0.5 <= time.monotonic() - started < 5
    assert done.exit_code == 0
    assert gone(int(done.output().split()[0]))  # the step waited for it to go after the SIGKILL


def test_a_process_in_its_own_session_holding_the_pipe_does_not_hang_the_step(
    tmp_path: Path,
) -> None:
    argv = py(
        f"""
        import subprocess
        child = subprocess.Popen(
            [{PY!r}, "-c", "import time; time.sleep(30)"], start_new_session=True
        )
        print(child.pid, flush=True)
        """
    )
    started = time.monotonic()
    done = run(tmp_path, argv, drain_grace_s=0.5)
    pid = int(done.output().split()[0])
    try:
        assert time.monotonic() - started < 5
        assert done.exit_code == 0
        assert "still held the output open" in done.output()
        assert not gone(pid)  # not in the group: documented as not reached
    finally:
        os.kill(pid, signal.SIGKILL)


def test_launch_failures_are_127_with_a_message_in_the_log(tmp_path: Path) -> None:
    missing = run(tmp_path, ["obelize-bench-no-such-program", "x"])
    assert missing.exit_code == 127 and not missing.timed_out
    assert missing.launch_error is not None
    assert "obelize-bench-no-such-program" in missing.launch_error
    assert missing.launch_error in missing.output()

    script = tmp_path / "script.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o644)
    not_executable = run(tmp_path, [str(script)])
    assert not_executable.exit_code == 127
    assert "Permission denied" in (not_executable.launch_error or "")

    absent = tmp_path / "absent"
    no_cwd = ProcessExecutor().run(py("pass"), cwd=absent, env=env(), timeout=10, log=tmp_path / "l.log")
    assert no_cwd.exit_code == 127
    assert str(absent) in (no_cwd.launch_error or "") and "does not exist" in no_cwd.output()

    empty = run(tmp_path, [])
    assert empty.exit_code == 127 and empty.launch_error == "cannot run an empty command"


def test_stdin_is_dev_null_and_the_step_has_a_session_of_its_own(tmp_path: Path) -> None:
    argv = py(
        """
        import json, os, sys
        stdin, null = os.fstat(0), os.stat(os.devnull)
        print(json.dumps({
            "read": sys.stdin.read(),
            "devnull": (stdin.st_rdev, stdin.st_ino) == (null.st_rdev, null.st_ino),
            "own_session": os.getsid(0) == os.getpid(),
        }))
        """
    )
    done = run(tmp_path, argv, timeout=10)
    assert json.loads(done.output()) == {"read": "", "devnull": True, "own_session": True}


def test_credentials_never_reach_a_step(tmp_path: Path) -> None:
    source = {
        **os.environ,
        "GEMINI_API_KEY": "gemini-secret",
        "GITHUB_TOKEN": "github-secret",
        "AWS_SECRET_ACCESS_KEY": "aws-secret",
        "PYTEST_ADDOPTS": "-p no:xdist",
        "PYTEST_XDIST_WORKER": "gw0",
        "LANG": "C.UTF-8",
    }
    home = tmp_path / "home"
    home.mkdir()
    step_env = step_environment(source, home=home, extra={"UV_PYTHON_DOWNLOADS": "never"})
    done = ProcessExecutor().run(
        py("import json, os; print(json.dumps(dict(os.environ)))"),
        cwd=tmp_path,
        env=step_env,
        timeout=10,
        log=tmp_path / "env.log",
    )
    seen = json.loads(done.output().splitlines()[-1])
    for name in ("GEMINI_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "PYTEST_ADDOPTS"):
        assert name not in seen
    assert not [name for name in seen if name.startswith(("AWS_", "PYTEST_"))]
    assert "secret" not in done.log.read_text()
    assert seen["PATH"] == source["PATH"]
    assert seen["HOME"] == str(home)
    assert seen["UV_PYTHON_DOWNLOADS"] == "never"
    assert seen["LANG"] == "C.UTF-8"


def test_step_environment_is_the_allow_list_plus_home_plus_extra(tmp_path: Path) -> None:
    source = {name: f"v-{name}" for name in ALLOWED_ENVIRONMENT[:3]}
    source.update({"HOME": "/root", "GITHUB_TOKEN": "t", "VIRTUAL_ENV": "/elsewhere"})
    got = step_environment(source, home=tmp_path, extra={"VIRTUAL_ENV": "/case/.venv"})
    assert got == {
        **{name: f"v-{name}" for name in ALLOWED_ENVIRONMENT[:3]},
        "HOME": str(tmp_path),
        "VIRTUAL_ENV": "/case/.venv",
    }


class Recorder:
    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def run(self, argv, *, cwd, env, timeout, log, step=""):  # type: ignore[no-untyped-def]
        self.calls.append(list(argv))
        log.write_text("")
        return Completed(0, 0.0, False, None, False, log, 0)


def test_offline_executor_refuses_every_program_but_the_interpreter(tmp_path: Path) -> None:
    inner = Recorder()
    offline = OfflineExecutor(inner)
    for argv, program in (
        (["git", "fetch"], "git"),
        (["python", "-c", "pass"], "python"),
        ([], "(nothing)"),
    ):
        with pytest.raises(ProgramRefused) as refused:
            offline.run(argv, cwd=tmp_path, env={}, timeout=1, log=tmp_path / "x.log")
        assert refused.value.program == program
        assert str(refused.value) == (
            "--fixtures-only runs no program but the running interpreter; refused: " + program
        )
    assert inner.calls == []
    offline.run([sys.executable, "-c", "pass"], cwd=tmp_path, env={}, timeout=1, log=tmp_path / "y.log")
    assert inner.calls == [[sys.executable, "-c", "pass"]]


def test_offline_executor_runs_the_interpreter_for_real(tmp_path: Path) -> None:
    done = OfflineExecutor(ProcessExecutor()).run(
        py("print('offline ok')"), cwd=tmp_path, env=env(), timeout=10, log=tmp_path / "o.log"
    )
    assert done.exit_code == 0 and done.output() == "offline ok\n"


# -- the harness's own short commands ------------------------------------------------------


def test_run_program_answers_in_memory_and_leaves_no_scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    answer = run_program(
        py("import os, sys; print(os.getcwd(), flush=True); print('err', file=sys.stderr); sys.exit(3)"),
        env=env(),
        timeout=30,
    )
    assert (answer.exit_code, answer.timed_out, answer.launch_error, answer.ok) == (3, False, None, False)
    lines = answer.output.splitlines()
    assert Path(lines[0]).parent == tmp_path and lines[0].rsplit("/", 1)[-1].startswith("obelize-bench-run-")
    assert lines[1] == "err"  # stderr is merged, as in a step's log
    assert list(tmp_path.iterdir()) == []  # the scratch folder and its log are gone


def test_run_program_bounds_the_answer_and_kills_on_timeout(tmp_path: Path) -> None:
    big = run_program(py("print('x' * 100000)"), env=env(), timeout=30, limit=1000)
    assert big.ok and len(big.output) == 1000
    slow = run_program(
        py("import time; time.sleep(30)"), env=env(), timeout=0.5, cwd=tmp_path, log=tmp_path / "slow.log"
    )
    assert (slow.timed_out, slow.exit_code, slow.ok) == (True, 124, False)
    assert "timed out after 0.5s" in (tmp_path / "slow.log").read_text()
    missing = run_program([str(tmp_path / "no-such-program")], env=env(), timeout=5)
    assert missing.exit_code == 127 and missing.launch_error is not None and not missing.ok
