"""The results document's figures: every block's charts drawn as SVG into ``results/figures/``.

The numbers come from ``_util/charts.py``'s data, built by each block from the figures its tables
print; this module only draws them. The drawing is deterministic, so ``summarize --check``
re-renders every figure and fails on any byte that differs, as it does for the tables: a fixed
hash salt for the SVG ids, no date, a fixed creator, text kept as text (``svg.fonttype: none``)
and matplotlib's own bundled DejaVu Sans for every text measurement. matplotlib is pinned exactly
in ``pyproject.toml`` because another version may draw the same chart with other bytes.

Because the drawing is deterministic, a round's publication and ``summarize`` reuse an earlier
render of the same chart (``<work root>/figure-renders/<render_key>.svg``) instead of importing
matplotlib and laying out its text again, about a second a session: the key is the chart's data,
the code that draws it, and the versions of matplotlib, numpy and Python.  ``summarize --check``
never reuses one; it draws every figure afresh.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import sys
import textwrap
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pytest_obelize_bench._util import charts as _charts
from pytest_obelize_bench._util import stats as _stats
from pytest_obelize_bench._util.charts import FIGURES_FOLDER, Chart, PointChart, RateChart, StackedChart
from pytest_obelize_bench._util.digests import sha256_text
from pytest_obelize_bench._util.safe_io import UntrustedFileError, read_untrusted, write_atomically
from pytest_obelize_bench._util.stats import format_percent
from pytest_obelize_bench.isolation.workspace import default_work_root

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: Everything that could otherwise make two renders of one chart differ.
RC: dict[str, Any] = {
    "svg.hashsalt": "pytest-obelize-bench",
    "svg.fonttype": "none",
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
#: One colour per series or layer, in order; distinguishable in grey too, with a marker per series.
COLOURS = ("#1b6ca8", "#d1495b", "#edae49", "#66a182", "#8d6a9f", "#2e4057", "#999999")
MARKERS = ("o", "s", "D", "^", "v")
#: Tiers keep one colour each, worst (error) dark to best (verified_success) green.
TIER_COLOURS = {
    "error": "#2e4057",
    "wrong": "#d1495b",
    "unsupported": "#999999",
    "partial": "#edae49",
    "verified_success": "#66a182",
    "patched_unverified": "#1b6ca8",
}
MAX_FIGURE_BYTES = 2 * 1024 * 1024
#: Earlier renders, by ``render_key``, under the default work root.
RENDERS_DIR = "figure-renders"


@contextmanager
def _figure(width: float, height: float) -> Iterator[Figure]:
    # here, not at the top: matplotlib costs about a second to import, and only drawing needs it
    import matplotlib
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    # matplotlib's defaults, not the machine's matplotlibrc, then ours; restored on leaving.
    with matplotlib.rc_context():
        matplotlib.rcdefaults()
        matplotlib.rcParams.update(cast(Any, RC))
        figure = Figure(figsize=(width, height))
        FigureCanvasSVG(figure)
        yield figure


def _save(figure: Figure, chart: Chart) -> bytes:
    """The SVG, inside ``_figure``'s settings: no date, a fixed creator, the alt text as its description."""
    buffer = io.BytesIO()
    metadata = {"Date": None, "Creator": "pytest-obelize-bench", "Title": chart.title, "Description": chart.alt}
    figure.savefig(buffer, format="svg", metadata=metadata)
    return buffer.getvalue()


def _caption(figure: Figure, chart: Chart) -> None:
    """The title 0.1 inch under the top edge, whatever the height; the caption wrapped at the bottom."""
    figure.suptitle(
        chart.title, x=0.01, y=1 - 0.1 / figure.get_figheight(), ha="left", va="top", fontsize=11, fontweight="bold"
    )
    figure.text(0.01, 0.01, textwrap.fill(chart.caption + ".", 120), fontsize=7.5, va="bottom", color="#444444")


def _rate_label(point_rate: Any, interval: bool) -> str:
    if point_rate.rate is None:
        return f"n = {point_rate.n}: no rate"
    text = f"{point_rate.k} of {point_rate.n}: {format_percent(point_rate.rate)}"
    if interval and point_rate.low is not None and point_rate.high is not None:
        text += f" [{format_percent(point_rate.low)}, {format_percent(point_rate.high)}]"
    return text


