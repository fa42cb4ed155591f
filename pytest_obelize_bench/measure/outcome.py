"""What a Gate 1 or dry-run item hands to its report: all text, so xdist can carry it.

It belongs to the measurements, not to the session: the items write it and the measurement
plugin's report hook reads it, so no measurement needs the session layer for its own outcome.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest


@dataclass(frozen=True)
class MeasureOutcome:
    """One finished Gate 1 or dry-run repository, as its item hands it to the report."""

    record_json: str
    #: the terminal's (category, letter, word) for the item.
    status: tuple[str, str, str]
    #: Gate 1's counts line for a labelled repository.
    counts: str | None = None


MEASURE_OUTCOME_KEY: pytest.StashKey[MeasureOutcome] = pytest.StashKey()


__all__ = ["MEASURE_OUTCOME_KEY", "MeasureOutcome"]
