"""What a published round measured, and each row its run named out of reach when it started, with why.

The first lines of a round's block when its run left rows out (``--bench-unreachable``): a reader
sees how many cases and controls the figures stand for before any figure. Pure: from the round's
figures and its publication note alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytest_obelize_bench._util.markdown import plain
from pytest_obelize_bench.report.round.figures import RoundFigures

__all__ = ["measured_scope"]


def measured_scope(f: RoundFigures) -> list[str]:
    """What the published run measured, and each row it named out of reach when it started, with why."""
    unreachable = dict((f.publication or {}).get("unreachable") or {})
    if not unreachable:
        return []
    rows = {entry.id: entry for entry in (*f.graded, *f.controls)}

    def measured(entries: Sequence[Any]) -> str:
        return f"{sum(e.id not in unreachable for e in entries)} of {len(entries)}"

    lines = [
        "",
        f"**Measured here: {measured(f.graded)} cases and {measured(f.controls)} negative controls.** "
        f"The published run named {len(unreachable)} rows out of reach when it started (`--bench-unreachable`); "
        "they were not run, and every figure below but the ceiling (from the keys alone) counts only the rows "
        "measured:",
        "",
    ]
    for case, reason in sorted(unreachable.items()):
        entry = rows.get(case)
        what = "row" if entry is None else "control" if entry.control else f"case, {entry.split}"
        lines.append(f"* `{case}` ({what}): {plain(reason)}")
    return lines
