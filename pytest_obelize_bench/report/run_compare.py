"""Two sets of records of the same cases, compared: paired verified_success and tier moves.

The sides are two rounds, two runs or two folders of records; each is labelled by the caller.
Pure: the lines are a function of the two ``RoundData`` and their labels.
"""

from __future__ import annotations

from collections import Counter

from pytest_obelize_bench._util.markdown import NULL
from pytest_obelize_bench._util.stats import minimum_detectable, rate_of
from pytest_obelize_bench._util.told_apart import told_apart
from pytest_obelize_bench.grading.record import TIERS
from pytest_obelize_bench.report.round.case_entries import RoundData, case_entries

__all__ = ["compare_rounds", "sandbox_lines", "sandboxes"]


def compare_rounds(
    a: RoundData,
    b: RoundData,
    labels: tuple[str, str] | None = None,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    min_n: int = 1,
) -> list[str]:
    """verified_success in round a vs round b over the graded cases both rounds have records for.

    The rounds grade the same cases, so the samples are paired: the 2x2 table, the discordant
    case ids and the exact McNemar p-value, not a test for independent samples. Then the verdict
    by the one definition of told apart (``_util/told_apart``, at the promotion policy's ``alpha``
    and ``min_n``), the difference with its interval, and the minimum detectable difference at
    this n with ``power``, so "no difference" says what it rules out.
    """
    fa = {e.id: e for e in case_entries(a) if e.record is not None and not e.control}
    fb = {e.id: e for e in case_entries(b) if e.record is not None and not e.control}
    both = sorted(set(fa) & set(fb))
    only = len(set(fa) ^ set(fb))
    ra, rb = labels if labels is not None else (f"round {a.round}", f"round {b.round}")
    both_won = [i for i in both if fa[i].won and fb[i].won]
    a_only = [i for i in both if fa[i].won and not fb[i].won]
    b_only = [i for i in both if fb[i].won and not fa[i].won]
    neither = [i for i in both if not fa[i].won and not fb[i].won]
    width = max(len(ra), len(rb)) + 12
    apart = told_apart([float(fa[i].won) for i in both], [float(fb[i].won) for i in both], alpha=alpha, min_n=min_n)
    short = [("min_n", len(both) + 1)] if len(both) < min_n else []
    detectable = minimum_detectable(len(both), alpha, power, needs=short)
    rate_a = rate_of(len(both_won) + len(a_only), len(both))
    rate_b = rate_of(len(both_won) + len(b_only), len(both))
    lines = [
        f"{ra} vs {rb}: verified_success over the {len(both)} graded cases with a record in both"
        + (f" ({only} in only one round left out)" if only else ""),
        f"  {ra}: {rate_a.k} of {rate_a.n}, {rate_a.format()}",
        f"  {rb}: {rate_b.k} of {rate_b.n}, {rate_b.format()}",
        "",
        f"  {'':<{width}} {rb + ' success':>18} {rb + ' not':>14}",
        f"  {ra + ' success':<{width}} {len(both_won):>18} {len(a_only):>14}",
        f"  {ra + ' not':<{width}} {len(b_only):>18} {len(neither):>14}",
        "",
        f"  success in {ra} only ({len(a_only)}): {', '.join(a_only) or NULL}",
        f"  success in {rb} only ({len(b_only)}): {', '.join(b_only) or NULL}",
        f"  exact McNemar p = {apart.p:.4f} (two-sided, {len(a_only) + len(b_only)} discordant cases)",
        f"  verdict: {apart.verdict()}",
        f"  difference ({rb} minus {ra}), mean over cases: {apart.difference_text()}",
        f"  minimum detectable difference over {len(both)} cases: {detectable.format()}",
    ]
    lines.extend(sandbox_lines(a, b, (ra, rb)))
    lines.extend(["", *tier_lines(a, b, (ra, rb))])
    return lines


def sandboxes(data: RoundData) -> list[str]:
    """The sandboxes a side's records name; a record naming none ran without one."""
    return sorted({record.provenance.sandbox or "none" for record in data.records.values()})


def sandbox_lines(a: RoundData, b: RoundData, labels: tuple[str, str]) -> list[str]:
    """Under which sandbox each side ran, and a warning when they differ.

    A suite run offline inside bubblewrap can pass or fail where the same suite on the open
    machine would not, so a difference between the sides may be the sandbox, not the tool.
    """
    sa, sb = sandboxes(a), sandboxes(b)
    lines = ["", f"  sandbox: {labels[0]}: {'; '.join(sa) or NULL}; {labels[1]}: {'; '.join(sb) or NULL}"]
    if sa != sb:
        lines.append("  the sides ran under different sandboxes: a tier move may come from the sandbox, not the tool")
    return lines


def tier_lines(a: RoundData, b: RoundData, labels: tuple[str, str]) -> list[str]:
    """Each case's tier on both sides (controls included) and the table of tier transitions."""
    ta = {case: record.tier for case, record in a.records.items()}
    tb = {case: record.tier for case, record in b.records.items()}
    cases = sorted(set(ta) | set(tb))
    width = max([len(case) for case in cases] + [4])
    ra, rb = labels
    lines = [f"  {'case':<{width}}  {ra:<20} {rb}"]
    for case in cases:
        first, second = ta.get(case, "no record"), tb.get(case, "no record")
        mark = "" if first == second else "  *"
        lines.append(f"  {case:<{width}}  {first:<20} {second}{mark}")
    moves: Counter[tuple[str, str]] = Counter((ta[case], tb[case]) for case in cases if case in ta and case in tb)
    present = [tier for tier in TIERS if any(tier in pair for pair in moves)]
    lines.append("")
    lines.append(f"  tier transitions (rows {ra}, columns {rb}):")
    header = "  " + " " * 20 + "".join(f"{tier[:12]:>13}" for tier in present)
    lines.append(header)
    for row in present:
        lines.append("  " + f"{row:<20}" + "".join(f"{moves.get((row, col), 0):>13}" for col in present))
    return lines
