"""Gate 1's chart (pure): precision and recall per labelled repository, pooled first, with intervals.

Built from the same matches the Gate 1 table prints. A repository without a usable scan of its
pinned commit has no mark (the table says "not scanned"); a precision over no finding has no
rate, never 100%.
"""

from __future__ import annotations

from collections.abc import Mapping

from pytest_obelize_bench._util.charts import RateChart, RatePoint
from pytest_obelize_bench._util.stats import Rate
from pytest_obelize_bench.gate1.matching import KeyMatch

FILE_NAME = "gate1-precision-recall.svg"
POOLED = "All labelled"


def gate1_chart(
    matches: Mapping[str, KeyMatch | None], precision: Rate, recall: Rate, measurement: str | None = None
) -> RateChart:
    """Pooled precision and recall, then each scanned labelled repository's, in the table's order; a Gate 1
    measured beside the sample's (``measurement``, its name) has a figure of its own."""
    points = [RatePoint(POOLED, "precision", precision), RatePoint(POOLED, "recall", recall)]
    for name, match in matches.items():
        if match is not None:
            points += [RatePoint(name, "precision", match.precision), RatePoint(name, "recall", match.recall)]
    return RateChart(
        file_name=FILE_NAME if measurement is None else f"gate1-{measurement}-precision-recall.svg",
        title="Gate 1: scan precision and recall" + ("" if measurement is None else f", {measurement}"),
        caption=(
            "Per labelled repository (95% Wilson intervals over its rows) and pooled (95% interval by repository), "
            "over the actionable kinds; "
            "precision over findings, recall over labelled rows"
        ),
        points=tuple(points),
    )


__all__ = ["FILE_NAME", "gate1_chart"]
