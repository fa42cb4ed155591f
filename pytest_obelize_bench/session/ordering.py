"""The order a round's cases run in: longest first, by what they took in the round's latest run.

Why: under ``-n``, xdist hands items out in collection order, so a long case near the end of the
case file starts when the other workers are nearly done, and the round waits for it alone.
Running the longest cases first lets the short ones fill in around them.  A case the latest run
did not record (a new one, or every case of a first round) counts as the longest, since nothing
says otherwise, and keeps its place in the case file among the others like it; so does every case
when no run has records yet, which leaves the file's order as it was.

The controller reads the durations once and hands them to every worker (``ORDER_WORKERINPUT_KEY``),
because xdist requires each worker to collect the same items in the same order.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pytest_obelize_bench.records.runs import list_runs, read_run_records


def case_seconds(results: Path, round_number: int, case_ids: Iterable[str]) -> dict[str, float]:
    """Each of these cases' seconds of steps in the newest run of the round that recorded any of
    them; empty when none did.  A record that cannot be read is left out, as if it were not there."""
    wanted = sorted(set(case_ids))
    for folder, _, _ in reversed(list_runs(results, round_number)):
        found = read_run_records(folder, wanted).records
        if found:
            return {case: sum(step.duration_s for step in record.steps) for case, record in found.items()}
    return {}


def longest_first(case_ids: Sequence[str], seconds: Mapping[str, float]) -> list[str]:
    """``case_ids`` longest first; those without a duration first of all, in their given order."""
    return sorted(case_ids, key=lambda case: -seconds.get(case, math.inf))


__all__ = ["case_seconds", "longest_first"]
