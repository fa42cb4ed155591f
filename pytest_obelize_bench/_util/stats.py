"""Statistics for a benchmark of about twenty cases, in exact arithmetic where it can be had.

Twenty binary outcomes say little, and the report has to show how little. So:

* every rate is published with its 95% Wilson score interval (``wilson_interval``): unlike the
  normal approximation it stays inside [0, 1] and keeps its coverage at 0/n and n/n, which is
  exactly where a small benchmark sits;
* two rounds over the same cases are *paired*, so they are compared with the exact McNemar test
  on the discordant cases (``mcnemar_exact``); Fisher's test (``fisher_exact_two_sided``) is for
  two independent samples and is kept for that case only;
* a tool run several times per case is summarised by pass^k (``pass_hat_k``, as in tau-bench):
  the chance that k runs of a case all succeed. A deterministic tool has pass^k == pass^1, so a
  gap measures harness flakiness.

Standard library only. Counts are combined as Python integers and divided once at the end
(integer true division is correctly rounded), so no p-value depends on a float tolerance.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CLUSTERED_METHOD",
    "CONFIDENCE",
    "Z_95",
    "MinimumDetectable",
    "Rate",
    "fisher_exact_two_sided",
    "format_percent",
    "intervals_overlap",
    "mcnemar_exact",
    "mean_pass_hat_k",
    "minimum_detectable",
    "pass_hat_k",
    "pass_hat_k_series",
    "rate_of",
    "rate_over_clusters",
    "wilson_interval",
]

#: The standard normal quantile for a two-sided 95% interval (scipy.stats.norm.ppf(0.975)).
Z_95 = 1.959963984540054
#: The confidence every published interval is computed at.
CONFIDENCE = 0.95


def _check_count(k: int, n: int) -> None:
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if not 0 <= k <= n:
        raise ValueError(f"k must be between 0 and n={n}, got {k}")


def wilson_interval(k: int, n: int, z: float = Z_95) -> tuple[float, float] | None:
    """The Wilson score interval for k successes in n trials, or None when n is 0.

    With no trials there is no interval to report: returning (0, 1) would print a band that
    looks like a measurement. At k == 0 and k == n the bound on that side is exactly 0 or 1
    (the formula gives it up to rounding), so it is set exactly rather than clamped.
    """
    _check_count(k, n)
    if n == 0:
        return None
    return _wilson_at(k / n, n, z)


def fisher_exact_two_sided(a: int, b: int, c: int, d: int) -> float:
    """Two-sided Fisher exact p-value for the table [[a, b], [c, d]] (independent samples).

    With the margins fixed, the top-left cell follows a hypergeometric law. The p-value is the
    total probability of every table at most as likely as the one observed. Each table's
    probability is an integer over one common denominator, so "at most as likely" is an exact
    integer comparison; ties need no tolerance.
    """
    if min(a, b, c, d) < 0:
        raise ValueError(f"cells must be >= 0, got {(a, b, c, d)}")
    first_row, second_row, first_column = a + b, c + d, a + c
    everything = first_row + second_row
    if everything == 0:
        return 1.0

    def weight(top_left: int) -> int:
        return math.comb(first_row, top_left) * math.comb(second_row, first_column - top_left)

    observed = weight(a)
    smallest = max(0, first_column - second_row)
    largest = min(first_row, first_column)
    tail = sum(w for x in range(smallest, largest + 1) if (w := weight(x)) <= observed)
    return min(1.0, tail / math.comb(everything, first_column))


def mcnemar_exact(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value from the discordant counts b and c (paired samples).

    Cases that succeeded in both runs or in neither say nothing about a difference. Under the
    null hypothesis each discordant case is equally likely to go either way, so the smaller count
    is binomial(b + c, 1/2); the two-sided p-value doubles its tail, capped at 1. With no
    discordant case there is no evidence of a difference at all: 1.0.
    """
    if b < 0 or c < 0:
        raise ValueError(f"counts must be >= 0, got {(b, c)}")
    total = b + c
    if total == 0:
        return 1.0
    tail = sum(math.comb(total, i) for i in range(min(b, c) + 1))
    return min(1.0, 2 * tail / float(2**total))


def _at_least(n: int, share: float, least: int) -> float:
    """P(X >= least) for X ~ binomial(n, share)."""
    return math.fsum(math.comb(n, i) * share**i * (1.0 - share) ** (n - i) for i in range(least, n + 1))


