"""report/chart_files.py: the figures are drawn byte for byte the same every time, and --check holds them."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest

from pytest_obelize_bench._util.charts import PointChart, PointSeries, RateChart, RatePoint, StackedChart
from pytest_obelize_bench._util.stats import rate_of
from pytest_obelize_bench.report.chart_files import check_figures, draw, draw_reusing, render_key, write_figures
from pytest_obelize_bench.report.summarize import summarize
from tests.helpers.project import PROJECT

RATES = RateChart(
    "rates.svg",
    "Round 9: verified_success by split",
    "Graded cases",
    (
        RatePoint("dev", "verified_success", rate_of(3, 12)),
        RatePoint("dev", "ceiling", rate_of(5, 12), interval=False),
        RatePoint("holdout", "verified_success", rate_of(0, 0)),
        RatePoint("holdout", "ceiling", rate_of(0, 8), interval=False),
    ),
)
TIERS = StackedChart(
    "tiers.svg", "Round 9: tiers", "Graded cases", ("dev", "all"), (("wrong", (1, 2)), ("partial", (3, 0)))
)

POINTS = PointChart(
    "points.svg",
    "Round 9: rows against runtime",
    "Each point a case",
    "runtime (s, log)",
    "rows",
    (PointSeries("agent", (("a__b", 60.0, 9.0), ("c__d", 120.0, 3.0))), PointSeries("obelize", (("a__b", 1.5, 1.0),))),
)


@pytest.mark.parametrize("chart", [RATES, TIERS, POINTS], ids=["rates", "stacked", "points"])
def test_a_chart_draws_the_same_bytes_twice_with_no_date_and_its_text_as_text(
    chart: RateChart | StackedChart | PointChart,
) -> None:
    svg = draw(chart)
    assert svg == draw(chart)
    text = svg.decode("utf-8")
    assert "<dc:date>" not in text and "Matplotlib v" not in text
    assert f"<dc:description>{chart.alt}</dc:description>" in text  # the alt text travels with the file
    assert "<text " in text and '<use xlink:href="#DejaVu' not in text  # no glyph paths: text stays text
    assert chart.title in text


def test_the_rates_are_written_with_their_n_on_the_figure() -> None:
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", draw(RATES).decode("utf-8"))
    assert "verified_success: 3 of 12: 25.0% [8.9%, 53.2%]" in texts
    assert "ceiling: 5 of 12: 41.7%" in texts
    assert "verified_success: n = 0: no rate" in texts


def test_check_fails_on_one_changed_byte_a_missing_figure_and_a_figure_no_block_links(tmp_path: Path) -> None:
    write_figures(tmp_path, [RATES, TIERS], prune=True)
    assert check_figures(tmp_path, [RATES, TIERS]) is None
    path = tmp_path / "figures" / "rates.svg"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1
    path.write_bytes(bytes(data))
    assert check_figures(tmp_path, [RATES, TIERS]) == f"the figure {path} differs from a fresh render"
    path.unlink()
    assert "rates.svg cannot be read" in (check_figures(tmp_path, [RATES, TIERS]) or "")
    write_figures(tmp_path, [RATES, TIERS], prune=True)
    (tmp_path / "figures" / "old.svg").write_text("<svg/>")
    assert check_figures(tmp_path, [RATES, TIERS]) == f"{tmp_path / 'figures'} holds figures no block links: old.svg"
    write_figures(tmp_path, [RATES], prune=True)
    assert sorted(p.name for p in (tmp_path / "figures").iterdir()) == ["rates.svg"]


def test_summarize_check_fails_when_one_byte_of_a_committed_figure_changes(tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(PROJECT / "results", results)
    cases = PROJECT / "cases" / "cases.yaml"
    out = io.StringIO()
    assert summarize(results, cases, check=True, out=out) == 0, out.getvalue()
    figure = results / "figures" / "round-1-headline.svg"
    data = figure.read_bytes()
    figure.write_bytes(data.replace(b"0 of 13", b"1 of 13", 1))
    out = io.StringIO()
    assert summarize(results, cases, check=True, out=out) == 1
    assert f"the figure {figure} differs from a fresh render" in out.getvalue()
    assert summarize(results, cases, check=False, out=io.StringIO()) == 0
    assert figure.read_bytes() == data


def test_a_point_chart_states_every_point_and_each_series_n_in_its_alt_text() -> None:
    assert POINTS.alt == (
        "Round 9: rows against runtime. Each point a case. agent (n = 2 cases): a__b 9 at 60, c__d 3 at 120; "
        "obelize (n = 1 cases): a__b 1 at 1.5."
    )
    assert "agent (n = 2 cases, 12 in all)" in draw(POINTS).decode("utf-8")


def test_a_kept_render_is_reused_by_key_and_check_never_trusts_it(tmp_path: Path) -> None:
    renders = tmp_path / "renders"
    write_figures(tmp_path / "results", [RATES, TIERS], prune=False, renders=renders)
    kept = renders / f"{render_key(RATES)}.svg"
    assert kept.read_bytes() == draw(RATES) == (tmp_path / "results" / "figures" / "rates.svg").read_bytes()
    assert {path.name for path in renders.iterdir()} == {f"{render_key(RATES)}.svg", f"{render_key(TIERS)}.svg"}
    # A kept render is what the next publication writes, undrawn: proven by one that was never drawn.
    kept.write_bytes(b"<svg>kept</svg>")
    write_figures(tmp_path / "results", [RATES], prune=False, renders=renders)
    assert (tmp_path / "results" / "figures" / "rates.svg").read_bytes() == b"<svg>kept</svg>"
    # --check draws afresh, so a stale or tampered render cannot pass it.
    assert check_figures(tmp_path / "results", [RATES]) == (
        f"the figure {tmp_path / 'results' / 'figures' / 'rates.svg'} differs from a fresh render"
    )


def test_the_render_key_follows_every_number_of_the_chart() -> None:
    changed = RateChart(
        RATES.file_name,
        RATES.title,
        RATES.caption,
        (*RATES.points[:-1], RatePoint("holdout", "ceiling", rate_of(1, 8), interval=False)),
    )
    assert render_key(RATES) == render_key(
        RateChart(*[getattr(RATES, f) for f in ("file_name", "title", "caption", "points")])
    )
    assert render_key(changed) != render_key(RATES)
    assert render_key(TIERS) != render_key(RATES)


def test_a_renders_folder_that_cannot_be_written_costs_only_the_reuse(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder\n")
    assert draw_reusing(TIERS, blocked / "renders") == draw(TIERS)
    write_figures(tmp_path / "results", [TIERS], prune=False, renders=blocked / "renders")
    assert check_figures(tmp_path / "results", [TIERS]) is None
