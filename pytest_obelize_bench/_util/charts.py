"""What a figure of the results document shows, as plain data: the numbers, never the drawing.

Each block of the document (a round, Gate 1, a promotion decision) builds its charts from the
figures it already computed, so a figure cannot disagree with its table; ``report/chart_files.py``
draws them. Two shapes cover every figure: rates with their 95% Wilson intervals, grouped and in
series (the headline beside its ceiling, precision beside recall, a case's incumbent beside its
candidate), and counts stacked by layer (the tiers). Each carries its alt text, which states
every number it draws, so a reader who cannot see the figure loses nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_obelize_bench._util.stats import Rate, format_percent

#: Where the figures live, relative to the results document that links them.
FIGURES_FOLDER = "figures"


def rate_text(rate: Rate, *, interval: bool = True) -> str:
    """``3 of 13, 23.1% (95% CI 8.2% to 50.3%)``; ``n = 0, no rate`` when there is nothing to rate."""
    if rate.rate is None or rate.low is None or rate.high is None:
        return f"n = {rate.n}, no rate"
    text = f"{rate.k} of {rate.n}, {format_percent(rate.rate)}"
    if interval:
        text += f" (95% CI {format_percent(rate.low)} to {format_percent(rate.high)})"
    return text


@dataclass(frozen=True)
class RatePoint:
    """One rate of a chart: its group (a split, a repository, a case) and its series."""

    group: str
    series: str
    rate: Rate
    #: False for a figure that is not a sample estimate (the ceiling, read from the keys): no interval drawn.
    interval: bool = True


@dataclass(frozen=True)
class RateChart:
    """Rates in groups, one row per group and one mark per series, each with its interval and n."""

    file_name: str
    title: str
    #: What the groups and series are, and over what the rates are computed (shown under the title).
    caption: str
    points: tuple[RatePoint, ...]

    @property
    def groups(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(point.group for point in self.points))

    @property
    def series(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(point.series for point in self.points))

    @property
    def alt(self) -> str:
        parts = [
            f"{point.group}, {point.series}: {rate_text(point.rate, interval=point.interval)}" for point in self.points
        ]
        return f"{self.title}. {self.caption}. " + "; ".join(parts) + "."


@dataclass(frozen=True)
class StackedChart:
    """Counts in groups, stacked by layer (a tier), with each group's total as its n."""

    file_name: str
    title: str
    caption: str
    groups: tuple[str, ...]
    #: Each layer and its count in every group, in the order of ``groups``.
    layers: tuple[tuple[str, tuple[int, ...]], ...]

    def total(self, index: int) -> int:
        return sum(counts[index] for _, counts in self.layers)

    @property
    def alt(self) -> str:
        parts = []
        for index, group in enumerate(self.groups):
            counts = ", ".join(f"{layer} {counts[index]}" for layer, counts in self.layers)
            parts.append(f"{group} (n = {self.total(index)}): {counts}")
        return f"{self.title}. {self.caption}. " + "; ".join(parts) + "."


@dataclass(frozen=True)
class PointSeries:
    """One series of a point chart (an arm): one (label, x, y) point per case."""

    name: str
    points: tuple[tuple[str, float, float], ...]


@dataclass(frozen=True)
class PointChart:
    """Each case a point, one series per arm: what it did (y) against what it cost (x, log scale)."""

    file_name: str
    title: str
    caption: str
    x_label: str
    y_label: str
    series: tuple[PointSeries, ...]

    @property
    def alt(self) -> str:
        parts = []
        for series in self.series:
            cases = ", ".join(f"{label} {y:g} at {x:g}" for label, x, y in series.points)
            parts.append(f"{series.name} (n = {len(series.points)} cases): {cases}")
        return f"{self.title}. {self.caption}. " + "; ".join(parts) + "."


Chart = RateChart | StackedChart | PointChart


def image_link(chart: Chart) -> str:
    """The markdown image of a chart, from the results document, with its alt text."""
    alt = chart.alt.replace("[", "(").replace("]", ")").replace("\n", " ")
    return f"![{alt}]({FIGURES_FOLDER}/{chart.file_name})"


def figures_section(charts: Sequence[Chart], heading: str = "#### Figures") -> list[str]:
    """The lines of a block's figures section (none without a chart): each figure, its alt text its numbers."""
    if not charts:
        return []
    lines = ["", heading, ""]
    for chart in charts:
        lines += [image_link(chart), ""]
    return lines[:-1]


__all__ = [
    "FIGURES_FOLDER",
    "Chart",
    "PointChart",
    "PointSeries",
    "RateChart",
    "RatePoint",
    "StackedChart",
    "figures_section",
    "image_link",
    "rate_text",
]
