"""A round's charts, from its figures (pure): the headline beside the ceiling, and the tiers stacked.

Both are built from ``RoundFigures``, the numbers the round's tables print, so a figure and its
table cannot disagree. The headline is the protocol's: graded cases with a record, model arm
excluded, per split with its n and its 95% Wilson interval; the ceiling beside it is the share of
the split's graded cases whose key lets them reach ``verified_success`` (read from the keys
before the round, so it has no interval).
"""

from __future__ import annotations

from pytest_obelize_bench._util.charts import Chart, RateChart, RatePoint, StackedChart
from pytest_obelize_bench._util.stats import rate_of
from pytest_obelize_bench.grading.record import TIERS
from pytest_obelize_bench.report.round.figures import RoundFigures

#: The splits a round's charts show, in this order; ``all`` is both sides together.
SPLITS = ("dev", "holdout", "all")


def headline_chart(figures: RoundFigures) -> RateChart:
    """``verified_success`` per split with its interval, and the keys' ceiling beside it."""
    points: list[RatePoint] = []
    for split in SPLITS:
        if split == "all":
            reachable, graded = figures.ceiling.reachable, figures.ceiling.graded
        else:
            reachable, graded = figures.ceiling.in_split(split)
        points.append(RatePoint(split, "verified_success", figures.headline_rate("cases", split)))
        points.append(RatePoint(split, "ceiling", rate_of(reachable, graded), interval=False))
    return RateChart(
        file_name=f"round-{figures.round}-headline.svg",
        title=f"Round {figures.round}: verified_success by split",
        caption=(
            "Graded cases with a record, model arm excluded, with 95% Wilson intervals; the ceiling is "
            "the share of the split's graded cases whose key can reach verified_success"
        ),
        points=tuple(points),
    )


def tiers_chart(figures: RoundFigures) -> StackedChart | None:
    """The tiers of the headline's cases per split, stacked; None for a round with no record."""
    if not figures.run:
        return None
    columns = {"dev": "dev", "holdout": "holdout", "all": "total"}
    layers = tuple((tier, tuple(figures.tiers[columns[split]].get(tier, 0) for split in SPLITS)) for tier in TIERS)
    return StackedChart(
        file_name=f"round-{figures.round}-tiers.svg",
        title=f"Round {figures.round}: outcome tiers by split",
        caption="Graded cases with a record, model arm excluded, counted by tier",
        groups=SPLITS,
        layers=layers,
    )


def round_charts(figures: RoundFigures) -> list[Chart]:
    """The round's charts, in the order its block links them."""
    tiers = tiers_chart(figures)
    return [headline_chart(figures), *([tiers] if tiers is not None else [])]


__all__ = ["SPLITS", "headline_chart", "round_charts", "tiers_chart"]
