"""The answer at a glance: the latest published figure of each measurement, on one screen.

A maintainer opening the results document first wants to know what obelize migrates, on how many
cases, how sure that is, what stops it, what the last release decision was and what was not measured.
Every line here is computed from what the other blocks already publish (each round's summary, each
Gate 1 and dry-run document, the decisions and the release histories), so the glance can never say
more than its sources; each figure keeps its n, its split and its 95% interval. Pure: the caller reads
the files (``report/summarize.py``) and this module renders.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_obelize_bench._util.charts import RateChart, RatePoint, figures_section
from pytest_obelize_bench._util.markdown import NULL, plain, table
from pytest_obelize_bench._util.stats import Rate, rate_of, rate_over_clusters

__all__ = ["GLANCE_BLOCK", "GLANCE_FIGURE", "GateFigure", "GlanceInputs", "PackFigure", "glance_chart", "render_glance"]

GLANCE_BLOCK = "glance"
GLANCE_FIGURE = "at-a-glance.svg"
#: How many causes of unmigrated rows the glance names, largest lever first.
TOP_CAUSES = 3


@dataclass(frozen=True)
class GateFigure:
    """One published Gate 1: its name (``sample`` or the measurement's), pooled precision and recall."""

    name: str
    repositories: int
    precision: Rate
    recall: Rate
    obelize: str | None


@dataclass(frozen=True)
class PackFigure:
    """One pack's published dry run: the outcome counts over the repositories with an outcome."""

    pack: str
    outcomes: Mapping[str, int]
    obelize: str | None


@dataclass(frozen=True)
class GlanceInputs:
    """What the glance is computed from: each round's summary (``summary.json``'s data) by round number,
    the measurements, the newest decision (file name and verdict) and each round's history's last step."""

    rounds: Mapping[int, Mapping[str, Any]]
    gates: Sequence[GateFigure] = ()
    packs: Sequence[PackFigure] = ()
    decision: tuple[str, str, str] | None = None
    history_steps: Mapping[int, str] = field(default_factory=dict)


def _published(summary: Mapping[str, Any]) -> bool:
    return summary.get("status") == "run" and bool(summary.get("publication"))


def _headline(summary: Mapping[str, Any], split: str) -> Rate | None:
    for row in summary.get("headline") or []:
        if row.get("scope") == "cases" and row.get("split") == split:
            return rate_of(int(row["k"]), int(row["n"]))
    return None


def rows_migrated(summary: Mapping[str, Any], split: str = "all") -> Rate | None:
    """Key rows migrated over key rows in one split (``all``, ``dev``, ``holdout``), the interval by case
    (each case one cluster), from the round's error analysis; None for a round not yet analysed."""
    cases = (summary.get("error_analysis") or {}).get("cases") or []
    sides = {row.get("case"): row.get("split") for row in (summary.get("ceiling") or {}).get("cases") or []}
    chosen = [case for case in cases if split == "all" or sides.get(case.get("case")) == split]
    if not chosen:
        return None
    return rate_over_clusters([(int(case["migrated"]), int(case["key_rows"])) for case in chosen])


def _round_rows(n: int, summary: Mapping[str, Any]) -> list[tuple[object, ...]]:
    rows: list[tuple[object, ...]] = []
    tools = ", ".join((summary.get("provenance") or {}).get("obelize_versions") or []) or NULL
    for split in ("all", "dev", "holdout"):
        rate = _headline(summary, split)
        if rate is not None:
            rows.append((f"Round {n}: `verified_success` (obelize {tools})", split, f"{rate.n} cases", rate.format()))
    for split in ("all", "dev", "holdout"):
        migrated = rows_migrated(summary, split)
        if migrated is not None:
            rows.append(
                (
                    f"Round {n}: key rows migrated",
                    split,
                    migrated.counted("rows", "cases"),
                    f"{migrated.format()} by case",
                )
            )
    tiers = (summary.get("tiers") or {}).get("total") or {}
    told = ", ".join(f"{count} `{tier}`" for tier, count in tiers.items() if count)
    if told:
        rows.append((f"Round {n}: tiers", "all", f"{sum(tiers.values())} cases", told))
    return rows


def _not_measured(rounds: Mapping[int, Mapping[str, Any]]) -> list[str]:
    lines = []
    for n, summary in sorted(rounds.items()):
        away = (summary.get("publication") or {}).get("unreachable") or {}
        if not away:
            continue
        reasons = Counter(str(reason) for reason in away.values())
        told = "; ".join(f"{count} {plain(reason)}" for reason, count in sorted(reasons.items(), key=lambda i: -i[1]))
        lines.append(f"* Round {n}: {len(away)} rows out of reach, not run ({told}).")
    return lines


def _causes(rounds: Mapping[int, Mapping[str, Any]]) -> list[str]:
    analysed = [n for n, summary in rounds.items() if (summary.get("error_analysis") or {}).get("causes")]
    if not analysed:
        return ["No round's error analysis is published yet."]
    n = max(analysed)
    causes = sorted(
        rounds[n]["error_analysis"]["causes"],
        key=lambda cause: (-int(cause.get("lever") or 0), str(cause.get("cause"))),
    )[:TOP_CAUSES]
    lines = [
        f"Round {n}, by lever (the rows that would migrate with that cause alone lifted; an upper bound, and "
        "levers do not add up):",
        "",
    ]
    lines += table(
        ["Cause", "Rows", "Lever", "Disposition"],
        ["---", "---:", "---:", "---"],
        [
            (
                f"`{cause['cause']}`",
                cause.get("rows"),
                cause.get("lever"),
                f"{cause.get('disposition')} ({cause.get('recorded')})",
            )
            for cause in causes
        ],
    )
    return lines


def render_glance(inputs: GlanceInputs) -> str:
    """The block: the figures table, the largest causes, the decision and history, what was not measured."""
    rows: list[tuple[object, ...]] = []
    for n, summary in sorted(inputs.rounds.items(), reverse=True):
        if _published(summary):
            rows += _round_rows(n, summary)
    for gate in inputs.gates:
        label = f"Gate 1 ({gate.name}, obelize {gate.obelize or NULL})"
        rows.append((f"{label}: precision", "all", gate.precision.counted("findings"), gate.precision.format()))
        rows.append((f"{label}: recall", "all", gate.recall.counted("labelled rows"), gate.recall.format()))
    for pack in inputs.packs:
        total = sum(pack.outcomes.values())
        complete = rate_of(int(pack.outcomes.get("complete", 0)), total)
        rows.append(
            (
                f"Fix dry run `{pack.pack}` (obelize {pack.obelize or NULL}): `complete`",
                "frame",
                f"{total} repositories",
                complete.format(),
            )
        )
    lines = [
        "### At a glance",
        "",
        "Generated from `results/` alone: the latest published figure of each measurement, with its n, the "
        "split it counts and its 95% interval (Wilson's; by case or by repository where rows sit inside them). "
        "The sections below give every figure in full.",
        "",
    ]
    lines += (
        table(["Measurement", "Split", "n", "Figure [95%]"], ["---", "---", "---", "---"], rows)
        if rows
        else ["_Nothing published yet._"]
    )
    lines += ["", "#### What stops the migration", "", *_causes(inputs.rounds)]
    lines += ["", "#### Release decisions", ""]
    if inputs.decision is not None:
        name, verdict, pair = inputs.decision
        lines.append(f"* Latest decision (`{name}`): **{verdict}**, {pair}.")
    else:
        lines.append("* No promotion decision is published yet.")
    for n, step in sorted(inputs.history_steps.items()):
        lines.append(f"* Round {n}'s release history, its last step: {step}")
    lines += ["", "#### Not measured", ""]
    lines += _not_measured(inputs.rounds) or ["* Every row of every published round was measured."]
    chart = glance_chart(inputs)
    lines += figures_section([chart] if chart is not None else [])
    return "\n".join(lines) + "\n"


def glance_chart(inputs: GlanceInputs) -> RateChart | None:
    """One figure: each round's `verified_success` and rows migrated, each Gate 1's precision and recall,
    each dry run's complete share, with their intervals; None when nothing is published to draw."""
    points: list[RatePoint] = []
    for n, summary in sorted(inputs.rounds.items()):
        if not _published(summary):
            continue
        headline = _headline(summary, "all")
        if headline is not None:
            points.append(RatePoint(f"Round {n}", "verified_success (cases)", headline))
        migrated = rows_migrated(summary)
        if migrated is not None:
            points.append(RatePoint(f"Round {n}", "key rows migrated (by case)", migrated))
    for gate in inputs.gates:
        points += [
            RatePoint(f"Gate 1, {gate.name}", "precision", gate.precision),
            RatePoint(f"Gate 1, {gate.name}", "recall", gate.recall),
        ]
    for pack in inputs.packs:
        total = sum(pack.outcomes.values())
        points.append(
            RatePoint(
                f"Dry run, {pack.pack.split('/')[0]}", "complete", rate_of(pack.outcomes.get("complete", 0), total)
            )
        )
    if not points:
        return None
    return RateChart(
        file_name=GLANCE_FIGURE,
        title="obelize at a glance",
        caption="The latest published figure of each measurement with its 95% interval; n and split in the table",
        points=tuple(points),
    )
