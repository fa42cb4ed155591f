"""How many xdist workers ``-n auto`` starts for this suite.

With one worker a core, the rounds' waits on the package index (uv revalidates every index page
and wheel it has cached, about 4 s an online install here) left the processors idle for about a
third of the run; with two a core they stay busy (docs/explanation/performance.md).
"""

from __future__ import annotations

#: ``-n auto`` in this suite: workers per usable core.
WORKERS_PER_CORE = 2


def auto_workers(cores: int, override: str | None) -> int | None:
    """How many workers ``-n auto`` starts; ``None`` leaves it to xdist, which honours
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` (``override``) when it is set."""
    return None if override else max(1, cores) * WORKERS_PER_CORE
