"""The sandbox around real steps: what a step can read, write and reach under bwrap."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pytest_obelize_bench.isolation.executor import (
    Completed,
    OfflineExecutor,
    ProcessExecutor,
    ProgramRefused,
    step_environment,
)
from pytest_obelize_bench.isolation.sandbox import (
    CaseLayout,
    SandboxExecutor,
    interpreter_roots,
    probe_bwrap,
)
from tests.helpers.sandbox import Listener, bwrap_probe

needs_bwrap = pytest.mark.usefixtures("bwrap")


SECRET_NAME = "OBELIZE_BENCH_TEST_SECRET"


SECRET = "s3cret-that-must-not-leak-5f1c"


def sandbox(tmp_path: Path, **overrides: object) -> tuple[SandboxExecutor, CaseLayout, dict[str, str]]:
    work = tmp_path / "work"
    made = CaseLayout(
        **{  # type: ignore[arg-type]
            "checkout": work / "round-2" / "case",
            "home": work / "home" / "round-2" / "case",
            "tmp": work / "tmp" / "round-2" / "case",
            "junit": work / "round-2" / "case.logs" / "junit",
            "read_only": tuple(Path(p) for p in {sys.prefix, sys.base_prefix, os.path.realpath(sys.executable)})
            + tuple(interpreter_roots(Path(sys.executable))),
            "hidden": (work, tmp_path / "real-home", tmp_path / "results"),
            **overrides,
        }
    )
    for path in (made.checkout, made.home, made.tmp, made.junit, tmp_path / "real-home", tmp_path / "results"):
        path.mkdir(parents=True, exist_ok=True)
    env = step_environment(os.environ, home=made.home)
    return SandboxExecutor(ProcessExecutor(), program=bwrap_probe().program or "bwrap", layout=made), made, env


def run_python(executor: SandboxExecutor, made: CaseLayout, env: dict[str, str], name: str, code: str) -> Completed:
    log = made.checkout.parent / "case.logs" / f"05-{name}.log"
    return executor.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=made.checkout, env=env, timeout=60, log=log, step=name
    )


CONNECT = """
import socket, sys
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
except OSError as error:
    print("refused:", error)
    sys.exit(1)
