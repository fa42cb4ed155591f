"""A round's error-analysis figures and their section of the results document.

Pure: ``error_figures`` turns an analysis and the reviewer's file into figures, ``figures_dict``
is what ``summary.json`` carries, and ``render_errors_block`` is the markdown, so the same
inputs always give the same bytes and ``summarize --check`` can compare them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from pytest_obelize_bench._util.markdown import NULL, table
from pytest_obelize_bench._util.stats import rate_over_clusters
from pytest_obelize_bench.error_analysis.review import DISPOSITIONS, ReviewFile
from pytest_obelize_bench.error_analysis.states import STATES, Analysis

HEADING = "#### Error analysis"


@dataclass(frozen=True)
class CaseFigure:
    case: str
    key_rows: int
    migrated: int
    withheld: int
    derived: int
    missed: int


@dataclass(frozen=True)
class CauseFigure:
    cause: str
    cause_class: str
    #: Key rows whose own cause it is, and derived rows F-1/F-2 attribute to it.
    rows: int
    attributed: int
    #: Rows that would migrate with this cause alone lifted; None when it is no bail to lift.
    lever: int | None
    disposition: str | None
    recorded: str | None


@dataclass(frozen=True)
class MissFigure:
    case: str
    path: str
    line: int
    symbol: str
    cause: str | None


@dataclass(frozen=True)
class UnexpectedFigure:
    case: str
    path: str
    line: int
    kind: str
    symbol: str
    cause: str | None


@dataclass(frozen=True)
class ErrorFigures:
    round: int
    key_rows: int
    states: dict[str, int]
    migrated_none: int
    migrated_all: int
    cases: list[CaseFigure]
    causes: list[CauseFigure]
    #: Per disposition: how many causes with key rows, and how many key rows.
    dispositions: dict[str, dict[str, int]]
    misses: list[MissFigure]
    unexpected: list[UnexpectedFigure]
    uncollected: list[str]
    reviewed: bool


def error_figures(analysis: Analysis, review: ReviewFile | None) -> ErrorFigures:
    counts = analysis.counts
    cases = [CaseFigure(case, sum(c.values()), *(c[s] for s in STATES)) for case, c in analysis.case_counts().items()]
    entries = review.causes if review is not None else {}
    causes = []
    for name, seen in analysis.causes.items():
        entry = entries.get(name)
        causes.append(
            CauseFigure(
                cause=name,
                cause_class=entry.cause_class if entry is not None else "/".join(sorted(seen.classes)),
                rows=seen.rows,
                attributed=seen.attributed,
                lever=analysis.levers.get(name),
                disposition=None if entry is None else entry.disposition,
                recorded=None if entry is None else entry.recorded,
            )
        )
    causes.sort(key=lambda c: (-(c.lever if c.lever is not None else -1), -c.rows, c.cause))
    dispositions = {d: {"causes": 0, "rows": 0} for d in DISPOSITIONS}
    for cause in causes:
        if cause.disposition is not None and cause.rows:
            dispositions[cause.disposition]["causes"] += 1
            dispositions[cause.disposition]["rows"] += cause.rows
    unexpected_causes = review.unexpected if review is not None else {}
    return ErrorFigures(
        round=analysis.round,
        key_rows=len(analysis.states),
        states=counts,
        migrated_none=analysis.migrated_none,
        migrated_all=analysis.migrated_all,
        cases=cases,
        causes=causes,
        dispositions=dispositions,
        misses=[MissFigure(r.case, r.path, r.line, r.symbol, r.cause) for r in analysis.states if r.state == "missed"],
        unexpected=[
            UnexpectedFigure(u.case, u.path, u.line, u.kind, u.symbol, unexpected_causes.get(u.key))
            for u in analysis.unexpected
        ],
        uncollected=list(analysis.uncollected),
        reviewed=review is not None,
    )


def figures_dict(figures: ErrorFigures) -> dict[str, Any]:
    """The figures as summary.json carries them."""
    data = asdict(figures)
    data["levers_are_upper_bounds"] = True
    data["levers_add_up"] = False
    return data


# -- markdown -----------------------------------------------------------------------------------


def _share(figures: ErrorFigures, state: str) -> str:
    """A state's share of the key rows, with its 95% interval by repository (one case each)."""
    rate = rate_over_clusters([(getattr(c, state), c.key_rows) for c in figures.cases])
    return rate.format() if rate.rate is not None else NULL