@dataclass(frozen=True)
class MinimumDetectable:
    """What a paired exact test over n cases, with any further rule, can tell apart at alpha.

    ``discordant_needed`` is the fewest cases, all going one way and none the other, that decide:
    the exact two-sided p falls under alpha, and every other requirement in ``needs`` (a margin, a
    share of cases that must carry signal) is met. ``cases`` is the smallest number of the n cases
    the candidate must be able to win (with none lost) for that to happen with at least ``power``:
    each case is taken to go the candidate's way independently with probability ``cases / n``.
    None when no difference at this n decides.
    """

    n: int
    alpha: float
    power: float
    discordant_needed: int | None
    cases: int | None
    needs: tuple[tuple[str, int], ...] = ()

    @property
    def share(self) -> float | None:
        return None if self.cases is None or self.n == 0 else self.cases / self.n

    def format(self) -> str:
        if self.cases is None:
            return f"no difference over {self.n} cases can decide at alpha {self.alpha:g}"
        why = f" ({', '.join(f'{name} {count}' for name, count in self.needs)})" if self.needs else ""
        return (
            f"{self.cases} more of {self.n} cases ({format_percent(self.share or 0.0)}) "
            f"at alpha {self.alpha:g} and {format_percent(self.power)} power; "
            f"at least {self.discordant_needed} cases won with none lost decide{why}"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "alpha": self.alpha,
            "power": self.power,
            "discordant_needed": self.discordant_needed,
            "cases": self.cases,
            "share": self.share,
            "needs": dict(self.needs),
            "model": "paired exact sign test; each case won independently, none lost",
        }


def minimum_detectable(
    n: int, alpha: float, power: float, *, needs: Sequence[tuple[str, int]] = (), most: int | None = None
) -> MinimumDetectable:
    """The minimum detectable difference over n cases (see the class).

    ``needs`` are further rules' counts of cases won (the sign test's own is added first);
    ``most`` is how many cases can be won at all (those not already at the top).
    """
    if n < 0 or not 0.0 < alpha < 1.0 or not 0.0 < power < 1.0:
        raise ValueError(f"need n >= 0 and alpha, power in (0, 1), got {(n, alpha, power)}")
    sign = next((d for d in range(1, n + 1) if mcnemar_exact(0, d) < alpha), None)
    rules = (("sign test", sign if sign is not None else n + 1), *needs)
    needed: int | None = max(count for _, count in rules)
    if sign is None or needed is None or needed > (n if most is None else min(most, n)):
        needed = None
    cases = None
    if needed is not None:
        cases = next(c for c in range(needed, n + 1) if _at_least(n, c / n, needed) >= power)
    shown = tuple(rules) if needs else ()
    return MinimumDetectable(n=n, alpha=alpha, power=power, discordant_needed=needed, cases=cases, needs=shown)


def pass_hat_k(c: int, n: int, k: int) -> float | None:
    """The unbiased estimate C(c, k) / C(n, k) that k runs of one case all succeed.

    c successes in n runs; None when n < k, since k distinct runs cannot be drawn from fewer.
    pass^1 is the plain success rate c / n.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    _check_count(c, n)
    if n < k:
        return None
    return math.comb(c, k) / math.comb(n, k)


def mean_pass_hat_k(counts: Sequence[tuple[int, int]], k: int) -> float | None:
    """pass^k over cases: the mean of ``pass_hat_k`` over (successes, runs) pairs.

    Cases with fewer than k runs have no estimate and are left out of the mean rather than
    counted as 0; None when no case has k runs.
    """
    estimates = [value for c, n in counts if (value := pass_hat_k(c, n, k)) is not None]
    if not estimates:
        return None
    return math.fsum(estimates) / len(estimates)


def pass_hat_k_series(c: int, n: int, most: int) -> tuple[float | None, ...]:
    """pass^k for k = 1..most from one case's c successes in n runs (None where n < k)."""
    return tuple(pass_hat_k(c, n, k) for k in range(1, most + 1))


def intervals_overlap(first: tuple[float, float], second: tuple[float, float]) -> bool:
    """Whether two closed intervals share a point: two rates whose bands touch are not told apart."""
    return first[0] <= second[1] and second[0] <= first[1]


def format_percent(value: float) -> str:
    """A share as a percentage with one decimal: 0.25 -> ``25.0%``."""
    return f"{value * 100:.1f}%"


