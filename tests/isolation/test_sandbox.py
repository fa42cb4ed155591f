"""The sandbox: its pure parts (argv, policies, choice, label) and real bwrap runs of hostile code.

The hostile runs go through ``SandboxExecutor`` over the real ``ProcessExecutor`` and the real
bwrap; they are skipped where bwrap cannot create a sandbox (the plugin tests say what a round
does then).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_obelize_bench.isolation.bwrap import _under
from pytest_obelize_bench.isolation.elide import Elider
from pytest_obelize_bench.isolation.executor import (
    Completed,
)
from pytest_obelize_bench.isolation.sandbox import (
    CACHE_WRITERS,
    INSTALL_STEPS,
    OUTSIDE_STEPS,
    SUITE_STEPS,
    CaseLayout,
    Policy,
    Probe,
    SandboxUnavailable,
    Settings,
    bwrap_argv,
    case_layout,
    choose,
    harness_paths,
    interpreter_roots,
    policy_for,
    provenance_label,
)
from pytest_obelize_bench.isolation.steps import StepRunner


def flag_pairs(argv: list[str], flag: str) -> list[str]:
    return [argv[i + 1] for i, arg in enumerate(argv) if arg == flag]


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


def failing() -> Probe:
    return Probe(
        "/usr/bin/bwrap", "0.8.0", "bwrap cannot create a sandbox here: No permissions to create new namespace"
    )


def working() -> Probe:
    return Probe("/usr/bin/bwrap", "0.8.0", None)


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


def test_a_folder_whose_name_starts_like_a_hidden_one_is_not_inside_it(tmp_path: Path) -> None:
    hidden, beside = tmp_path / "venv2", tmp_path / "venv"
    for folder in (hidden, beside):
        folder.mkdir()
    policy = Policy(writable=(beside,), hidden=(hidden,))
    argv = bwrap_argv("bwrap", policy, ["true"], cwd=tmp_path, env={})
    # venv holds no part of the hidden venv2 beside it, so binding it uncovers nothing.
    assert flag_pairs(argv, "--bind") == [str(beside)]
    assert flag_pairs(argv, "--tmpfs") == ["/tmp", str(hidden)]


segments = st.lists(st.sampled_from(["a", "ab", "b", "a.b"]), max_size=4)


@given(path=segments, root=segments)
def test_containment_by_text_agrees_with_pathlib(path: list[str], root: list[str]) -> None:
    inner, outer = Path("/", *path), Path("/", *root)
    assert _under(inner, [outer]) == inner.is_relative_to(outer)


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
    assert paths.templates is None  # inside the work root, hidden with it
    assert set(made.caches) == {tmp_path / "pip", tmp_path / "work" / "uv-cache"}
    assert Path(os.path.realpath(sys.base_prefix)) in made.read_only
    assert Path(sys.prefix).resolve() in made.read_only


def test_templates_kept_outside_the_work_root_are_hidden_too(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "shared")
    paths = harness_paths(
        project_root=str(tmp_path / "project"),
        results=str(tmp_path / "project" / "results"),
        work_root=str(tmp_path / "work"),
        templates=tmp_path / "link",
        environ={},
    )
    made = case_layout(
        paths,
        checkout=tmp_path / "work" / "r" / "c",
        home=tmp_path / "work" / "home" / "r" / "c",
        tmp=tmp_path / "work" / "tmp" / "r" / "c",
        junit=tmp_path / "work" / "r" / "c.logs" / "junit",
        env={},
        uv_cache=None,
        suites_network=False,
        offline=False,
    )
    assert tmp_path / "shared" in made.hidden  # by its real path, which is what a case could reach


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
