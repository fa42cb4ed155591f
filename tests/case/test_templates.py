"""Template environments on disk: published whole once, found by key, and viewed without leaks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_obelize_bench.case.interpreter import Interpreter
from pytest_obelize_bench.case.templates import TEMPLATES_DIR, Templates, copy_view, in_view, probed, remember
from pytest_obelize_bench.grading.record import read_round
from pytest_obelize_bench.isolation.elide import Elider
from pytest_obelize_bench.isolation.executor import ProcessExecutor, step_environment
from pytest_obelize_bench.isolation.steps import StepRunner

KEY = "a" * 64
OTHER = "b" * 64
HERE = Interpreter(
    requested="cpython-3.12.1-linux-x86_64-gnu",
    used="cpython-3.12.1-linux-x86_64-gnu",
    executable=Path(sys.executable),
    build="3.12.1",
    machine="x86_64",
)


def a_venv(path: Path) -> Path:
    """A venv as uv leaves it, in miniature: its python a link to the base, a package, a config."""
    site = path / "lib" / "python3.12" / "site-packages" / "demo"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text("VALUE = 1\n")
    (path / "bin").mkdir()
    (path / "bin" / "python").symlink_to(sys.executable)
    (path / "pyvenv.cfg").write_text("home = /usr/bin\nrelocatable = true\n")
    return path


def runner_for(root: Path, case: str) -> StepRunner:
    checkout = root / case / "checkout"
    logs = root / case / "logs"
    checkout.mkdir(parents=True)
    logs.mkdir(parents=True)
    env = step_environment(os.environ, home=root / case / "home")
    elider = Elider([("<case>", checkout), ("<work>", root)])
    return StepRunner(ProcessExecutor(), logs=logs, elider=elider, env=env, cwd=checkout)


def test_a_template_is_published_once_and_found_by_its_key(tmp_path: Path) -> None:
    templates = Templates(tmp_path / "work" / TEMPLATES_DIR)
    assert templates.find(KEY) is None
    built = a_venv(tmp_path / "case-1" / ".venv")
    assert templates.publish(KEY, built, HERE) is True
    found = templates.find(KEY)
    assert (
        found is not None and found.used == HERE.used and found.venv == tmp_path / "work" / TEMPLATES_DIR / KEY / "venv"
    )
    assert (found.venv / "bin" / "python").is_symlink()  # copied as a link, not followed
    # A second case of the key finds it made: nothing is written again.
    (built / "pyvenv.cfg").write_text("changed after publication\n")
    assert templates.publish(KEY, built, HERE) is False
    assert "relocatable" in (found.venv / "pyvenv.cfg").read_text()
    assert templates.find(OTHER) is None


def test_a_template_without_a_readable_manifest_is_not_a_template(tmp_path: Path) -> None:
    templates = Templates(tmp_path / TEMPLATES_DIR)
    assert templates.publish(KEY, a_venv(tmp_path / "v"), HERE)
    (templates.folder(KEY) / "template.json").write_text("{not json")
    assert templates.find(KEY) is None
    with pytest.raises(ValueError, match="not an environment key"):
        templates.folder("../escape")


def test_a_write_to_one_copy_reaches_no_other_case_nor_the_template(tmp_path: Path) -> None:
    templates = Templates(tmp_path / "work" / TEMPLATES_DIR)
    templates.publish(KEY, a_venv(tmp_path / "built" / ".venv"), HERE)
    template = templates.find(KEY)
    assert template is not None
    views = []
    for case in ("one", "two"):
        runner = runner_for(tmp_path / "cases", case)
        venv = runner.cwd / ".venv"
        copy_view(runner, template, venv)
        assert [step.name for step in runner.steps] == ["venv"] and runner.steps[0].exit_code == 0
        views.append(venv)
    one, two = views
    package = Path("lib") / "python3.12" / "site-packages" / "demo" / "__init__.py"
    # Case one writes its environment as a suite would: a new file, an existing one, an install.
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import pathlib, sys; v = pathlib.Path(sys.argv[1]); "
            "(v / 'new.txt').write_text('one'); "
            f"(v / {str(package)!r}).write_text('VALUE = 2\\n'); "
            "(v / 'lib/python3.12/site-packages/extra').mkdir()",
            str(one),
        ],
        check=True,
    )
    for other in (two, template.venv):
        assert not (other / "new.txt").exists()
        assert (other / package).read_text() == "VALUE = 1\n"
        assert not (other / "lib" / "python3.12" / "site-packages" / "extra").exists()
    assert (one / package).read_text() == "VALUE = 2\n"


def test_the_interpreter_is_resolved_once_per_request_and_seen_through_the_view(tmp_path: Path) -> None:
    request = ("cpython-3.12.1-linux-x86_64-gnu", "minor", (str(tmp_path),))
    assert probed(*request) is None
    remember(*request, HERE)
    assert probed(*request) == HERE
    assert probed(request[0], "exact", request[2]) is None
    seen = in_view(HERE, tmp_path / ".venv")
    assert seen.executable == tmp_path / ".venv" / "bin" / "python" and seen.used == HERE.used


def test_round_one_records_load_without_the_environment_fields() -> None:
    records = read_round(Path(__file__).resolve().parents[2] / "results" / "round-1")
    assert len(records) >= 20
    assert {(r.provenance.env_template, r.provenance.env_view) for r in records.values()} == {(None, None)}
