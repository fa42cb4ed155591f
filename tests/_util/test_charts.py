"""_util/charts.py: a chart's data and its alt text, which must state every number it draws."""

from __future__ import annotations

from pytest_obelize_bench._util.charts import RateChart, RatePoint, StackedChart, figures_section, image_link, rate_text
from pytest_obelize_bench._util.stats import rate_of


def test_a_rate_reads_with_its_n_and_interval_and_no_rate_without_n() -> None:
    assert rate_text(rate_of(5, 20)) == "5 of 20, 25.0% (95% CI 11.2% to 46.9%)"
    assert rate_text(rate_of(5, 20), interval=False) == "5 of 20, 25.0%"
    assert rate_text(rate_of(0, 0)) == "n = 0, no rate"


def chart() -> RateChart:
    return RateChart(
        "x.svg",
        "Title",
        "Caption",
        (
            RatePoint("dev", "verified_success", rate_of(3, 12)),
            RatePoint("dev", "ceiling", rate_of(4, 12), interval=False),
            RatePoint("holdout", "verified_success", rate_of(0, 0)),
        ),
    )


def test_the_alt_text_states_every_point_with_its_group_series_and_n() -> None:
    alt = chart().alt
    assert alt.startswith("Title. Caption. ")
    assert "dev, verified_success: 3 of 12, 25.0% (95% CI 8.9% to 53.2%)" in alt
    assert "dev, ceiling: 4 of 12, 33.3%;" in alt
    assert "holdout, verified_success: n = 0, no rate." in alt
    assert chart().groups == ("dev", "holdout") and chart().series == ("verified_success", "ceiling")


def test_a_stacked_chart_counts_each_group_and_layer() -> None:
    stacked = StackedChart("t.svg", "Tiers", "Cases", ("dev", "all"), (("wrong", (1, 2)), ("partial", (3, 4))))
    assert stacked.total(1) == 6
    assert stacked.alt == "Tiers. Cases. dev (n = 4): wrong 1, partial 3; all (n = 6): wrong 2, partial 4."


def test_the_link_points_into_figures_and_keeps_its_alt_text_one_bracket_deep() -> None:
    odd = RateChart("y.svg", "A [b]", "C", (RatePoint("g", "s", rate_of(1, 2)),))
    assert image_link(odd) == "![A (b). C. g, s: 1 of 2, 50.0% (95% CI 9.5% to 90.5%).](figures/y.svg)"
    assert figures_section([]) == []
    assert figures_section([odd]) == ["", "#### Figures", "", image_link(odd)]
