"""When two sides of a paired comparison are told apart: the one definition every comparison uses.

The gate, ``obelize-bench compare``, the comparison arm's block and the history of releases all
compare two sides over the same cases. Each asks the same question, so each asks it here:

* the unit is the case: each side gives one score per case (a share in [0, 1]: verified or not,
  the share of key rows migrated, a rung of the tier ladder), never one per attempt or per row;
* the test is the exact two-sided sign test on the per-case differences (cases the second side
  scores higher against cases it scores lower; ties carry no evidence and drop out). With binary
  scores this is McNemar's exact test;
* the sides are told apart when at least ``min_n`` cases are paired and p < ``alpha``. Nothing
  else (no overlap of two independent intervals, which answers another question and disagrees
  with the paired test) enters the definition;
* the difference is shown with its interval: the mean per-case difference, with a percentile
  bootstrap over cases (fixed seed, so a document is the same bytes every time it is made).

Pure, standard library only.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_obelize_bench._util.stats import CONFIDENCE, format_percent, mcnemar_exact

__all__ = ["BOOTSTRAP_RESAMPLES", "BOOTSTRAP_SEED", "TEST_NAME", "Apart", "told_apart"]

TEST_NAME = "exact two-sided sign test on per-case differences (McNemar on cases when scores are 0 or 1)"
#: The bootstrap of the mean difference: fixed, so the same cases always give the same interval.
BOOTSTRAP_SEED = 20261204
BOOTSTRAP_RESAMPLES = 4000


@dataclass(frozen=True)
class Apart:
    """The paired comparison of two sides over ``cases`` cases (see the module docstring)."""

    cases: int
    first_higher: int
    second_higher: int
    p: float
    alpha: float
    min_n: int
    difference: float | None
    interval: tuple[float, float] | None

    @property
    def same(self) -> int:
        return self.cases - self.first_higher - self.second_higher

    @property
    def enough(self) -> bool:
        return self.cases >= self.min_n

    @property
    def told_apart(self) -> bool:
        return self.enough and self.p < self.alpha

    @property
    def why_not(self) -> list[str]:
        """What stops the sides being told apart; empty when they are."""
        why = []
        if not self.enough:
            why.append(f"{self.cases} cases < min_n {self.min_n}")
        if self.p >= self.alpha:
            why.append(f"p = {self.p:.4f} >= alpha {self.alpha:g}")
        return why

    def difference_text(self, percent: bool = True) -> str:
        """``+25.0 points [+5.0, +45.0]`` (mean per-case difference, second minus first)."""
        if self.difference is None or self.interval is None:
            return "--"

        def shown(value: float) -> str:
            return f"{value * 100:+.1f}" if percent else f"{value:+.3g}"

        unit = " points" if percent else ""
        return f"{shown(self.difference)}{unit} [{shown(self.interval[0])}, {shown(self.interval[1])}]"

    def verdict(self) -> str:
        if self.told_apart:
            return f"told apart at alpha {self.alpha:g}"
        return f"not told apart at alpha {self.alpha:g}: " + "; ".join(self.why_not)

    def as_dict(self) -> dict[str, Any]:
        return {
            "unit": "case",
            "test": TEST_NAME,
            "cases": self.cases,
            "first_higher": self.first_higher,
            "second_higher": self.second_higher,
            "same": self.same,
            "p": self.p,
            "alpha": self.alpha,
            "min_n": self.min_n,
            "told_apart": self.told_apart,
            "verdict": self.verdict(),
            "mean_difference": self.difference,
            "difference_interval": None if self.interval is None else list(self.interval),
            "difference_interval_method": (
                f"percentile bootstrap over cases, {BOOTSTRAP_RESAMPLES} resamples, seed {BOOTSTRAP_SEED}, "
                f"{format_percent(CONFIDENCE)}"
            ),
        }


def _bootstrap(differences: Sequence[float]) -> tuple[float, float]:
    """Percentile interval of the mean difference, resampling cases with a fixed seed."""
    n = len(differences)
    if all(d == differences[0] for d in differences):  # every resample is the sample itself: its mean, as summed
        same = sum([differences[0]] * n) / n
        return same, same
    draw = random.Random(BOOTSTRAP_SEED)
    # randrange(n) is _randbelow(n) behind its argument checks: the same draws, in a third of the time
    below: Callable[[int], int] = draw._randbelow  # type: ignore[attr-defined]
    means = sorted(sum([differences[below(n)] for _ in range(n)]) / n for _ in range(BOOTSTRAP_RESAMPLES))
    tail = (1.0 - CONFIDENCE) / 2
    low = means[int(tail * BOOTSTRAP_RESAMPLES)]
    high = means[min(BOOTSTRAP_RESAMPLES - 1, int((1.0 - tail) * BOOTSTRAP_RESAMPLES))]
    return low, high


def told_apart(
    first: Sequence[float], second: Sequence[float], *, alpha: float, min_n: int, interval: bool = True
) -> Apart:
    """The two sides' per-case scores, in the same case order, compared (see the module docstring).

    ``interval=False`` leaves the difference's interval out (None) for a caller that states only the
    verdict: the bootstrap is the one costly part, and the verdict never reads it."""
    if len(first) != len(second):
        raise ValueError(f"paired scores need one per case on each side, got {len(first)} and {len(second)}")
    if not 0.0 < alpha < 1.0 or min_n < 1:
        raise ValueError(f"need alpha in (0, 1) and min_n >= 1, got {(alpha, min_n)}")
    differences = [b - a for a, b in zip(first, second, strict=True)]
    first_higher = sum(d < 0 for d in differences)
    second_higher = sum(d > 0 for d in differences)
    if not differences:
        return Apart(0, 0, 0, 1.0, alpha, min_n, None, None)
    mean = sum(differences) / len(differences)
    return Apart(
        cases=len(differences),
        first_higher=first_higher,
        second_higher=second_higher,
        p=mcnemar_exact(first_higher, second_higher),
        alpha=alpha,
        min_n=min_n,
        difference=mean,
        interval=_bootstrap(differences) if interval else None,
    )
