"""The next round session finishes a publication a killed process left half-done, and says so."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_obelize_bench._util.safe_io import KILL_AT_WRITE_ENV
from pytest_obelize_bench.casefile.cases import load_case_file
from pytest_obelize_bench.report.round.publish_round import publish_round
from tests.helpers import casefile
from tests.helpers.bench_cli import obelize_bench
from tests.helpers.crash import RUN_A, RUN_B, published_run, write_run


def test_a_round_session_recovers_a_half_published_round_before_anything_else(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    project = pytester.path
    data = casefile.standard()
    for row in [*data["cases"], *data["controls"]]:
        row["repo"] = (tmp_path / "nowhere" / row["full_name"]).as_uri()  # the session stops at its preflight
    cases = casefile.write(project / "cases" / "cases.yaml", data)
    write_run(project, RUN_A, facts_for="alpha__navamai", error_for=None)
    assert publish_round(project / "results", load_case_file(cases), 2, RUN_A).published
    write_run(project, RUN_B, facts_for="beta__tested", error_for="zeta__app")
    journal = project / "results" / "round-2" / "publication.pending"
    for k in range(1, 40):  # the first write after the journal's: killed with the journal in place
        done = subprocess.run(
            [sys.executable, "-m", "pytest_obelize_bench.cli", "publish", "--run", RUN_B],
            cwd=project,
            env={**os.environ, KILL_AT_WRITE_ENV: str(k)},
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == -9, done.stdout
        if journal.exists():
            break
    assert journal.exists() and obelize_bench("summarize", "--check", cwd=project)[0] == 1
    result = pytester.runpytest_subprocess(
        "--bench-round=2", "--bench-allow-dirty", "--bench-interpreter=minor", f"--bench-work={tmp_path / 'work'}"
    )
    assert result.ret == 4  # then its preflight stops it: the recovery came first
    result.stdout.fnmatch_lines([f"obelize-bench: recovered: round 2: finished publishing run {RUN_B}, *"])
    assert not journal.exists() and published_run(project) == RUN_B
    assert obelize_bench("summarize", "--check", cwd=project)[0] == 0