@dataclass(frozen=True)
class Rate:
    """k of n, with the point rate and its 95% interval; all None when n is 0.

    A rate never travels without its n and its interval, so the three are one value. A rate over
    rows that sit inside repositories (``rate_over_clusters``) also carries how many clusters hold
    them and the effective n its interval was computed at.
    """

    k: int
    n: int
    rate: float | None
    low: float | None
    high: float | None
    clusters: int | None = None
    effective_n: float | None = None

    def format(self) -> str:
        """``25.0% [11.2%, 46.9%]``, or ``--`` when there is nothing to rate."""
        if self.rate is None or self.low is None or self.high is None:
            return "--"
        return f"{format_percent(self.rate)} [{format_percent(self.low)}, {format_percent(self.high)}]"

    def counted(self, unit: str, cluster: str = "repositories") -> str:
        """``154 of 174 rows in 13 repositories`` (the clusters only when the rate has them)."""
        text = f"{self.k} of {self.n} {unit}"
        return text if self.clusters is None else f"{text} in {self.clusters} {cluster}"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Rate:
        """A rate read back from its ``as_dict`` form (a history's, a summary's)."""
        return cls(
            k=int(data["k"]),
            n=int(data["n"]),
            rate=data.get("rate"),
            low=data.get("low"),
            high=data.get("high"),
            clusters=data.get("clusters"),
            effective_n=data.get("effective_n"),
        )

    def as_dict(self) -> dict[str, Any]:
        """The machine-readable form: the counts, the rate and how its interval was computed."""
        data: dict[str, Any] = {
            "k": self.k,
            "n": self.n,
            "rate": self.rate,
            "low": self.low,
            "high": self.high,
            "method": "wilson" if self.clusters is None else CLUSTERED_METHOD,
            "confidence": CONFIDENCE,
        }
        if self.clusters is not None:
            data["clusters"] = self.clusters
            data["effective_n"] = self.effective_n
        return data


#: How a rate over clustered rows gets its interval (``rate_over_clusters``).
CLUSTERED_METHOD = "wilson at the effective n (ratio estimator by cluster, Kish design effect)"


def rate_of(k: int, n: int) -> Rate:
    """k successes out of n as a ``Rate`` (rate and bounds None when n is 0)."""
    interval = wilson_interval(k, n)
    if interval is None:
        return Rate(k=k, n=n, rate=None, low=None, high=None)
    return Rate(k=k, n=n, rate=k / n, low=interval[0], high=interval[1])


def _wilson_at(share: float, n: float, z: float = Z_95) -> tuple[float, float]:
    """The Wilson bounds of a share observed over a (possibly fractional) effective n."""
    z2 = z * z
    scale = 1.0 + z2 / n
    middle = (share + z2 / (2 * n)) / scale
    spread = (z / scale) * math.sqrt(share * (1.0 - share) / n + z2 / (4 * n * n))
    low = 0.0 if share == 0.0 else max(0.0, middle - spread)
    high = 1.0 if share == 1.0 else min(1.0, middle + spread)
    return low, high


def rate_over_clusters(groups: Sequence[tuple[int, int]]) -> Rate:
    """sum(k) of sum(n) when the rows come in clusters (k, n), one per repository.

    Rows of one repository are not independent: one rule that fails on a repository fails on all
    its rows. A Wilson interval over rows would be far too narrow, so the rate is the ratio
    estimator sum(k) / sum(n), its variance the between-cluster one,
    G / (G - 1) * sum((k_i - p n_i)^2) / N^2, and the interval Wilson's at the effective n,
    N / deff, where the design effect deff is that variance over the binomial p(1 - p) / N,
    never below 1. When every row agrees (p is 0 or 1) no variance can be estimated and each
    cluster counts as one observation (n_eff = G). Clusters with no row are left out.
    """
    kept = [(k, n) for k, n in groups if n > 0]
    for k, n in kept:
        _check_count(k, n)
    k_total, n_total, clusters = sum(k for k, _ in kept), sum(n for _, n in kept), len(kept)
    if n_total == 0:
        return Rate(k=0, n=0, rate=None, low=None, high=None, clusters=clusters, effective_n=None)
    share = k_total / n_total
    if share in (0.0, 1.0) or clusters < 2:
        effective = float(min(n_total, max(clusters, 1)))
    else:
        spread = sum((k - share * n) ** 2 for k, n in kept) * clusters / (clusters - 1) / n_total**2
        binomial = share * (1.0 - share) / n_total
        effective = n_total / max(1.0, spread / binomial)
    low, high = _wilson_at(share, effective)
    return Rate(
        k=k_total, n=n_total, rate=share, low=low, high=high, clusters=clusters, effective_n=round(effective, 3)
    )
