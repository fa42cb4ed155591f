"""``obelize-bench`` called in this process, as a shell would call it: its exit status and what it printed."""

from __future__ import annotations

import io
import os
from pathlib import Path

from pytest_obelize_bench.cli import main as cli_main


def obelize_bench(*args: str | Path, cwd: Path | None = None) -> tuple[int, str]:
    """Run the command with ``args`` (from ``cwd``, where it reads its default paths, when given)."""
    before = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        out = io.StringIO()
        return cli_main([os.fspath(arg) for arg in args], out=out), out.getvalue()
    finally:
        os.chdir(before)
