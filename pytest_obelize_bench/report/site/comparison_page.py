"""One dev case of a comparison round as a page: both arms side by side.

The comparison record keeps, per case, the files each arm changed (lines added and removed), the
scan of the tree before either arm and after each, whether the agent's tree compiled and what its
suite did, and obelize's pass; it keeps no diff (upstream's round 1 published none), so the page
shows the changes file by file and each row the scan found before, with whether it is still there
after each arm. Pure.
"""

from __future__ import annotations

from collections import Counter

from pytest_obelize_bench._util.markdown import table
from pytest_obelize_bench.comparison.rows import Change, ComparisonRecord
from pytest_obelize_bench.report.site.case_page import marked_lines
from pytest_obelize_bench.report.site.escape import code, cut_lines, fenced, text

__all__ = ["comparison_case_page"]

ARMS = ("obelize", "general_agent")


def _value(value: object) -> str:
    return "--" if value is None else text(value)


def _change(change: Change | None) -> str:
    if change is None:
        return "--"
    added = "?" if change.added is None else change.added
    removed = "?" if change.removed is None else change.removed
    return f"{code(change.status)} +{added} -{removed}"


def _diffs(diffs: dict[str, str], rows: set[tuple[str, int]]) -> list[str]:
    """Each arm's diff against the pin, the lines at a key row marked; where the record kept none, why."""
    if not diffs:
        return ["The record keeps no diff for this case (upstream's round 1 published none, a licence that does "
                "not allow it, or a diff over 256 KiB)."]  # fmt: skip
    lines = []
    for arm, title in (("obelize", "obelize"), ("general_agent", "the general agent")):
        diff = diffs.get(arm)
        lines += [f"### What {title} changed", ""]
        if not diff:
            lines += ["Nothing kept for this arm.", ""]
            continue
        shown, note = cut_lines(diff)
        lines += [*fenced(shown, "diff", marked_lines(shown, rows)), *([f"*{text(note)}.*"] if note else []), ""]
    return lines


def comparison_case_page(record: ComparisonRecord, case_id: str, rows: set[tuple[str, int]] | None = None) -> str:
    """Both arms of ``case_id`` in round ``record.round``'s comparison; ``rows`` are its key rows
    (path, line), marked on the diffs."""
    case = record.cases[case_id]
    n = record.round
    lines = [
        f"# {text(case_id)}, comparison round {n}",
        "",
        f"[Back to the comparison](../comparison-round-{n}.md).",
        "",
    ]
    tool = case.obelize
    facts = [
        ["Runtime (s)", _value(tool.runtime_seconds if tool else None), _value(case.runtime_seconds)],
        ["Files written", _value(len(tool.written) if tool else len(case.obelize_changes)), _value(len(case.written))],
        ["Compiles", _value(tool.compiles if tool else None), _value(case.compiles)],
        ["Suite after", _value(tool.tests_after.status if tool and tool.tests_after else None),
         _value(case.tests_after.status if case.tests_after else None)],
    ]  # fmt: skip
    lines += ["## Side by side", "", *table(["", "obelize", "general agent"], ["---", "---", "---"], facts, str), ""]
    agent = {c.path: c for c in case.changes}
    ours = {c.path: c for c in case.obelize_changes}
    files = [[code(path), _change(ours.get(path)), _change(agent.get(path))] for path in sorted(set(agent) | set(ours))]
    lines += ["## Files changed", ""]
    lines += (
        table(["Path", "obelize", "general agent"], ["---", "---", "---"], files, str)
        if files
        else ["Neither arm changed a file."]
    )
    base = case.findings.get("base", [])
    after = {arm: Counter(tuple(row) for row in case.findings.get(arm, [])) for arm in ARMS}
    found = []
    for row in sorted({tuple(row) for row in base}):
        path, line, kind, symbol = row
        left = ["still there" if after[arm][row] else "gone" for arm in ARMS]
        found.append([code(path), line, code(kind), code(symbol), *left])
    lines += ["", f"## What the scan found before either arm ({len(base)})", ""]
    if found:
        lines += table(
            ["Path", "Line", "Kind", "Symbol", "After obelize", "After the agent"],
            ["---", "--:", "---", "---", "---", "---"],
            found,
            str,
        )
    else:
        lines.append("Nothing.")
    lines += ["", "## The diffs, side by side", "", *_diffs(case.diffs, rows or set())]
    if case.errors:
        errors = [[code(e.arm), code(e.step), code(e.reason), text(e.detail, 200)] for e in case.errors]
        lines += ["", "## Errors", "", *table(["Arm", "Step", "Reason", "Detail"], ["---"] * 4, errors, str)]
    return "\n".join(lines) + "\n"
