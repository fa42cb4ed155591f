"""The sandbox: its pure parts (argv, policies, choice, label) and real bwrap runs of hostile code.

The hostile runs go through ``SandboxExecutor`` over the real ``ProcessExecutor`` and the real
bwrap; they are skipped where bwrap cannot create a sandbox (the plugin tests say what a round
does then).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from pytest_obelize_bench.isolation.elide import Elider
from pytest_obelize_bench.isolation.executor import (
    Completed,
    OfflineExecutor,
    ProcessExecutor,
    ProgramRefused,
    step_environment,
)
from pytest_obelize_bench.isolation.sandbox import (
    CACHE_WRITERS,
    INSTALL_STEPS,
    OUTSIDE_STEPS,
    SUITE_STEPS,
    CaseLayout,
    Policy,
    Probe,
    SandboxExecutor,
    SandboxUnavailable,
    Settings,
    bwrap_argv,
    case_layout,
    choose,
    harness_paths,
    interpreter_roots,
    policy_for,
    probe_bwrap,
    provenance_label,
)
from pytest_obelize_bench.isolation.steps import StepRunner
from tests.helpers.sandbox import bwrap_probe

#: Skips a test where bwrap cannot sandbox (probed once a session, when first asked: conftest.py).
needs_bwrap = pytest.mark.usefixtures("bwrap")


def flag_pairs(argv: list[str], flag: str) -> list[str]:
    return [argv[i + 1] for i, arg in enumerate(argv) if arg == flag]


# -- the argv --------------------------------------------------------------------------------


def test_mounts_come_in_the_order_that_keeps_hidden_folders_hidden(tmp_path: Path) -> None:
    hidden = tmp_path / "home"
    exposed = hidden / ".pyenv" / "versions" / "3.12.1"
    checkout = tmp_path / "work" / "round-2" / "case"
    for path in (exposed, checkout):
        path.mkdir(parents=True)
    policy = Policy(writable=(checkout,), read_only=(exposed,), hidden=(hidden, tmp_path / "work"), network=False)
    argv = bwrap_argv("/usr/bin/bwrap", policy, ["python", "-c", "pass"], cwd=checkout, env={"PATH": "/usr/bin"})
    assert argv[0] == "/usr/bin/bwrap"
    assert argv[-4:] == ["--", "python", "-c", "pass"]
    position = {
        key: argv.index(key)
        for key in ("--unshare-net", "--ro-bind", "--tmpfs", "--bind", "--remount-ro", "--clearenv")
    }
    assert argv[position["--ro-bind"] + 1 : position["--ro-bind"] + 3] == ["/", "/"]
    order = [
        argv.index("--ro-bind"),
        argv.index(str(hidden)) - 1,
        argv.index(str(exposed)) - 1,
        argv.index(str(checkout)) - 1,
        position["--remount-ro"],
        position["--clearenv"],
    ]
    assert order == sorted(order)
    assert flag_pairs(argv, "--tmpfs") == ["/tmp", str(hidden), str(tmp_path / "work")]
    assert flag_pairs(argv, "--remount-ro") == [str(hidden), str(tmp_path / "work")]
    assert flag_pairs(argv, "--chdir") == [str(checkout)]
    for flag in ("--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--new-session"):
        assert flag in argv
    assert flag_pairs(argv, "--cap-drop") == ["ALL"]


def test_masked_files_are_covered_unless_already_hidden(tmp_path: Path) -> None:
    files = {Path("/etc/shadow"), Path("/srv/hidden/inner")}
    dirs = {Path("/srv/hidden")}
    policy = Policy(
        hidden=(Path("/srv/hidden"),), masked=(Path("/etc/shadow"), Path("/srv/hidden/inner"), Path("/etc/none"))
    )
    argv = bwrap_argv(
        "bwrap", policy, ["true"], cwd=tmp_path, env={}, exists=lambda p: p in files | dirs, is_dir=lambda p: p in dirs
    )
    start = argv.index("/etc/shadow")
    assert argv[start - 2 : start + 1] == ["--ro-bind", os.devnull, "/etc/shadow"]
    assert "/srv/hidden/inner" not in argv and "/etc/none" not in argv


def test_the_network_is_kept_only_when_the_policy_says_so(tmp_path: Path) -> None:
    on = bwrap_argv("bwrap", Policy(network=True), ["true"], cwd=tmp_path, env={})
    off = bwrap_argv("bwrap", Policy(network=False), ["true"], cwd=tmp_path, env={})
    assert "--unshare-net" not in on and "--unshare-net" in off


def test_the_environment_is_cleared_then_set_name_by_name(tmp_path: Path) -> None:
    argv = bwrap_argv("bwrap", Policy(), ["true"], cwd=tmp_path, env={"PATH": "/bin", "HOME": "/h"})
    start = argv.index("--clearenv")
    assert argv[start + 1 : start + 7] == ["--setenv", "HOME", "/h", "--setenv", "PATH", "/bin"]


def test_root_is_never_hidden_and_missing_paths_are_left_out(tmp_path: Path) -> None:
    policy = Policy(
        writable=(tmp_path / "absent",),
        read_only=(tmp_path / "gone",),
        hidden=(Path("/"), tmp_path / "nowhere"),
    )
    argv = bwrap_argv("bwrap", policy, ["true"], cwd=tmp_path, env={})
    assert flag_pairs(argv, "--tmpfs") == ["/tmp"]
    assert "--bind" not in argv and "--remount-ro" not in argv
    assert str(tmp_path / "gone") not in argv


def test_a_bind_that_would_uncover_a_hidden_folder_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "inner").mkdir(parents=True)
    policy = Policy(writable=(tmp_path,), read_only=(home,), hidden=(home / "inner",))
    argv = bwrap_argv("bwrap", policy, ["true"], cwd=tmp_path, env={})
    assert "--bind" not in argv
    assert str(home) not in flag_pairs(argv, "--ro-bind")


def test_exposures_outside_hidden_folders_or_inside_others_are_not_repeated(tmp_path: Path) -> None:
    hidden = tmp_path / "h"
    (hidden / "venv" / "bin").mkdir(parents=True)
    (hidden / "venv" / "bin" / "uv").write_text("", encoding="utf-8")
    policy = Policy(read_only=(Path("/usr"), hidden / "venv", hidden / "venv" / "bin" / "uv"), hidden=(hidden,))
    argv = bwrap_argv("bwrap", policy, ["true"], cwd=tmp_path, env={})
    assert flag_pairs(argv, "--ro-bind") == ["/", str(hidden / "venv")]


# -- policies per step -----------------------------------------------------------------------


def layout(tmp_path: Path, **overrides: object) -> CaseLayout:
    values: dict[str, object] = {
        "checkout": tmp_path / "case",
        "home": tmp_path / "home",
        "tmp": tmp_path / "tmp",
        "junit": tmp_path / "logs" / "junit",
        "caches": (tmp_path / "uv-cache",),
        "read_only": (tmp_path / "python",),
        "hidden": (tmp_path / "real-home",),
    }
    values.update(overrides)
    return CaseLayout(**values)  # type: ignore[arg-type]


def test_fetch_and_venv_run_outside(tmp_path: Path) -> None:
    assert {name for name in OUTSIDE_STEPS} == {"fetch", "venv"}
    for name in OUTSIDE_STEPS:
        assert policy_for(layout(tmp_path), name) is None


@pytest.mark.parametrize("name", sorted(INSTALL_STEPS))
def test_installs_keep_the_network_and_write_the_caches(tmp_path: Path, name: str) -> None:
    policy = policy_for(layout(tmp_path), name)
    assert policy is not None and policy.network is True
    assert tmp_path / "uv-cache" in policy.writable
    assert tmp_path / "logs" / "junit" not in policy.writable


@pytest.mark.parametrize("network", [False, True])
def test_suites_follow_their_case_and_alone_write_the_junit_folder(tmp_path: Path, network: bool) -> None:
    for name in SUITE_STEPS:
        policy = policy_for(layout(tmp_path, suites_network=network), name)
        assert policy is not None and policy.network is network
        assert tmp_path / "logs" / "junit" in policy.writable
        assert tmp_path / "uv-cache" in policy.read_only and tmp_path / "uv-cache" not in policy.writable


@pytest.mark.parametrize("name", ["fix", "compile", "resolve", "install-from-check", "freeze", "a-new-step", ""])
def test_every_other_step_runs_inside_without_network_or_junit(tmp_path: Path, name: str) -> None:
    policy = policy_for(layout(tmp_path, suites_network=True), name)
    assert policy is not None and policy.network is False
    assert tmp_path / "logs" / "junit" not in policy.writable
    assert (tmp_path / "uv-cache" in policy.writable) is (name in CACHE_WRITERS)
    assert set(policy.writable) >= {tmp_path / "case", tmp_path / "home", tmp_path / "tmp"}
    assert policy.hidden == (tmp_path / "real-home",)


def test_the_fixtures_pass_has_no_network_at_any_step(tmp_path: Path) -> None:
    for name in (*INSTALL_STEPS, *SUITE_STEPS, "fix", "compile"):
        policy = policy_for(layout(tmp_path, offline=True, suites_network=True), name)
        assert policy is not None and policy.network is False


def test_the_runner_tells_the_executor_which_step_it_runs(tmp_path: Path) -> None:
    seen: list[str] = []

    class Recorder:
        def run(self, argv: object, *, cwd: Path, env: object, timeout: float, log: Path, step: str = "") -> Completed:
            seen.append(step)
            return Completed(0, 0.0, False, None, False, log, 0)

    runner = StepRunner(Recorder(), logs=tmp_path, elider=Elider([]), env={}, cwd=tmp_path)
    for name in ("fetch", "install-from-check", "baseline", "after"):
        runner.run(1, name, ["x"], timeout=1)
    assert seen == ["fetch", "install-from-check", "baseline", "after"]


def test_a_step_with_no_name_gets_the_strictest_policy(tmp_path: Path) -> None:
    policy = policy_for(layout(tmp_path, offline=False, suites_network=True), "")
    assert policy is not None and policy.network is False
    assert not set(layout(tmp_path, offline=False, suites_network=True).caches) & set(policy.writable)


def test_a_planted_symlink_exposes_no_folder(tmp_path: Path) -> None:
    venv_bin = tmp_path / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").symlink_to(tmp_path / "secrets" / "id_rsa")
    assert interpreter_roots(venv_bin / "python") == []
    roots = interpreter_roots(Path(sys.executable))
    assert Path(os.path.realpath(sys.executable)).parent.parent in roots


def test_a_case_layout_hides_the_harness_and_keeps_its_interpreters(tmp_path: Path) -> None:
    paths = harness_paths(
        project_root=str(tmp_path / "project"),
        results=str(tmp_path / "project" / "results"),
        work_root=str(tmp_path / "work"),
        environ={"HOME": str(tmp_path / "real-home")},
    )
    made = case_layout(
        paths,
        checkout=tmp_path / "work" / "r" / "c",
        home=tmp_path / "work" / "home" / "r" / "c",
        tmp=tmp_path / "work" / "tmp" / "r" / "c",
        junit=tmp_path / "work" / "r" / "c.logs" / "junit",
        env={"PIP_CACHE_DIR": str(tmp_path / "pip")},
        uv_cache=str(tmp_path / "work" / "uv-cache"),
        suites_network=False,
        offline=False,
    )
    assert {tmp_path / "project", tmp_path / "work", tmp_path / "real-home", Path("/run")} <= set(made.hidden)
    assert set(made.caches) == {tmp_path / "pip", tmp_path / "work" / "uv-cache"}
    assert Path(os.path.realpath(sys.base_prefix)) in made.read_only
    assert Path(sys.prefix).resolve() in made.read_only


# -- the choice and the label ----------------------------------------------------------------


def failing() -> Probe:
    return Probe(
        "/usr/bin/bwrap", "0.8.0", "bwrap cannot create a sandbox here: No permissions to create new namespace"
    )


def working() -> Probe:
    return Probe("/usr/bin/bwrap", "0.8.0", None)


def test_none_never_probes() -> None:
    def boom() -> Probe:
        raise AssertionError("probed")

    assert choose("none", boom) == Settings(mode="none")


def test_bwrap_that_cannot_run_is_refused_with_its_cause() -> None:
    with pytest.raises(SandboxUnavailable, match="No permissions to create new namespace"):
        choose("bwrap", failing)
    assert choose("bwrap", working).enabled


def test_auto_falls_back_with_a_warning() -> None:
    fallback = choose("auto", failing)
    assert not fallback.enabled and fallback.warning is not None
    assert "no sandbox" in fallback.warning and "No permissions" in fallback.warning
    chosen = choose("auto", working)
    assert chosen.enabled and chosen.warning is None and chosen.version == "0.8.0"


def test_settings_survive_the_trip_to_a_worker() -> None:
    settings = choose("auto", working)
    assert Settings.model_validate_json(settings.model_dump_json()) == settings
    assert Settings.model_validate({}) == Settings(mode="none")
    with pytest.raises(ValueError, match="mode"):
        Settings.model_validate({"mode": "docker"})


def test_the_provenance_label_names_version_and_network() -> None:
    on = choose("bwrap", working)
    assert provenance_label(on, suites_network=False, offline=False) == "bwrap 0.8.0 (suites without network)"
    assert provenance_label(on, suites_network=True, offline=False) == "bwrap 0.8.0 (suites with network)"
    assert provenance_label(on, suites_network=True, offline=True) == "bwrap 0.8.0 (no network at any step)"
    assert provenance_label(Settings(mode="none"), suites_network=True, offline=False) == "none"


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


# -- real bwrap, hostile code ----------------------------------------------------------------

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


class Listener:
    """A TCP listener on the harness's loopback that counts connections."""

    def __init__(self) -> None:
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen()
        self.port = self.socket.getsockname()[1]
        self.accepted = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.accepted += 1
            connection.close()

    def close(self) -> None:
        self.socket.close()


CONNECT = """
import socket, sys
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
except OSError as error:
    print("refused:", error)
    sys.exit(1)
print("connected")
"""


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
