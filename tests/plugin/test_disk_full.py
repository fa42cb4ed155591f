"""A full disk is an infrastructure error, not a crash: real rounds over a tiny tmpfs.

The test mounts a tmpfs of a few KiB or MiB (root only; CI runs as root, elsewhere these skip):
as the work root, every case ends as ``error`` with reason ``disk_full`` and the round finishes;
as the results folder, the session stops with one line and leaves nothing corrupt or temporary.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.helpers import rounds

pytestmark = [
    pytest.mark.usefixtures("index_uv_cache"),
    pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root (CI runs as root)"),
]


Mount = Callable[[Path, str], Path]


@pytest.fixture
def tiny_tmpfs(tmp_path: Path) -> Iterator[Mount]:
    mounted: list[Path] = []

    def mount(where: Path, size: str) -> Path:
        where.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], check=False)
        if done.returncode != 0:
            pytest.skip("this machine cannot mount a tmpfs")
        mounted.append(where)
        return where

    yield mount
    for where in reversed(mounted):
        subprocess.run(["umount", "-l", str(where)], check=False)


def _project(root: Path) -> Path:
    project = root / "project"
    cases = [rounds.case_row_from_fixture("clean", "ann", root), rounds.case_row_from_fixture("refused", "cat", root)]
    rounds.write_case_file(project / "cases" / "cases.yaml", cases)
    return project


COMMON = ["--bench-round=2", "--bench-allow-dirty", "--bench-interpreter=minor", "-p", "no:xdist", "-rT"]


def test_a_full_work_root_gives_disk_full_records_and_a_finished_round(tmp_path: Path, tiny_tmpfs: Mount) -> None:
    project = _project(tmp_path)
    work = tiny_tmpfs(tmp_path / "work", "3m")
    # The preflight's disk check would stop this round before it starts: skip it to fill the disk.
    # Its templates too: a case that viewed one built elsewhere would write too little to fill it.
    own = rounds.own_templates(work)
    done = rounds.run_pytest(project, *COMMON, f"--bench-work={work}", own, "--bench-no-preflight")
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    [run] = rounds.run_folders(project / "results" / "round-2")
    records = rounds.read_records(run)
    assert sorted(records) == ["ann__clean", "cat__refused"], out
    assert {case: (r["tier"], r["error"]["reason"]) for case, r in records.items()} == {
        "ann__clean": ("error", "disk_full"),
        "cat__refused": ("error", "disk_full"),
    }, out
    manifest = json.loads((run / "run.json").read_text(encoding="utf-8"))
    assert manifest["ended_at"] and not manifest["interrupted"]
    assert (
        "errored for infrastructure reasons" in out
        and not (project / "results" / "round-2" / "publication.json").exists()
    )


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob(".*") if p.is_file())


def test_a_results_folder_that_cannot_be_written_stops_the_session_in_one_line(
    tmp_path: Path,
    tiny_tmpfs: Mount,
) -> None:
    project = _project(tmp_path)
    results = tiny_tmpfs(project / "results", "8k")  # room for run.json, none for a record
    done = rounds.run_pytest(project, *COMMON, f"--bench-work={tmp_path / 'work'}")
    out = done.stdout + done.stderr
    assert done.returncode == 7, out
    lines = [line for line in out.splitlines() if line.startswith("results: cannot write")]
    assert len(lines) == 1 and "No space left on device" in lines[0] and "the session stopped" in lines[0], out
    assert "Traceback" not in out and "INTERNALERROR" not in out
    assert _leftovers(results) == []
    [run] = rounds.run_folders(results / "round-2")
    json.loads((run / "run.json").read_text(encoding="utf-8"))  # whole, not half a file
    assert not (results / "round-2" / "publication.json").exists()


def test_a_results_folder_full_from_the_start_runs_nothing(tmp_path: Path, tiny_tmpfs: Mount) -> None:
    project = _project(tmp_path)
    results = tiny_tmpfs(project / "results", "4k")
    (results / "filler").write_bytes(b"x" * 4096)
    done = rounds.run_pytest(project, *COMMON, f"--bench-work={tmp_path / 'work'}")
    out = done.stdout + done.stderr
    assert done.returncode == 7, out
    assert "results: cannot write" in out and "nothing ran" in out and "INTERNALERROR" not in out
    assert sorted(p.name for p in results.rglob("*") if p.is_file()) == ["filler"]
    assert not (tmp_path / "work" / "round-2").exists()
