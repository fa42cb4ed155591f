"""Under bwrap, only a case whose suite needs the network reaches the harness's loopback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import casefile, rounds
from tests.helpers.gitrepo import make_repo
from tests.helpers.rounds import local_key
from tests.helpers.sandbox import Listener, bwrap_probe

needs_bwrap = pytest.mark.usefixtures("bwrap")


PROBE_SUITE = """\
import socket, sys
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=5).close()
except OSError as error:
    print("could not connect:", error)
    sys.exit(1)
print("connected")
"""


def run_round(project: Path, work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            "--bench-round=2",
            "--bench-allow-dirty",
            f"--bench-work={work}",
            *args,
        ],
        cwd=project,
        env=rounds.inner_environment(),
        capture_output=True,
        text=True,
        timeout=1200,
        stdin=subprocess.DEVNULL,
        check=False,
    )


@pytest.mark.usefixtures("index_uv_cache")
@needs_bwrap
def test_only_a_case_that_needs_the_network_reaches_the_harness_loopback(tmp_path: Path) -> None:
    listener = Listener()
    cases = []
    for owner, network in (("closed", False), ("open", True)):
        origin = make_repo(
            tmp_path / "origins" / owner,
            {"app.py": "import google.generativeai as genai\n", "probe.py": PROBE_SUITE.format(port=listener.port)},
        )
        cases.append(
            casefile.case_row(
                owner,
                "net",
                repo=origin.url,
                sha=origin.head,
                python=local_key(),
                test_cmd="python probe.py",
                tests_require_network=network,
                has_test_files=True,
            )
        )
    project = tmp_path / "project"
    rounds.write_case_file(project / "cases" / "cases.yaml", cases)
    done = run_round(project, tmp_path / "work", "--bench-sandbox=bwrap")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    records = rounds.read_records(project / "results" / "round-2")
    closed, opened = records["closed__net"], records["open__net"]
    assert closed["error"] is None and opened["error"] is None, (closed["error"], opened["error"])
    assert closed["measurements"]["tests_baseline"]["status"] == "fail"
    assert closed["measurements"]["tests_after"]["status"] == "fail"
    assert opened["measurements"]["tests_baseline"]["status"] == "pass"
    assert opened["measurements"]["tests_after"]["status"] == "pass"
    assert listener.accepted == 2  # the open case's two suites, and nothing from the closed one
    assert closed["provenance"]["sandbox"] == f"bwrap {bwrap_probe().version} (suites without network)"
    assert opened["provenance"]["sandbox"] == f"bwrap {bwrap_probe().version} (suites with network)"
    log = (tmp_path / "work" / "round-2" / "closed__net.logs").glob("*-baseline.log")
    assert "could not connect" in next(iter(log)).read_text(encoding="utf-8")
