"""A benchmark session keeps pytest's temp folders of other sessions as they were, and its own
(the one xdist makes the workers' inside) is gone when it ends."""

from __future__ import annotations

import getpass
import shutil
from pathlib import Path

import pytest

from tests.helpers.rounds import run_pytest

FIXTURES = Path(__file__).resolve().parents[2] / "cases" / "fixtures"


def test_a_round_under_xdist_leaves_earlier_sessions_temp_folders_alone(
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