def _lever(value: int | None) -> str:
    return NULL if value is None else f"{value:+d}"


def render_errors_block(round_number: int, figures: ErrorFigures) -> str:
    """The error-analysis section of round ``round_number``'s block (no trailing newline)."""
    lines = [HEADING, ""]
    total = figures.key_rows
    lines += [
        f"Every key row of round {round_number}, by what the run did with it, from "
        f"`results/errors/round-{round_number}.json`"
        + (
            f" and the dispositions in `cases/errors-round-{round_number}.yaml`."
            if figures.reviewed
            else "; no reviewer file yet."
        ),
        "",
    ]
    lines += table(
        ("What happened to the row", "Rows", "Share [95%, by repository]"),
        ("---", "---:", "---:"),
        [
            *((state, figures.states[state], _share(figures, state)) for state in STATES),
            ("total", total, f"{total} rows in {len([c for c in figures.cases if c.key_rows])} repositories"),
        ],
    )
    lines += [
        "",
        (
            f"With nothing lifted the lever model migrates {figures.migrated_none} rows (the round's own count); "
            f"with every bail lifted, {figures.migrated_all}, short of {total} by the {figures.states['missed']} rows "
            "no pass reported."
        ),
        "",
    ]
    lines += table(
        ("Case", "Key rows", "Migrated", "Withheld", "Derived", "Missed"),
        ("---", "---:", "---:", "---:", "---:", "---:"),
        [
            *((c.case, c.key_rows, c.migrated, c.withheld, c.derived, c.missed) for c in figures.cases),
            ("total", total, *(figures.states[state] for state in STATES)),
        ],
    )
    if figures.uncollected:
        lines += [
            "",
            "Graded cases with no collected entry (no run folder was left): " + ", ".join(figures.uncollected) + ".",
        ]
    lines += [
        "",
        (
            "Causes, by lever. Rows are the key rows the cause is recorded on; derived rows are those F-1 "
            "(file atomicity) or F-2 (the pin) kept back because of it. The lever is how many more rows would "
            "migrate with that cause alone lifted. Each lever is an upper bound (a rule stops at its first "
            "failed check, so a refusal behind the recorded one is not in the record), and levers do not add "
            "up (two causes in one file are worth nothing alone and both rows together)."
        ),
        "",
    ]
    lines += table(
        ("Cause", "Class", "Rows", "Derived rows", "Lever", "Disposition", "Recorded"),
        ("---", "---", "---:", "---:", "---:", "---", "---"),
        [
            (f"`{c.cause}`", c.cause_class, c.rows, c.attributed, _lever(c.lever), c.disposition, c.recorded)
            for c in figures.causes
        ],
    )
    if figures.reviewed:
        lines += [""]
        lines += table(
            ("Disposition", "Causes", "Rows"),
            ("---", "---:", "---:"),
            [(d, figures.dispositions[d]["causes"], figures.dispositions[d]["rows"]) for d in DISPOSITIONS],
        )
    lines += ["", f"Misses ({len(figures.misses)}): key rows no pass reported, with the reviewer's cause.", ""]
    if figures.misses:
        lines += table(
            ("Case", "Row", "Symbol", "Cause"),
            ("---", "---", "---", "---"),
            [(m.case, f"`{m.path}:{m.line}`", f"`{m.symbol}`", m.cause) for m in figures.misses],
        )
    else:
        lines.append("_None._")
    lines += ["", f"Unexpected findings ({len(figures.unexpected)}): actionable findings no key row claims.", ""]
    if figures.unexpected:
        lines += table(
            ("Case", "Finding", "Kind", "Symbol", "Cause"),
            ("---", "---", "---", "---", "---"),
            [(u.case, f"`{u.path}:{u.line}`", u.kind, f"`{u.symbol}`", u.cause) for u in figures.unexpected],
        )
    else:
        lines.append("_None._")
    return "\n".join(lines)
