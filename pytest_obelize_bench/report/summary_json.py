"""A round's figures as machine-readable data: ``results/round-N/summary.json``.

Pure: ``round_summary`` is a function of the round's figures (``round_figures``), the same
figures its block of the results document renders, so the two never disagree.

How a block adds its figures: append ``(key, part)`` to ``SUMMARY_PARTS``, where ``part`` maps
the ``RoundFigures`` to JSON-ready data, or ``OMIT`` to leave the key out (as the
repeatability part does for a round whose every case ran once). The error analysis, whose
figures come from files beside the case file, is added by ``round_files.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

from pytest_obelize_bench.report.round.case_entries import RoundData
from pytest_obelize_bench.report.round.figures import RateRow, RoundFigures, round_figures

__all__ = ["OMIT", "SUMMARY_PARTS", "SummaryPart", "figures_summary", "round_summary"]

#: What a part returns to leave its key out of summary.json.
OMIT = object()


def _rate_rows(rows: Sequence[RateRow]) -> list[dict[str, Any]]:
    return [{"scope": row.scope, "split": row.split, **row.rate.as_dict()} for row in rows]


def _repeatability(f: RoundFigures) -> object:
    return f.repeatability.as_dict() if f.repeatability.repeated else OMIT


SummaryPart = Callable[[RoundFigures], object]

#: Extra top-level keys of summary.json, each computed from the figures (result blocks add theirs).
SUMMARY_PARTS: list[tuple[str, SummaryPart]] = [("repeatability", _repeatability)]


def figures_summary(f: RoundFigures) -> dict[str, Any]:
    """The figures as JSON-ready data, every part of ``SUMMARY_PARTS`` included."""
    summary: dict[str, Any] = {
        "round": f.round,
        "generated_by": "obelize-bench summarize",
        "status": "run" if f.run else "not_run",
        "counts": asdict(f.counts),
        "tiers": {key: dict(counts) for key, counts in f.tiers.items()},
        "headline": _rate_rows(f.headline),
        "model_arm": _rate_rows(f.model_arm),
        "ceiling": {
            "reachable": f.ceiling.reachable,
            "graded": f.ceiling.graded,
            "tally": dict(f.ceiling.tally),
            "cases": [
                {"case": row.case, "split": row.split, "reachable": row.reachable, "cap": row.cap}
                for row in f.ceiling.cases
            ],
        },
        "controls": {
            "held": f.controls_held.as_dict(),
            "cases": [
                {
                    "case": row.case,
                    "shape": row.shape,
                    "detected": row.detected,
                    "false_positive_edit": row.false_positive_edit,
                    "tier": row.tier,
                    "held": row.held,
                }
                for row in f.control_rows
            ],
        },
        "errors": [
            {"case": row.case, "step": row.step, "reason": row.reason, "class": row.error_class, "detail": row.detail}
            for row in f.errors
        ],
        "errors_by_class": dict(f.errors_by_class),
        "provenance": None if f.provenance is None else f.provenance.as_dict(),
        "publication": None if f.publication is None else dict(f.publication),
    }
    for key, part in SUMMARY_PARTS:
        value = part(f)
        if value is not OMIT:
            summary[key] = value
    return summary


def round_summary(data: RoundData) -> dict[str, Any]:
    """The round's summary.json data (``results/round-N/summary.json``)."""
    return figures_summary(round_figures(data))
