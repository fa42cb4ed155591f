"""report/round/tier_charts.py: a round's charts carry exactly the numbers its tables print."""

from __future__ import annotations

from pytest_obelize_bench.casefile.cases import load_case_file
from pytest_obelize_bench.report.round.case_entries import RoundData
from pytest_obelize_bench.report.round.figures import round_figures
from pytest_obelize_bench.report.round.round_files import load_round
from pytest_obelize_bench.report.round.tier_charts import SPLITS, headline_chart, round_charts, tiers_chart
from tests.helpers.handbuilt import five_of_twenty, make_case
from tests.helpers.project import PROJECT


def test_the_headline_is_each_splits_rate_beside_its_ceiling() -> None:
    cases, records = five_of_twenty()
    figures = round_figures(RoundData(round=3, cases=cases, records=records))
    chart = headline_chart(figures)
    assert chart.file_name == "round-3-headline.svg" and chart.groups == SPLITS
    rates = {(p.group, p.series): (p.rate.k, p.rate.n, p.interval) for p in chart.points}
    assert rates[("dev", "verified_success")] == (3, 12, True)
    assert rates[("holdout", "verified_success")] == (2, 8, True)
    assert rates[("all", "verified_success")] == (5, 20, True)
    reachable, graded = figures.ceiling.in_split("dev")
    assert rates[("dev", "ceiling")] == (reachable, graded, False)
    assert figures.headline_rate("cases", "all") == next(p.rate for p in chart.points if p.group == "all")


def test_the_tiers_stack_the_tables_counts_and_an_unrun_round_has_none() -> None:
    figures = round_figures(load_round(PROJECT / "results", load_case_file(PROJECT / "cases" / "cases.yaml"), 1))
    chart = tiers_chart(figures)
    assert chart is not None
    layers = dict(chart.layers)
    assert layers["unsupported"] == (9, 5, 14) and layers["partial"] == (3, 2, 5)
    assert [chart.total(i) for i in range(3)] == [13, 7, 20]
    unrun = round_figures(RoundData(round=4, cases=[make_case("a")], records={}))
    assert tiers_chart(unrun) is None
    assert [c.file_name for c in round_charts(unrun)] == ["round-4-headline.svg"]
