"""Rounds in different work roots that share a uv cache and a cutoff share its resolutions.

The marks of online installs live with the uv cache they describe, so a user whose work root is
gone (a memory work root after a reboot, a fresh ``--bench-work``) and who names the same
``--exclude-newer`` installs offline from the first case on (a round at another cutoff has another
key, ``tests/case/test_envreuse.py``). Real rounds (real git, real uv, installs from PyPI into the warm test cache),
reached through a cache path of this test's own, since the key names the cache's path.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from pytest_obelize_bench.case.envreuse import CACHE_MARKS_DIR
from tests.helpers import rounds
from tests.helpers.rounds import run_pytest

pytestmark = pytest.mark.slow

CASE = "m1__clean"


def _round(project: Path, work: Path, cache: Path, cutoff: str) -> dict[str, Any]:
    done = run_pytest(
        project,
        "--bench-round=2",
        "--bench-allow-dirty",
        "--bench-interpreter=minor",
        "--bench-sandbox=none",
        f"--exclude-newer={cutoff}",
        f"--bench-work={work}",
        f"--bench-results={work.parent / ('results-' + work.name)}",
        "-q",
        env={"UV_CACHE_DIR": str(cache)},
    )
    folder = work.parent / f"results-{work.name}" / "round-2"
    assert folder.is_dir(), done.stdout[-3000:] + done.stderr[-2000:]
    record = rounds.read_records(rounds.only_run(folder))[CASE]
    assert record["error"] is None, record["error"]
    return record


def _went_offline(record: dict[str, Any], name: str) -> bool:
    step = [s for s in record["steps"] if s["name"] == name][-1]
    return "--offline" in step["argv"] and step["exit_code"] == 0


def test_a_new_work_root_with_the_same_cache_and_cutoff_installs_offline(index_uv_cache: Path, tmp_path: Path) -> None:
    cache = tmp_path / "uv-cache"
    cache.symlink_to(index_uv_cache, target_is_directory=True)  # the warm cache under a path of this test's
    project = tmp_path / "project"
    rounds.write_case_file(project / "cases" / "cases.yaml", [rounds.case_row_from_fixture("clean", "m1", tmp_path)])
    cutoff = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

    first = _round(project, tmp_path / "work-1", cache, cutoff)
    assert not any(_went_offline(first, name) for name in ("install", "install-from", "install-to"))
    # The marks went into the cache, never the work root. (Other tests write marks into the same
    # physical folder at the same time, so they are not counted: the keys name this test's own cache
    # path, so the second round below can only go offline on the first one's marks.)
    assert (cache / CACHE_MARKS_DIR).is_dir() and not (tmp_path / "work-1" / "env-marks").exists()

    second = _round(project, tmp_path / "work-2", cache, cutoff)
    assert all(_went_offline(second, name) for name in ("install", "install-from", "install-to"))
    assert second["provenance"]["packages_sha256"] == first["provenance"]["packages_sha256"]
