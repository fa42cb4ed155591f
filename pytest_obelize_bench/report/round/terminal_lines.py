"""A round's figures as the short section the terminal shows at the end of a round.

Pure: lines from the round's figures (``round_figures``); the controller prints them.
"""

from __future__ import annotations

from pathlib import Path

from pytest_obelize_bench.grading.record import TIERS
from pytest_obelize_bench.records.results_document import DOCUMENT_NAME
from pytest_obelize_bench.report.round.case_entries import RoundData
from pytest_obelize_bench.report.round.figures import RoundFigures, round_figures

__all__ = ["figures_lines", "terminal_lines"]


def figures_lines(f: RoundFigures, results_dir: Path | None = None, logs_root: Path | None = None) -> list[str]:
    """Headline with intervals, tiers, errors, ceiling, and where things are.

    The paths are printed only when given: a run that was not published has no results folder.
    """
    counts = f.counts
    lines = [
        (
            f"round {f.round}: {counts.records} records; {counts.graded} graded cases "
            f"({counts.dev} dev / {counts.holdout} holdout), negative controls: {counts.controls}"
        ),
        "verified_success (headline, model arm excluded):",
    ]
    for row in f.headline:
        label = "cases" if row.scope == "cases" else "patterns"
        rate = row.rate
        lines.append(f"  {label:<9} {row.split:<8} n={rate.n:<4} {rate.k:>4}  {rate.format()}")
    model = f.model_arm[0].rate
    lines.append(f"model arm (never in the headline): n={model.n} cases, {model.k} verified_success  {model.format()}")
    tiers = f.tiers["total"]
    lines.append("tiers: " + ", ".join(f"{tier} {tiers[tier]}" for tier in TIERS))
    classes = f.errors_by_class
    if any(classes.values()):
        lines.append(f"errors: {classes['infrastructure']} infrastructure, {classes['tool']} tool (both stay in n)")
    tally = "; ".join(f"{count} {cap}" for cap, count in f.ceiling.tally)
    lines.append(
        f"ceiling: {f.ceiling.reachable} of {f.ceiling.graded} can reach verified_success"
        + (f" ({tally})" if tally else "")
    )
    if results_dir is not None:
        lines.append(f"results: {Path(results_dir) / f'round-{f.round}'}")
        lines.append(f"summary: {Path(results_dir) / DOCUMENT_NAME}")
    if logs_root is not None:
        lines.append(f"logs:    {logs_root}")
    return lines


def terminal_lines(data: RoundData, results_dir: Path | None = None, logs_root: Path | None = None) -> list[str]:
    """The end-of-round section for a round's inputs (``figures_lines`` of its figures)."""
    return figures_lines(round_figures(data), results_dir, logs_root)
