"""Rounds on workers that share nothing with the controller: xdist ``--tx`` workers in bubblewrap.

Each worker's Python starts in a mount namespace standing in for another machine: ``/tmp`` is a
fresh tmpfs, so the controller's work root, its tool venv and the project's ``results/`` do not
exist there; the project (the clone every machine needs) and the origins stay visible. The
round must give the records of a local ``-n 2`` run, publish from the controller only, keep
the logs on the worker, and survive a worker that dies.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_obelize_bench.grading.record import comparable, parse_record
from pytest_obelize_bench.session.remote import WORK_ENV
from tests.helpers import rounds
from tests.helpers.project import PROJECT
from tests.helpers.sdist import obelize_sdist

pytestmark = [
    pytest.mark.usefixtures("index_uv_cache"),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
]

PROJECT_PYTHON = Path(sys.executable)
#: This clone (its .venv, and the package the venv installs in editable mode): a worker machine has
#: its own clone, so it stays visible even when the clone itself lives under /tmp.
TOOL = "obelize==0.8.0"


def write_wrapper(root: Path, project: Path, work: Path, *binds: str) -> Path:
    """The ``python=`` of a ``--tx popen`` line: the worker's Python on a 'machine' of its own."""
    machine = root / "machine"
    machine.mkdir()
    (project / "results").mkdir(parents=True, exist_ok=True)
    cache = rounds.shared_uv_cache()
    cache.mkdir(parents=True, exist_ok=True)
    argv = [
        "bwrap",
        *("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"),
        *("--tmpfs", "/tmp", "--ro-bind", str(PROJECT), str(PROJECT), "--tmpfs", str(work)),
        *("--bind", str(project), str(project), "--tmpfs", str(project / "results")),
        *("--ro-bind", str(root / "origins"), str(root / "origins")),
        *("--bind", str(cache), str(cache), "--bind", str(machine), "/tmp/machine"),
        *("--setenv", WORK_ENV, "/tmp/machine/work"),
        *binds,
        "--",
        str(PROJECT_PYTHON),
    ]
    wrapper = root / "worker-python"
    wrapper.write_text("#!/bin/sh\nexec " + " ".join(f"'{a}'" for a in argv) + ' "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    return wrapper


def run_pytest(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-rT", *args],
        cwd=project,
        env=rounds.inner_environment(),
        capture_output=True,
        text=True,
        timeout=1500,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def comparable_records(folder: Path) -> dict[str, Any]:
    return {name: comparable(parse_record(json.dumps(data))) for name, data in rounds.read_records(folder).items()}


@pytest.fixture(scope="module")
def rounds_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("remote")
    project = root / "project"
    cases = [
        rounds.case_row_from_fixture("clean", "ann", root),
        rounds.case_row_from_fixture("refused", "cat", root),
    ]
    rounds.write_case_file(project / "cases" / "cases.yaml", cases)
    work = root / "work"
    wrapper = write_wrapper(root, project, work)
    common = ("--bench-round=2", "--bench-allow-dirty", "--bench-interpreter=minor", f"--obelize={TOOL}")
    local = run_pytest(
        project, *common, f"--bench-work={root / 'local-work'}", f"--bench-results={root / 'local'}", "-n", "2"
    )
    remote = run_pytest(project, *common, f"--bench-work={work}", "--dist=load", "--tx", f"2*popen//python={wrapper}")
    return {"root": root, "project": project, "work": work, "local": local, "remote": remote}


def test_remote_workers_give_the_records_of_a_local_run(rounds_run: dict[str, Any]) -> None:
    local, remote = rounds_run["local"], rounds_run["remote"]
    assert local.returncode == 0, local.stdout[-3000:] + local.stderr[-2000:]
    assert remote.returncode == 0, remote.stdout[-3000:] + remote.stderr[-2000:]
    published = rounds_run["project"] / "results" / "round-2"
    want = comparable_records(rounds_run["root"] / "local" / "round-2")
    assert set(want) == {"ann__clean", "cat__refused"}
    assert comparable_records(published) == want
    for record in rounds.read_records(published).values():
        assert record["provenance"]["obelize_version"] == "0.8.0"
        assert record["provenance"]["worker"].startswith("gw")


def test_only_the_controller_publishes_and_the_logs_stay_on_the_worker(rounds_run: dict[str, Any]) -> None:
    root, project, work = rounds_run["root"], rounds_run["project"], rounds_run["work"]
    assert (project / "results" / "BENCHMARK_RESULTS.md").is_file()
    assert (project / "results" / "round-2" / "publication.json").is_file()
    machine = root / "machine"
    # The worker built its own tool venv and kept the logs; the controller's work root has none.
    # tool_env names the venv for its key: obelize-<version>-<sha of spec, cutoff, interpreter>.
    assert [p.name for p in (machine / "work" / "tools").glob("obelize-0.8.0-*") if p.is_dir()] != []
    assert (machine / "work" / "round-2" / "ann__clean.logs" / "record.json").is_file()
    assert not (work / "round-2" / "ann__clean.logs").exists()
    assert not list(machine.rglob("BENCHMARK_RESULTS.md")) and not list(machine.rglob("publication.json"))
    assert "logs on gw" in rounds_run["remote"].stdout


def add_fixture(project: Path, name: str, test_cmd: str | None = None) -> None:
    target = project / "cases" / "fixtures" / name
    shutil.copytree(rounds.FIXTURES / ("unverified" if test_cmd else name), target)
    if test_cmd is not None:
        data = yaml.safe_load((target / "case.yaml").read_text(encoding="utf-8"))
        data["id"], data["test_cmd"] = name, test_cmd
        (target / "case.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def test_the_fixtures_pass_on_remote_workers_and_a_lost_worker_errors_its_case(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (tmp_path / "origins").mkdir()
    for name in ("clean", "refused"):
        add_fixture(project, name)
    add_fixture(project, "killer", 'python -c "import os, signal; os.kill(os.getppid(), signal.SIGKILL)"')
    work = tmp_path / "work"
    wrapper = write_wrapper(tmp_path, project, work)
    # Unsandboxed: inside bwrap's PID namespace a suite cannot reach the worker at all.
    done = run_pytest(
        project,
        "--fixtures-only",
        f"--bench-work={work}",
        "--bench-sandbox=none",
        "--dist=load",
        "--tx",
        f"2*popen//python={wrapper}",
    )
    out = done.stdout
    assert "crashed while running" in out, out[-3000:]
    for line in ("error (1): killer", "verified_success (1): clean"):
        assert line in out, out[-3000:]
    # The shipped fixtures matched their expected.json on the remote workers.
    assert "refused" in out and "differs from" not in out and "is missing" not in out, out[-3000:]
    assert (tmp_path / "machine" / "work" / "fixtures" / "clean.logs").is_dir()
    assert not (work / "fixtures").exists()


def test_a_worker_whose_clone_has_another_case_file_refuses_its_cases(tmp_path: Path) -> None:
    project = tmp_path / "project"
    cases = rounds.write_case_file(
        project / "cases" / "cases.yaml", [rounds.case_row_from_fixture("clean", "ann", tmp_path)]
    )
    other = tmp_path / "other-cases.yaml"
    other.write_text(cases.read_text(encoding="utf-8").replace("run as a corpus case", "edited"), encoding="utf-8")
    work = tmp_path / "work"
    wrapper = write_wrapper(tmp_path, project, work, "--ro-bind", str(other), str(cases))
    done = run_pytest(
        project,
        "--bench-round=2",
        "--bench-allow-dirty",
        "--bench-interpreter=minor",
        f"--bench-work={work}",
        "--dist=load",
        "--tx",
        f"popen//python={wrapper}",
    )
    records = rounds.read_records(rounds.only_run(project / "results" / "round-2"))
    error = records["ann__clean"]["error"]
    assert error["step"] == "harness" and error["reason"] == "worker_refused", done.stdout[-3000:]
    assert error["detail"].startswith("gw0@") and "is not the controller's" in error["detail"]
    assert not (tmp_path / "machine" / "work" / "round-2" / "ann__clean").exists()  # nothing ran


def obelize_checkout(root: Path) -> Path:
    """obelize 0.8.0's source (its sdist from PyPI) committed to a local git repository."""
    shutil.unpack_archive(obelize_sdist("0.8.0"), root, filter="data")
    checkout = root / "obelize-0.8.0"
    for args in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "0.8.0"],
    ):
        subprocess.run(["git", "-C", str(checkout), *args], check=True, capture_output=True, timeout=60)
    return checkout


@pytest.mark.parametrize("visible", [True, False], ids=["same-path", "missing"])
def test_a_source_checkout_must_be_at_the_controllers_path_on_a_remote_worker(tmp_path: Path, visible: bool) -> None:
    project = tmp_path / "project"
    row = rounds.case_row_from_fixture("clean", "ann", tmp_path)
    rounds.write_case_file(project / "cases" / "cases.yaml", [row])
    checkout = obelize_checkout(tmp_path / "tool")
    work = tmp_path / "work"
    binds = ("--ro-bind", str(checkout), str(checkout)) if visible else ()
    wrapper = write_wrapper(tmp_path, project, work, *binds)
    done = run_pytest(
        project,
        "--bench-round=2",
        "--bench-allow-dirty",
        "--bench-interpreter=minor",
        f"--obelize={checkout}",
        f"--bench-work={work}",
        "--dist=load",
        "--tx",
        f"popen//python={wrapper}",
    )
    record = rounds.read_records(rounds.only_run(project / "results" / "round-2"))["ann__clean"]
    if visible:
        assert record["tier"] == "verified_success", done.stdout[-3000:]
        assert record["provenance"]["obelize_commit"] and record["provenance"]["obelize_tree_dirty"] is False
        assert list((tmp_path / "machine" / "work" / "tools").glob("checkout-*"))  # built on the worker
        manifest = json.loads((rounds.only_run(project / "results" / "round-2") / "run.json").read_text("utf-8"))
        assert manifest["tool"]["commit"] == record["provenance"]["obelize_commit"]
        assert manifest["tool"]["commit_date"].startswith("20")  # the history orders commits by it
    else:
        assert record["error"]["reason"] == "worker_refused", done.stdout[-3000:]
        # the record names no path of the machine (record.md: what is labelled)
        assert "the obelize checkout <path> is not on this machine" in record["error"]["detail"]
        assert str(checkout) not in record["error"]["detail"]
