"""How many xdist workers ``-n auto`` starts for this suite.

With one worker a core, the rounds' waits on the package index (uv revalidates every index page
and wheel it has cached, about 4 s an online install here) left the processors idle for about a
third of the run; with two a core they stay busy (docs/explanation/performance.md).
"""

from __future__ import annotations

import os

#: ``-n auto`` in this suite: workers per usable core.
WORKERS_PER_CORE = 2


def usable_cores() -> int:
    """The cores this process may run on (all of them where the system cannot say)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def auto_workers(cores: int, override: str | None, *, benchmark: bool) -> int | None:
    """How many workers ``-n auto`` starts; ``None`` leaves it to xdist, which honours
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` (``override``) when it is set and counts one a core, as a
    benchmark session run from this checkout (which loads the suite's conftest) should."""
    if override or benchmark:
        return None
    return max(1, cores) * WORKERS_PER_CORE
