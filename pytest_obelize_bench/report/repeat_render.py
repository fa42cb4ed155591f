"""The repeatability block of a round's section, for a round run with ``--bench-repeat`` > 1.

Pure: attempt facts in, markdown lines out. A round whose every case ran once gets no block at
all, so documents of rounds run before repeats existed render byte for byte as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pytest_obelize_bench._util.stats import format_percent
from pytest_obelize_bench.grading.repeatability import (
    AttemptFacts,
    CaseRepeatability,
    round_repeatability,
)

__all__ = ["render_repeatability"]

NULL = "--"


def _cell(value: object) -> str:
    text = NULL if value is None else str(value)
    return " ".join(text.replace("|", "\\|").split())


def _row(values: Sequence[object]) -> str:
    return "| " + " | ".join(_cell(v) for v in values) + " |"


def _share(value: float | None) -> str:
    return NULL if value is None else format_percent(value)


def _pass_hat(case: CaseRepeatability) -> str:
    return ", ".join(f"k={k} {_share(v)}" for k, v in enumerate(case.pass_hat, start=1))


def render_repeatability(attempts: Iterable[AttemptFacts]) -> list[str]:
    """The block's lines, or none when no case ran more than once."""
    summary = round_repeatability(attempts)
    if not summary.repeated:
        return []
    k = summary.most_attempts
    lines = [
        "#### Repeatability",
        "",
        f"Each case ran up to {k} times from the same bytes, each attempt in a fresh tree. Every figure",
        "above counts the first attempt of each case only; this block is the only place the repeats",
        "count. pass^k is the unbiased C(c, k) / C(n, k) for c `verified_success` in n attempts, the",
        "mean over graded cases with at least k attempts. A case is flaky when its attempts disagree",
        "on the tier or its baseline suite's status differs between attempts; a flaky baseline is the",
        "repository's suite, not the tool, and is listed apart.",
        "",
        _row(["Figure", "Value"]),
        "|---|---|",
        _row(["Graded cases", summary.graded_cases]),
        *(_row([f"pass^{n}", _share(v)]) for n, v in enumerate(summary.pass_hat, start=1)),
        _row(["Flaky cases", ", ".join(f"`{c.case}`" for c in summary.flaky) or "none"]),
        _row(["Flaky baselines", ", ".join(f"`{c.case}`" for c in summary.baseline_flaky) or "none"]),
        "",
        "Files touched, lines changed and rows migrated are the protocol's repeatability check: a",
        "rerun from the same bytes must reproduce them; `--` in that column means they agree (or",
        "were not kept).",
        "",
        _row(["Case", "Attempts", "Tiers (stability)", "pass^k", "Flaky", "Differs between attempts"]),
        "|---|---:|---|---|---|---|",
    ]
    for case in summary.cases:
        flaky = "; ".join(case.flaky_reasons) if case.flaky else "no"
        lines.append(
            _row(
                [
                    f"`{case.case}`" + (" (control)" if case.control else ""),
                    case.n,
                    case.stability(),
                    NULL if case.control else _pass_hat(case),
                    flaky,
                    "; ".join(case.differences) or NULL,
                ]
            )
        )
    return lines
