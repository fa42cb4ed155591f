"""The lines of a bisection by release: where a case's or a repository's result first changed, and after.

``obelize-bench history --round N --find CASE`` and ``history --frame PACK --find REPOSITORY`` answer
the same question over different histories, so they say it the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["ReleaseChange", "change_lines"]


@dataclass(frozen=True)
class ReleaseChange:
    """One change between consecutive releases: each side's label, where it was measured, its result."""

    before: str
    before_at: str
    was: str
    after: str
    after_at: str
    now: str


def change_lines(subject: str, changes: Sequence[ReleaseChange]) -> list[str]:
    """``S: first changed at obelize 0.6.0 (WHERE): was -> now; the release before: ...``, then each later one."""
    return [
        f"{subject}: {'first changed' if index == 0 else 'changed again'} at obelize {c.after} ({c.after_at}): "
        f"{c.was} -> {c.now}; the release before: obelize {c.before} ({c.before_at})"
        for index, c in enumerate(changes)
    ]
