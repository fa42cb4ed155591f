"""A benchmark session keeps pytest's temp folders of other sessions as they were, and its own
(the one xdist makes the workers' inside) is gone when it ends."""

from __future__ import annotations

import getpass
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from pytest_obelize_bench.session.kernel import own_temp_folder
from tests.helpers.rounds import run_pytest

FIXTURES = Path(__file__).resolve().parents[2] / "cases" / "fixtures"


def test_a_benchmark_session_under_xdist_leaves_earlier_sessions_temp_folders_alone(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """By default xdist's controller takes a new numbered folder in pytest's temp root and, as the
    session ends, removes all but the newest three there: after a test suite, gigabytes (19 s)."""
    shutil.copytree(FIXTURES / "clean", pytester.path / "cases" / "fixtures" / "clean")
    root = tmp_path_factory.mktemp("temproot")
    earlier = root / f"pytest-of-{getpass.getuser()}"
    for number in range(1, 6):  # five earlier sessions' folders, none of them locked any more
        (earlier / f"pytest-{number}").mkdir(parents=True)
        (earlier / f"pytest-{number}" / "left.txt").write_text("kept", encoding="utf-8")
    scratch = tmp_path_factory.mktemp("scratch")
    work = f"--bench-work={tmp_path_factory.mktemp('work')}"
    # Not pytester's runpytest_subprocess: it names a --basetemp of its own, as a user seldom does.
    env = {"PYTEST_DEBUG_TEMPROOT": str(root), "TMPDIR": str(scratch)}
    done = run_pytest(pytester.path, "--fixtures-only", work, "-n", "1", env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert sorted(path.name for path in earlier.iterdir()) == [f"pytest-{n}" for n in range(1, 6)]
    assert not [path for path in scratch.iterdir() if path.name.startswith("obelize-bench-pytest-")]


def test_a_temp_folder_the_user_named_is_kept_and_nothing_is_made() -> None:
    cleanups: list[Any] = []
    config = SimpleNamespace(option=SimpleNamespace(basetemp="/elsewhere/mine"), add_cleanup=cleanups.append)
    own_temp_folder(cast(pytest.Config, config))
    assert config.option.basetemp == "/elsewhere/mine" and cleanups == []


def test_otherwise_a_new_folder_is_named_and_removed_at_the_end(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    cleanups: list[Any] = []
    config = SimpleNamespace(option=SimpleNamespace(basetemp=None), add_cleanup=cleanups.append)
    own_temp_folder(cast(pytest.Config, config))
    made = Path(config.option.basetemp)
    assert made.parent == tmp_path and made.is_dir() and made.name.startswith("obelize-bench-pytest-")
    (made / "popen-gw0").mkdir()  # what xdist puts inside
    for cleanup in cleanups:
        cleanup()
    assert not made.exists()
