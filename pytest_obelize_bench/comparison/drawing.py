"""The comparison arm's chart (pure): per case, key rows each arm cleared against its runtime.

Built from the same scores the comparison block prints, one point per dev case and arm; a case
with no runtime for an arm (an error) has no point there, and the caption says how many each arm
has. Runtime is on a log scale: the arms differ by orders of magnitude.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pytest_obelize_bench._util.charts import PointChart, PointSeries
from pytest_obelize_bench.comparison.score import ArmCase


def file_name(round_number: int) -> str:
    return f"comparison-round-{round_number}.svg"


def comparison_chart(round_number: int, arms: Mapping[str, Sequence[ArmCase]]) -> PointChart:
    """One series per arm, in the block's order; key rows from the cases themselves."""
    series = []
    key_rows = 0
    for name, scores in arms.items():
        points = tuple(
            (score.case, float(score.runtime_seconds), float(score.cleared))
            for score in scores
            if score.runtime_seconds is not None and score.runtime_seconds > 0
        )
        series.append(PointSeries(name, points))
        key_rows = max(key_rows, sum(score.key_rows for score in scores))
    cases = max((len(scores) for scores in arms.values()), default=0)
    return PointChart(
        file_name=file_name(round_number),
        title=f"Comparison arm, round {round_number}: key rows cleared against runtime",
        caption=(
            f"Each point a dev case of round {round_number} ({cases} cases, {key_rows} key rows in all); "
            "rows cleared as one obelize scan sees them after each arm; runtime in seconds on a log scale"
        ),
        x_label="runtime per case (seconds, log scale)",
        y_label="key rows cleared",
        series=tuple(series),
    )


__all__ = ["comparison_chart", "file_name"]