print("connected")
"""


def test_the_probe_names_a_missing_program(tmp_path: Path) -> None:
    found = probe_bwrap(str(tmp_path / "no-bwrap"))
    assert not found.works and "could not run" in (found.problem or "")


def test_the_probe_runs_a_sandbox_not_just_the_version(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = --version ]; then echo "bubblewrap 0.8.0"; exit 0; fi\n'
        'echo "bwrap: setting up uid map: Permission denied" >&2; exit 1\n',
        encoding="utf-8",
    )
    fake.chmod(0o755)
    found = probe_bwrap(str(fake))
    assert found.version == "0.8.0" and not found.works
    assert "setting up uid map: Permission denied" in (found.problem or "")
    assert "user namespaces" in (found.problem or "")


@needs_bwrap
def test_the_probe_works_here() -> None:
    assert bwrap_probe().version and bwrap_probe().program


@needs_bwrap
def test_no_process_in_view_holds_the_harness_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SECRET_NAME, SECRET)
    executor, made, env = sandbox(tmp_path)
    done = run_python(
        executor,
        made,
        env,
        "baseline",
        f"""
        import os
        seen, read = [], 0
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    data = open(f"/proc/{{pid}}/environ", "rb").read()
                except OSError:
                    continue
                read += 1
                if {SECRET!r}.encode() in data:
                    seen.append(pid)
        print("read", read, "seen", seen)
        """,
    )
    assert done.exit_code == 0, done.output()
    assert "seen []" in done.output() and "read 0" not in done.output()


@needs_bwrap
def test_writes_land_only_in_the_case(tmp_path: Path) -> None:
    executor, made, env = sandbox(tmp_path)
    targets = {
        "real home": tmp_path / "real-home" / ".netrc",
        "results": tmp_path / "results" / "case.json",
        "harness venv": Path(sys.prefix) / "hostile.txt",
        "other case": made.checkout.parent / "other" / "x",
        "own home": made.home / "mine.txt",
        "own checkout": made.checkout / "mine.txt",
        "own tmp": Path("TMPDIR"),
    }
    code = f"""
    import json, os
    targets = {json.dumps({k: str(v) for k, v in targets.items()})}
    targets["own tmp"] = os.path.join(os.environ["TMPDIR"], "mine.txt")
    result = {{}}
    for name, path in targets.items():
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as handle:
                handle.write("x")
            result[name] = "written"
        except OSError as error:
            result[name] = error.errno
    print(json.dumps(result))
    """
    done = run_python(executor, made, env, "baseline", code)
    result = json.loads(done.output().strip().splitlines()[-1])
    for name in ("real home", "results", "harness venv", "other case"):
        assert result[name] != "written", name
    assert result["own home"] == result["own checkout"] == result["own tmp"] == "written"
    assert (made.home / "mine.txt").is_file() and (made.tmp / "mine.txt").is_file()
    assert not (tmp_path / "real-home" / ".netrc").exists() and not (Path(sys.prefix) / "hostile.txt").exists()


@needs_bwrap
def test_a_setsid_daemon_ends_with_its_step(tmp_path: Path) -> None:
    executor, made, env = sandbox(tmp_path)
    beat = made.home / "beat"
    code = f"""
    import subprocess, sys, time
    daemon = "import time\\nwhile True:\\n    open({str(beat)!r}, 'a').write('.')\\n    time.sleep(0.05)\\n"
    subprocess.Popen([sys.executable, "-c", daemon], start_new_session=True,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    """
    start = time.monotonic()
    done = run_python(executor, made, env, "baseline", code)
    assert done.exit_code == 0 and time.monotonic() - start < 10
    size = beat.stat().st_size
    assert size > 0
    time.sleep(0.5)
    assert beat.stat().st_size == size


@needs_bwrap
def test_a_suite_without_network_cannot_reach_the_harness_loopback(tmp_path: Path) -> None:
    listener = Listener()
    try:
        closed, made, env = sandbox(tmp_path / "closed", suites_network=False)
        assert run_python(closed, made, env, "baseline", CONNECT.format(port=listener.port)).exit_code == 1
        assert listener.accepted == 0
        opened, made, env = sandbox(tmp_path / "open", suites_network=True)
        done = run_python(opened, made, env, "baseline", CONNECT.format(port=listener.port))
        assert done.exit_code == 0, done.output()
        assert listener.accepted == 1
    finally:
        listener.close()


@needs_bwrap
def test_the_offline_executor_still_refuses_other_programs_under_the_sandbox(tmp_path: Path) -> None:
    executor, made, env = sandbox(tmp_path, offline=True)
    offline = OfflineExecutor(executor)
    with pytest.raises(ProgramRefused, match="git"):
        offline.run(["git", "status"], cwd=made.checkout, env=env, timeout=10, log=made.checkout / "x.log")
    done = offline.run(
        [sys.executable, "-c", "print('inside')"],
        cwd=made.checkout,
        env=env,
        timeout=30,
        log=made.checkout.parent / "case.logs" / "01-baseline.log",
    )
    assert done.exit_code == 0 and "inside" in done.output()
    assert done.log.read_text(encoding="utf-8").startswith(f"$ {bwrap_probe().program} ")


@needs_bwrap
def test_a_step_that_outlasts_its_timeout_takes_its_daemons_with_it(tmp_path: Path) -> None:
    executor, made, env = sandbox(tmp_path)
    beat = made.home / "beat"
    code = f"""
    import signal, subprocess, sys, time
    daemon = ("import signal, time\\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\\n"
              "while True:\\n    open({str(beat)!r}, 'a').write('.')\\n    time.sleep(0.05)\\n")
    subprocess.Popen([sys.executable, "-c", daemon], start_new_session=True,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(60)
    """
    log = made.checkout.parent / "case.logs" / "05-baseline.log"
    done = executor.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=made.checkout, env=env, timeout=1.5, log=log, step="baseline"
    )
    assert done.timed_out and done.exit_code == 124
    size = beat.stat().st_size
    time.sleep(0.5)
    assert beat.stat().st_size == size


def test_round_one_records_load_without_the_field() -> None:
    from pytest_obelize_bench.grading.record import read_round

    records = read_round(Path(__file__).resolve().parents[2] / "results" / "round-1")
    assert len(records) >= 20
    assert {record.provenance.sandbox for record in records.values()} == {None}


@needs_bwrap
def test_a_step_has_no_capabilities_and_cannot_read_the_shadow_file(tmp_path: Path) -> None:
    executor, made, env = sandbox(tmp_path, masked=(Path("/etc/shadow"),))
    code = """
    import subprocess
    status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
    print("CapEff", status["CapEff"].strip())
    try:
        print("shadow", repr(open("/etc/shadow").read()))
    except OSError as error:
        print("shadow unreadable", error.errno)
    """
    done = run_python(executor, made, env, "fix", code)
    assert done.exit_code == 0, done.output()
    assert "CapEff 0000000000000000" in done.output()
    assert "shadow unreadable" in done.output() or "shadow ''" in done.output()
