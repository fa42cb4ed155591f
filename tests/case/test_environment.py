"""The case interpreter, its venv and pinned installs: real uv, real interpreters, a little PyPI."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench.case import environment
from pytest_obelize_bench.case.copy_layer import compiled_into
from pytest_obelize_bench.case.environment import (
    Interpreter,
    check_installed_version,
    compile_bytecode,
    compile_sources,
    create_venv,
    discovery_path,
    listable,
    packages_digest,
    parse_interpreter_key,
    pyenv_interpreter_dirs,
    run_install_commands,
)
from pytest_obelize_bench.isolation.machine import MachineNames
from pytest_obelize_bench.isolation.policy import uv_binary
from pytest_obelize_bench.isolation.public_text import DETAIL_CHARS, public_detail
from pytest_obelize_bench.isolation.steps import StepRunner
from tests.helpers.bytecode import up_to_date
from tests.helpers.environment_install import HARNESS, HARNESS_BIN, HARNESS_KEY, activate, make_runner, venv_of
from tests.helpers.wheels import write_wheel


def test_keys_are_parsed_and_malformed_ones_refused() -> None:
    key = parse_interpreter_key("cpython-3.12.9-macos-aarch64-none")
    assert (key.implementation, key.major, key.minor, key.version) == ("cpython", 3, 12, "3.12.9")
    assert (key.os, key.arch, key.libc, key.variant) == ("macos", "aarch64", "none", "")
    assert parse_interpreter_key("cpython-3.13.0+freethreaded-linux-x86_64-gnu").variant == "+freethreaded"
    assert parse_interpreter_key("cpython-3.14.0rc1-linux-aarch64-musl").version == "3.14.0rc1"
    for bad in (
        "3.10",
        "cpython-3.12",
        "cpython-3.12.1",
        "cpython-3.12-linux-x86_64-gnu",
        "python-3.12.1-linux-x86_64-gnu",
        "",
    ):
        with pytest.raises(ValueError, match="not a full uv interpreter key"):
            parse_interpreter_key(bad)


def test_the_harness_key_is_the_one_uv_reports(tmp_path: Path) -> None:
    listed = subprocess.run(
        [uv_binary(), "python", "list", "--only-installed", "--output-format", "json"],
        env={"PATH": str(HARNESS_BIN), "UV_PYTHON_DOWNLOADS": "never", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        check=True,
    )
    keys = {row["key"] for row in json.loads(listed.stdout) if Path(row["path"]).parent == HARNESS_BIN}
    assert keys == {HARNESS_KEY}


def test_the_resolve_program_runs_on_old_interpreters() -> None:
    old = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions" / "3.6.15" / "bin" / "python3.6"
    if not old.exists():
        pytest.skip("no Python 3.6 on this machine")
    done = subprocess.run(
        [str(old), "-I", "-c", environment.resolve_program()],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout)["key"].startswith("cpython-3.6.15-")


def test_pyenv_dirs_are_version_dirs_newest_first(tmp_path: Path) -> None:
    versions = tmp_path / "versions"
    for name in ("3.10.13", "3.12.1", "3.12.10", "3.13.0t", "pypy3.10-7.3.12", "no-python-here"):
        bin_dir = versions / name / "bin"
        bin_dir.mkdir(parents=True)
        if name != "no-python-here":
            (bin_dir / "python3").touch()
    (versions / "3.9.0").symlink_to(versions / "3.12.1")  # an alias, as pyenv-virtualenv makes
    assert pyenv_interpreter_dirs({"PYENV_ROOT": str(tmp_path)}) == [
        versions / "3.13.0t" / "bin",
        versions / "3.12.10" / "bin",
        versions / "3.12.1" / "bin",
        versions / "3.10.13" / "bin",
    ]
    assert pyenv_interpreter_dirs({"PYENV_ROOT": str(tmp_path / "absent")}) == []


def test_discovery_path_puts_the_search_path_first_and_drops_shims() -> None:
    path = os.pathsep.join(["/root/.pyenv/shims", "/usr/bin", "/x/plugins/pyenv-virtualenv/shims", "/bin"])
    got = discovery_path(path, [Path("/opt/py/bin"), Path("/usr/bin")], discover_pyenv=False)
    assert got.split(os.pathsep) == ["/opt/py/bin", "/usr/bin", "/bin"]


def test_an_exact_key_this_machine_lacks_is_venv_failed_with_the_hint(runner: StepRunner) -> None:
    missing = "cpython-3.12.99-linux-x86_64-gnu"
    with pytest.raises(CaseError) as failed:
        create_venv(runner, key=missing, policy="exact", venv=venv_of(runner))
    assert failed.value.step == "venv" and failed.value.reason == "venv_failed"
    assert missing in failed.value.detail
    assert "--bench-interpreter=minor would use a local cpython 3.12 interpreter" in failed.value.detail
    # the hint reaches the record whole, even with the longest key a case file holds
    longest = "cpython-3.12.99-macos-aarch64-none-freethreaded-debug"
    published = public_detail(failed.value.detail.replace(missing, longest), None, [], MachineNames())
    assert published.endswith("interpreter instead") and len(published) <= DETAIL_CHARS
    assert [s.name for s in runner.steps] == ["venv"]
    assert "UV_PYTHON_DOWNLOADS" not in runner.env  # set for the venv step only


def test_a_malformed_key_is_venv_failed_before_any_step(runner: StepRunner) -> None:
    with pytest.raises(CaseError, match="not a full uv interpreter key") as failed:
        create_venv(runner, key="3.12", policy="exact", venv=venv_of(runner))
    assert failed.value.reason == "venv_failed" and runner.steps == []


def test_exact_policy_finds_the_key_on_the_search_path(runner: StepRunner) -> None:
    runner.env = {**runner.env, "PATH": "/usr/bin:/bin"}  # nothing of pyenv, no shims
    got = create_venv(
        runner,
        key=HARNESS_KEY,
        policy="exact",
        venv=venv_of(runner),
        search_path=[HARNESS_BIN],
        discover_pyenv=False,
    )
    assert got == Interpreter(
        requested=HARNESS_KEY,
        used=HARNESS_KEY,
        executable=venv_of(runner) / "bin" / "python",
        build=" ".join(sys.version.split()),
        machine=HARNESS["machine"],
    )
    assert [(s.number, s.name, s.exit_code) for s in runner.steps] == [
        (2, "venv", 0),
        (2, "resolve", 0),
    ]
    assert runner.steps[0].argv[-3:] == ("--python", HARNESS_KEY, "<case>/.venv")


def test_minor_policy_uses_a_local_interpreter_and_records_both_keys(runner: StepRunner) -> None:
    key = parse_interpreter_key(HARNESS_KEY)
    foreign = f"cpython-{key.major}.{key.minor}.99-macos-aarch64-none"
    runner.env = {**runner.env, "PATH": "/usr/bin:/bin"}
    got = create_venv(
        runner,
        key=foreign,
        policy="minor",
        venv=venv_of(runner),
        search_path=[HARNESS_BIN],
        discover_pyenv=False,
    )
    assert got.requested == foreign
    assert got.used == HARNESS_KEY
    request = runner.steps[0].argv[runner.steps[0].argv.index("--python") + 1]
    assert request == f"cpython-{key.major}.{key.minor}-{key.os}-{key.arch}-{key.libc}"


def test_pyenv_versions_are_discovered_without_a_search_path(runner: StepRunner) -> None:
    local = [d for d in pyenv_interpreter_dirs() if d.parent.name.startswith("3.12.")]
    if not local:
        pytest.skip("no pyenv 3.12 on this machine")
    runner.env = {**runner.env, "PATH": f"{Path.home() / '.pyenv' / 'shims'}:/usr/bin:/bin"}
    got = create_venv(runner, key="cpython-3.12.9-macos-aarch64-none", policy="minor", venv=venv_of(runner))
    assert re.fullmatch(r"cpython-3\.12\.\d+-\S+", got.used)
    assert Path(os.path.realpath(got.executable)).parent == local[0]


def test_minor_policy_without_a_local_minor_is_venv_failed(runner: StepRunner) -> None:
    with pytest.raises(CaseError, match=r"no local cpython 3\.99 interpreter for cpython-3\.99\.0-"):
        create_venv(runner, key="cpython-3.99.0-linux-x86_64-gnu", policy="minor", venv=venv_of(runner))


def test_a_leading_python_is_the_case_interpreter(
    venv_runner: tuple[StepRunner, Interpreter],
) -> None:
    runner, interpreter = venv_runner
    checkout = runner.cwd
    venv = venv_of(runner)
    runner.cwd = checkout.parent  # the pipeline's default step folder is the round folder
    run_install_commands(
        runner,
        ["python -c 'import pathlib, sys; pathlib.Path(\"where.txt\").write_text(sys.prefix)'"],
        interpreter=interpreter.executable,
        checkout=checkout,
    )
    # A reviewed command's relative paths name files of the checkout, so it runs there.
    assert (checkout / "where.txt").read_text() == str(venv)
    assert not (checkout.parent / "where.txt").exists()
    assert runner.steps[-1].number == 3 and runner.steps[-1].name == "install"
    assert runner.steps[-1].argv[0] == "<case>/.venv/bin/python"


def test_a_failing_or_unsplittable_install_command_is_install_failed(
    venv_runner: tuple[StepRunner, Interpreter],
) -> None:
    runner, interpreter = venv_runner
    with pytest.raises(CaseError) as failed:
        run_install_commands(
            runner, ["python -c 'raise SystemExit(4)'"], interpreter=interpreter.executable, checkout=runner.cwd
        )
    assert failed.value.reason == "install_failed"
    assert failed.value.detail.startswith("install exited 4; see <logs>/")
    for bad in ("python -c 'unbalanced", "   "):
        with pytest.raises(CaseError, match="install command 1") as failed:
            run_install_commands(runner, [bad], interpreter=interpreter.executable, checkout=runner.cwd)
        assert failed.value.reason == "install_failed"


def test_no_answer_about_a_version_is_a_mismatch(
    venv_runner: tuple[StepRunner, Interpreter],
) -> None:
    runner, interpreter = venv_runner
    with pytest.raises(CaseError) as failed:
        check_installed_version(
            runner,
            number=4,
            name="install-from-check",
            distribution="obelize-bench-not-installed",
            version="1.0",
            interpreter=interpreter.executable,
        )
    assert failed.value.as_dict() == {
        "step": "install-from-check",
        "reason": "version_mismatch",
        "detail": "obelize-bench-not-installed: the case interpreter could not say which version it has",
    }


def test_packages_digest_does_not_depend_on_where_the_checkout_is(tmp_path: Path, uv_cache: Path) -> None:
    digests = []
    for case in ("first_case", "second_case_elsewhere"):
        runner = make_runner(tmp_path / case / "work", case, uv_cache)
        interpreter = create_venv(
            runner, key=HARNESS_KEY, policy="exact", venv=venv_of(runner), search_path=[HARNESS_BIN]
        )
        activate(runner, interpreter)
        wheel = write_wheel(runner.cwd / "dist")
        run_install_commands(
            runner, [f"uv pip install --offline {wheel}"], interpreter=interpreter.executable, checkout=runner.cwd
        )
        assert runner.steps[-1].argv[:3] == (uv_binary(), "pip", "install")
        assert (
            check_installed_version(
                runner,
                number=4,
                name="demo-check",
                distribution="demo-pkg",
                version="1.0",
                interpreter=interpreter.executable,
            )
            == "1.0"
        )
        digest = packages_digest(runner, interpreter=interpreter.executable, checkout=runner.cwd)
        freeze = runner.steps[-1]
        assert (freeze.number, freeze.name, freeze.exit_code) == (7, "freeze", 0)
        log = sorted(runner.logs.glob("*-freeze.log"))[-1].read_text()
        assert str(runner.cwd) in log  # the listing names the checkout; the digest does not
        digests.append(digest)
    assert re.fullmatch(r"[0-9a-f]{64}", digests[0]) and digests[0] == digests[1]


def test_bytecode_compiles_every_module_of_the_venv_and_never_fails_the_case(
    venv_runner: tuple[StepRunner, Interpreter], tmp_path: Path
) -> None:
    """A linked module (as uv links an SDK's files into its cache) is compiled where the link sits;
    one that is not Python 3 is named in the log and left, and the step still exits 0."""
    runner, interpreter = venv_runner
    (site,) = venv_of(runner).glob("lib/python*/site-packages")
    outside = tmp_path / "cache" / "linked.py"
    outside.parent.mkdir()
    outside.write_text("VALUE = 1\n", encoding="utf-8")
    (site / "linked.py").symlink_to(outside)
    (site / "pkg" / "deep").mkdir(parents=True)
    (site / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (site / "pkg" / "deep" / "module.py").write_text("X = 2\n", encoding="utf-8")
    (site / "old_syntax.py").write_text("print 'python 2'\n", encoding="utf-8")

    compile_bytecode(runner, number=4, interpreter=interpreter.executable, timeout=120)

    step = runner.steps[-1]
    assert (step.name, step.number, step.exit_code, step.timed_out) == ("bytecode", 4, 0, False)
    assert up_to_date(site / "linked.py") and up_to_date(site / "pkg" / "deep" / "module.py")
    assert not (outside.parent / "__pycache__").exists()  # beside the link, not in the cache
    assert not up_to_date(site / "old_syntax.py")
    (log,) = runner.logs.glob("*-bytecode.log")
    assert "old_syntax.py" in log.read_text(encoding="utf-8")


def test_a_copy_layers_sources_compile_into_the_prefix_alone_and_no_pth_file_runs(
    venv_runner: tuple[StepRunner, Interpreter], tmp_path: Path
) -> None:
    """Step ``bytecode`` of a copy layer: only the listed sources, compiled into the prefix, never
    beside them; a link read through as ``import`` reads it (an SDK's files are links into the uv
    cache under the sandbox), a dangling one skipped; a file that is not Python 3 is named and the
    step exits 0; no ``.pth`` file of the install runs (``-S``) and nothing else is cached."""
    runner, interpreter = venv_runner
    venv = venv_of(runner)
    (site,) = venv.glob("lib/python*/site-packages")
    (site / "genai").mkdir()
    (site / "genai" / "__init__.py").write_text("VALUE = 1\n", encoding="utf-8")
    (site / "old_syntax.py").write_text("print 'python 2'\n", encoding="utf-8")
    secret = tmp_path / "secret.py"
    secret.write_text("TOKEN = 'outside the venv'\n", encoding="utf-8")
    (site / "linked.py").symlink_to(secret)
    (site / "unlisted.py").write_text("X = 2\n", encoding="utf-8")
    marker = tmp_path / "pth-ran"
    (site / "hook.pth").write_text(
        f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')\n", encoding="utf-8"
    )
    (site / "dangling.py").symlink_to(tmp_path / "gone.py")
    (site / "odd\u2028name.py").write_text("Y = 3\n", encoding="utf-8")  # one line of the listing still
    listed = ["genai/__init__.py", "old_syntax.py", "linked.py", "dangling.py", "odd\u2028name.py"]
    listing, prefix = tmp_path / "listing.txt", tmp_path / "prefix"
    prefix.mkdir()
    listing.write_text("".join(f"{site / name}\n" for name in listed), encoding="utf-8")

    compile_sources(runner, number=6, interpreter=interpreter.executable, listing=listing, prefix=prefix, timeout=120)

    step = runner.steps[-1]
    assert (step.name, step.number, step.exit_code, step.timed_out) == ("bytecode", 6, 0, False)
    assert not marker.exists()
    relative = os.path.relpath(site, venv)
    found = compiled_into(prefix, venv, [f"{relative}/{name}" for name in [*listed, "unlisted.py"]])
    tag = f"cpython-{sys.version_info[0]}{sys.version_info[1]}"
    assert sorted(found) == [
        f"{relative}/__pycache__/linked.{tag}.pyc",
        f"{relative}/__pycache__/odd\u2028name.{tag}.pyc",
        f"{relative}/genai/__pycache__/__init__.{tag}.pyc",
    ]
    assert sorted(prefix.rglob("*.pyc")) == sorted(found.values())  # nothing else cached there
    assert not list(site.rglob("__pycache__")) and not (tmp_path / "__pycache__").exists()  # nor beside them
    # placed beside the link, the bytecode is what import would load for it
    placed = site / "__pycache__" / f"linked.{tag}.pyc"
    placed.parent.mkdir()
    placed.write_bytes(found[f"{relative}/__pycache__/linked.{tag}.pyc"].read_bytes())
    assert up_to_date(site / "linked.py")
    (log,) = runner.logs.glob("*-bytecode.log")
    assert "not compiled:" in log.read_text(encoding="utf-8") and "old_syntax.py" in log.read_text(encoding="utf-8")


def test_a_source_name_that_cannot_be_one_line_of_the_listing_is_not_listed() -> None:
    assert listable("lib/python3.12/site-packages/genai/__init__.py")
    assert listable("lib/python3.12/site-packages/odd\u2028name.py")  # the program splits on newlines only
    assert not listable("lib/python3.12/site-packages/two\nlines.py")
    assert not listable(os.fsdecode(b"lib/python3.12/site-packages/latin\xe9.py"))  # not UTF-8: a surrogate
