"""A promotion decision's chart (pure): each case's verified_success rate on both sides, and the verdict.

Drawn from the decision document's ``cases`` (``case_changes`` in schema 1), which carry each
case's verified attempts over its attempts on each side; a decision written before they did has
no chart. The title names
the verdict and the rules that failed, so the figure never shows a change without its decision.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_obelize_bench._util.charts import RateChart, RatePoint
from pytest_obelize_bench._util.stats import Rate, rate_of

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def _count(value: Any) -> Rate | None:
    if not isinstance(value, Mapping):
        return None
    k, n = value.get("k"), value.get("n")
    if not (isinstance(k, int) and isinstance(n, int)) or isinstance(k, bool) or not 0 <= k <= n:
        return None
    return rate_of(k, n)


def _tool(document: Mapping[str, Any], side: str) -> str:
    data = document.get(side)
    version = data.get("tool_version") if isinstance(data, Mapping) else None
    return f"{side} (obelize {version})" if isinstance(version, str) else side


def decision_chart(name: str, document: Mapping[str, Any]) -> RateChart | None:
    """The chart of the decision in file ``name``; None when its cases carry no per-case rates."""
    changes = document.get("cases", document.get("case_changes"))
    if not isinstance(changes, list):
        return None
    incumbent, candidate = _tool(document, "incumbent"), _tool(document, "candidate")
    points: list[RatePoint] = []
    for change in changes:
        if not isinstance(change, Mapping) or change.get("control") is True:
            continue
        before, after = _count(change.get("incumbent_verified")), _count(change.get("candidate_verified"))
        if before is None or after is None:
            return None
        group = f"{change.get('case')} ({change.get('split') or 'no split'})"
        points += [RatePoint(group, incumbent, before), RatePoint(group, candidate, after)]
    if not points:
        return None
    failed = document.get("failed_rules")
    rules = ", ".join(dict.fromkeys(str(rule) for rule in failed)) if isinstance(failed, list) and failed else ""
    stem = _UNSAFE.sub("_", name.removesuffix(".json"))
    return RateChart(
        file_name=f"decision-{stem}.svg",
        title=f"Decision {stem}: {document.get('decision')}" + (f" ({rules})" if rules else ""),
        caption=(
            "Each graded case's verified_success over its attempts, incumbent beside candidate, "
            "with 95% Wilson intervals; the case's split in brackets"
        ),
        points=tuple(points),
    )


def decision_charts(documents: Sequence[tuple[str, Mapping[str, Any]]]) -> list[RateChart]:
    """The chart of every decision that has one, in the order the decisions block lists them."""
    charts = (decision_chart(name, document) for name, document in sorted(documents, key=lambda pair: pair[0]))
    return [chart for chart in charts if chart is not None]


__all__ = ["decision_chart", "decision_charts"]