def draw_rate_chart(chart: RateChart) -> bytes:
    """One row per group, one mark per series with its 95% interval, and each rate written as k of n."""
    groups, series = chart.groups, chart.series
    step = 1.0 / (len(series) + 1)
    height = 1.3 + 0.26 * len(groups) * len(series) + 0.1 * len(groups)
    # Inches: the group labels (as long as the longest), the plot, and the column of written rates.
    texts = [f"{point.series}: {_rate_label(point.rate, point.interval)}" for point in chart.points]
    labels, plot = 0.3 + 0.068 * max(len(group) for group in groups), 4.2
    written = 0.4 + 0.056 * max(len(text) for text in texts)
    width = labels + plot + written
    with _figure(width, height + 0.2) as figure:
        height += 0.2
        ax: Axes = figure.add_subplot()
        figure.subplots_adjust(
            left=labels / width, right=(labels + plot) / width, top=1 - 0.75 / height, bottom=0.85 / height
        )
        for index, point in enumerate(chart.points):
            row = groups.index(point.group)
            which = series.index(point.series)
            y = -(row + (which + 1) * step)
            colour, marker = COLOURS[which % len(COLOURS)], MARKERS[which % len(MARKERS)]
            rate = point.rate
            if rate.rate is not None:
                x = rate.rate * 100
                if point.interval and rate.low is not None and rate.high is not None:
                    ax.errorbar(
                        [x],
                        [y],
                        xerr=[[x - rate.low * 100], [rate.high * 100 - x]],
                        fmt=marker,
                        color=colour,
                        capsize=3,
                        markersize=5,
                        gid=f"point-{index}",
                    )
                else:
                    ax.plot([x], [y], marker=marker, color=colour, markerfacecolor="white", markersize=6)
            ax.text(106, y, texts[index], va="center", fontsize=7.5)
        ax.set_xlim(-3, 103)
        ax.set_xticks([0, 20, 40, 60, 80, 100])
        ax.set_ylim(-len(groups), 0)
        ax.set_xlabel("rate (%)")
        ax.set_yticks([-(row + 0.5) for row in range(len(groups))], labels=list(groups))
        for row in range(1, len(groups)):
            ax.axhline(-row, color="#dddddd", linewidth=0.6)
        ax.tick_params(axis="y", length=0)
        hollow = {name for name in series if not any(p.interval for p in chart.points if p.series == name)}
        handles = [
            ax.plot(
                [],
                [],
                MARKERS[i % len(MARKERS)],
                color=COLOURS[i % len(COLOURS)],
                markerfacecolor="white" if name in hollow else COLOURS[i % len(COLOURS)],
                label=name,
            )[0]
            for i, name in enumerate(series)
        ]
        ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=len(series), frameon=False)
        _caption(figure, chart)
        return _save(figure, chart)


def draw_stacked_chart(chart: StackedChart) -> bytes:
    """One bar per group with its layers stacked and counted, and the group's n above it."""
    with _figure(7.0, 4.2) as figure:
        ax: Axes = figure.add_subplot()
        figure.subplots_adjust(left=0.09, right=0.72, top=0.86, bottom=0.17)
        positions = list(range(len(chart.groups)))
        bottoms = [0] * len(chart.groups)
        for index, (layer, counts) in enumerate(chart.layers):
            colour = TIER_COLOURS.get(layer, COLOURS[index % len(COLOURS)])
            ax.bar(positions, counts, bottom=bottoms, color=colour, width=0.6, label=f"{layer}")
            for position, (count, bottom) in enumerate(zip(counts, bottoms, strict=True)):
                if count:
                    ax.text(position, bottom + count / 2, str(count), ha="center", va="center", color="white")
            bottoms = [b + c for b, c in zip(bottoms, counts, strict=True)]
        for position, total in enumerate(bottoms):
            ax.text(position, total, f"n = {total}", ha="center", va="bottom")
        ax.set_xticks(positions, labels=list(chart.groups))
        ax.set_ylabel("cases")
        ax.set_ylim(0, max([*bottoms, 1]) * 1.15)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, reverse=True)
        _caption(figure, chart)
        return _save(figure, chart)


def draw_point_chart(chart: PointChart) -> bytes:
    """Each case a point per series, x on a log scale; each series' totals in its legend entry."""
    with _figure(7.0, 4.4) as figure:
        ax: Axes = figure.add_subplot()
        figure.subplots_adjust(left=0.09, right=0.97, top=0.82, bottom=0.2)
        for index, series in enumerate(chart.series):
            xs = [x for _, x, _ in series.points]
            ys = [y for _, _, y in series.points]
            total = sum(ys)
            ax.scatter(
                xs,
                ys,
                color=COLOURS[index % len(COLOURS)],
                marker=MARKERS[index % len(MARKERS)],
                label=f"{series.name} (n = {len(series.points)} cases, {total:g} in all)",
                zorder=3,
            )
        ax.set_xscale("log")
        ax.set_xlabel(chart.x_label)
        ax.set_ylabel(chart.y_label)
        ax.grid(True, which="major", color="#dddddd", zorder=0)
        ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=len(chart.series), frameon=False)
        _caption(figure, chart)
        return _save(figure, chart)


