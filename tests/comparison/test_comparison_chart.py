"""The comparison's chart: one point per case and arm, built from the scores its block prints."""

from __future__ import annotations

import shutil
from io import StringIO
from pathlib import Path

from pytest_obelize_bench.comparison.block_text import comparison_charts
from pytest_obelize_bench.comparison.drawing import comparison_chart
from pytest_obelize_bench.comparison.score import ArmCase
from pytest_obelize_bench.report.summarize import summarize
from tests.helpers.project import PROJECT


def score(case: str, cleared: int, runtime: float | None) -> ArmCase:
    return ArmCase(case, 5, 5, cleared, 5 - cleared, 0, 0, 1, 0, runtime, "partial", None, None)


def test_a_case_without_a_runtime_has_no_point_and_the_caption_counts_the_cases() -> None:
    chart = comparison_chart(
        3,
        {
            "agent": [score("a__b", 4, 30.0), score("c__d", 0, None)],
            "obelize": [score("a__b", 1, 2.0), score("c__d", 2, 1.0)],
        },
    )
    assert chart.file_name == "comparison-round-3.svg"
    assert [len(series.points) for series in chart.series] == [1, 2]
    assert "(2 cases, 10 key rows in all)" in chart.caption
    assert "agent (n = 1 cases): a__b 4 at 30" in chart.alt


def test_round_1s_chart_shows_the_published_totals() -> None:
    (chart,) = comparison_charts(PROJECT / "results", PROJECT / "cases" / "cases.yaml")
    totals = {series.name: sum(y for _, _, y in series.points) for series in chart.series}
    assert sorted(totals.values()) == [17.0, 154.0]
    assert all(len(series.points) == 13 for series in chart.series)


def test_summarize_check_fails_when_the_comparison_figure_changes(tmp_path: Path) -> None:
    shutil.copytree(PROJECT / "results", tmp_path / "results")
    shutil.copytree(PROJECT / "cases", tmp_path / "cases", ignore=shutil.ignore_patterns("fixtures", "dryrun-fixtures"))
    results, cases = tmp_path / "results", tmp_path / "cases" / "cases.yaml"
    assert summarize(results, cases, check=True, out=StringIO()) == 0
    figure = results / "figures" / "comparison-round-1.svg"
    figure.write_bytes(figure.read_bytes().replace(b"key rows cleared", b"key rows cleaned", 1))
    out = StringIO()
    assert summarize(results, cases, check=True, out=out) == 1
    assert "comparison-round-1.svg" in out.getvalue()
