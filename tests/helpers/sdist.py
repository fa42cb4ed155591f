"""obelize's source distribution from PyPI, downloaded once per machine for the tests that build from source.

Several tests make an obelize source checkout (``--obelize=<path>``) from the sdist of one pinned
release. A release's sdist never changes, so it is kept beside the shared uv cache, under a lock
and renamed into place whole, so xdist workers (or two sessions) never download it twice or read
half of it. Each test unpacks its own copy: a checkout is something a test may edit.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from pytest_obelize_bench._util.locks import exclusive_lock
from tests.helpers.rounds import shared_uv_cache


class SdistUnavailable(Exception):
    """pip could not download the sdist (no index here); the message is pip's last line."""


def sdist_folder() -> Path:
    return shared_uv_cache().parent / "obelize-bench-test-sdists"


def obelize_sdist(version: str) -> Path:
    """The path of ``obelize-<version>.tar.gz``, downloaded on first use on this machine."""
    folder = sdist_folder()
    target = folder / f"obelize-{version}.tar.gz"
    with exclusive_lock(folder / f"obelize-{version}.lock"):
        if target.is_file():
            return target
        with tempfile.TemporaryDirectory(dir=folder, prefix=".download-") as scratch:
            pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
            done = subprocess.run(
                [*pip, f"obelize=={version}", "-d", scratch],
                check=False,
                capture_output=True,
                text=True,
                timeout=300,
                stdin=subprocess.DEVNULL,
            )
            found = sorted(Path(scratch).glob(f"obelize-{version}.tar.gz"))
            if done.returncode != 0 or not found:
                raise SdistUnavailable(f"cannot fetch the obelize sdist: {done.stderr.strip().splitlines()[-1:]}")
            found[0].replace(target)
    return target