def draw(chart: Chart) -> bytes:
    if isinstance(chart, RateChart):
        return draw_rate_chart(chart)
    if isinstance(chart, PointChart):
        return draw_point_chart(chart)
    return draw_stacked_chart(chart)


def _folder(results_dir: Path) -> Path:
    return Path(results_dir) / FIGURES_FOLDER


def render_key(chart: Chart) -> str:
    """Everything an SVG's bytes depend on: the chart's data (its ``repr``: frozen dataclasses of
    text, integers and floats) and the drawing's own digest (``_drawing_digest``)."""
    return sha256_text(f"{_drawing_digest()}\0{chart!r}")


@functools.cache
def _drawing_digest() -> str:
    """This module and the two it draws with, and the libraries' versions: read once a process."""
    digest = hashlib.sha256()
    for module in (sys.modules[__name__], _charts, _stats):
        digest.update(Path(str(module.__file__)).read_bytes())
    for distribution in ("matplotlib", "numpy"):
        with contextlib.suppress(PackageNotFoundError):
            digest.update(f"{distribution}=={version(distribution)}".encode())
    digest.update(sys.version.encode("utf-8"))
    return digest.hexdigest()


def default_renders() -> Path:
    return default_work_root() / RENDERS_DIR


def draw_reusing(chart: Chart, renders: Path | None) -> bytes:
    """``draw(chart)``, or the render of the same key kept in ``renders``; a render made here is kept
    there for the next session.  A folder that cannot be read or written only costs the reuse."""
    if renders is None:
        return draw(chart)
    kept = renders / f"{render_key(chart)}.svg"
    with contextlib.suppress(UntrustedFileError):
        return read_untrusted(kept, MAX_FIGURE_BYTES)
    drawn = draw(chart)
    with contextlib.suppress(OSError):
        kept.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(kept, drawn)
    return drawn


def write_figures(
    results_dir: Path, charts: Sequence[Chart], *, prune: bool, renders: Path | None = None
) -> list[Path]:
    """Draw every chart into ``results/figures/``, reusing the renders kept in ``renders`` (by default
    the work root's); with ``prune``, remove the SVGs no block links any more."""
    folder = _folder(results_dir)
    folder.mkdir(parents=True, exist_ok=True)
    kept = default_renders() if renders is None else renders
    written = []
    for chart in charts:
        path = folder / chart.file_name
        write_atomically(path, draw_reusing(chart, kept))
        written.append(path)
    if prune:
        wanted = {chart.file_name for chart in charts}
        for path in sorted(folder.glob("*.svg")):
            if path.name not in wanted:
                path.unlink()
    return written


def check_figures(results_dir: Path, charts: Sequence[Chart], *, renders: Path | None = None) -> str | None:
    """None when every figure on disk is byte for byte a fresh render and no other SVG is there.

    A render of the same key kept in ``renders`` (by default the work root's) stands for a fresh one,
    as it does when ``summarize`` writes: the key covers the chart's data and the drawing code, so
    only a figure whose data or drawing changed is drawn again (a check of the project's fourteen
    figures drew them all, 3.3 of its 5 seconds)."""
    folder = _folder(results_dir)
    kept = default_renders() if renders is None else renders
    for chart in charts:
        path = folder / chart.file_name
        try:
            on_disk = read_untrusted(path, MAX_FIGURE_BYTES)
        except UntrustedFileError as exc:
            return f"the figure {path} cannot be read: {exc}"
        if on_disk != draw_reusing(chart, kept):
            return f"the figure {path} differs from a fresh render"
    wanted = {chart.file_name for chart in charts}
    extra = sorted(path.name for path in folder.glob("*.svg") if path.name not in wanted) if folder.is_dir() else []
    if extra:
        return f"{folder} holds figures no block links: {', '.join(extra)}"
    return None


__all__ = [
    "RENDERS_DIR",
    "check_figures",
    "draw",
    "draw_rate_chart",
    "draw_reusing",
    "draw_stacked_chart",
    "render_key",
    "write_figures",
]
