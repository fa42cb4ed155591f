"""benchmarks/round_speed.py's arithmetic: how its pairs of warm rounds become the target ratios.

The rounds themselves are measured by running the script (minutes long; performance.md); these
tests check the pure parts that turn their walls and step sums into the figures README quotes.
"""

from __future__ import annotations

from benchmarks.round_speed import TARGETS, longest_first_makespan, pair_ratios, spread


def test_a_pair_gives_the_three_target_ratios() -> None:
    walls = {"warm -n 1": 40.0, "warm -n 2": 22.0, "resumed": 1.2}
    found = {"warm -n 1": {"work": 35.0, "items": 39.0}, "warm -n 2": {"items": 42.9}}
    ratios = pair_ratios(walls, found)
    assert ratios == {
        "warm wall / (fix + suites), -n 1": 40.0 / 35.0,
        "-n 2 speed-up over -n 1": 40.0 / 22.0,
        "resumed / warm -n 1": 1.2 / 40.0,
        "warm -n 1 wall (s)": 40.0,
        "warm -n 2 wall (s)": 22.0,
        "item time, -n 2 / -n 1": 42.9 / 39.0,
    }


def test_the_spread_is_the_median_with_the_smallest_and_largest() -> None:
    def pair(value: float) -> dict[str, float]:
        return {name: value for name in TARGETS} | {"warm -n 1 wall (s)": 40.0}

    shown = spread([pair(1.9), pair(1.6), pair(1.7)])
    assert list(shown) == [f"{name}, median of 3 pair(s) [min, max]" for name in TARGETS]  # targets only
    assert set(shown.values()) == {"1.700 [1.600, 1.900]"}
    assert set(spread([pair(1.0), pair(2.0)]).values()) == {"1.500 [1.000, 2.000]"}
    assert set(spread([pair(1.25)]).values()) == {"1.250 [1.250, 1.250]"}


def test_items_longest_first_end_with_the_busiest_worker() -> None:
    assert longest_first_makespan([17.0, 7.0, 3.0, 3.0, 2.0, 2.0, 2.0, 2.0], 2) == 19.0
    assert longest_first_makespan([5.0, 5.0], 1) == 10.0
