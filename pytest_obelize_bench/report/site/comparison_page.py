"""One dev case of a comparison round as a page: both arms side by side, from the scores.

The page reads the comparison's scores (``comparison/assemble.py``), the same the results
document's block reads, so each arm's key rows, rows seen, cleared, files, runtime, tier and
ceiling are the block's own cells (``side_by_side.case_cells``), beside whether its tree compiled
and what its suite did after it. The record keeps, per case, the files each arm changed and the
scan of the tree before either arm and after each; the scan table counts each (path, kind, symbol)
as the scorer matches it (edits move lines), with the key's rows of it beside, so the rows a
summary counts are the rows the page shows. Where the record keeps each arm's diff, it is shown
with the key rows marked; where it does not, the page gives the record's reason (the arm errored or
changed nothing, the record is upstream's round 1, the licence, the size). Pure.
"""

from __future__ import annotations

from collections import Counter

from pytest_obelize_bench._util.markdown import table
from pytest_obelize_bench.casefile.cases import Case
from pytest_obelize_bench.comparison.assemble import ComparisonScore
from pytest_obelize_bench.comparison.rows import BASE, OBELIZE, Change
from pytest_obelize_bench.comparison.score import ArmCase, key_triples, scan_triples
from pytest_obelize_bench.comparison.side_by_side import CASE_COLUMNS, case_cells
from pytest_obelize_bench.grading.grade import expected_rows
from pytest_obelize_bench.grading.record import SuiteResult
from pytest_obelize_bench.report.site.case_page import licence, marked_lines
from pytest_obelize_bench.report.site.escape import code, cut_lines, fenced, text
from pytest_obelize_bench.tool.evidence_copy import patch_publishable

__all__ = ["comparison_case_page"]


def _value(value: object) -> str:
    return "--" if value is None else text(value)


def _change(change: Change | None) -> str:
    if change is None:
        return "--"
    added = "?" if change.added is None else change.added
    removed = "?" if change.removed is None else change.removed
    return f"{code(change.status)} +{added} -{removed}"


def _suite(suite: SuiteResult | None) -> str:
    if suite is None:
        return "--"
    counts = [f"{value} {name}" for name, value in (("passed", suite.passed), ("failed", suite.failed),
              ("skipped", suite.skipped)) if value is not None]  # fmt: skip
    return f"`{suite.status}`" + (f" ({', '.join(counts)})" if counts else "")


_UPSTREAM = "the record was imported from upstream's round 1, which kept no diff (it names no arm file digest)"


def _diff_missing(score: ComparisonScore, case_id: str, arm: str, key: Case | None) -> str:
    """Why an arm's diff is not on the page, from the record: the true reason, not a list of maybes."""
    record = score.record
    case = record.cases[case_id]
    errored = next((e for e in case.errors if e.arm == arm), None)
    if errored is not None:
        return f"the arm errored at step {code(errored.step)}"
    if not (case.obelize_changes if arm == OBELIZE else case.changes):
        return "it changed nothing"
    if record.arm_file_sha256 is None:
        return _UPSTREAM
    if key is not None and not patch_publishable(key.license):
        return licence(key.license)
    return "its diff is over 256 KiB, and is not kept"


def _diffs(score: ComparisonScore, case_id: str, key: Case | None) -> list[str]:
    """Each arm's diff against the pin, the lines at a key row marked; where the record kept none, why."""
    record, agent = score.record, score.agent
    diffs = record.cases[case_id].diffs
    if not diffs and record.arm_file_sha256 is None:
        return [f"No diff is shown: {_UPSTREAM}."]
    rows = set() if key is None else {(path, line) for path, line, _ in expected_rows(key)}
    lines = []
    for arm, title in ((OBELIZE, "obelize"), (agent, "the general agent")):
        # this harness keys the agent's diff by its generic name, whatever the arm file calls it
        diff = diffs.get(arm) or (diffs.get("general_agent") if arm != OBELIZE else None)
        lines += [f"### What {title} changed", ""]
        if not diff:
            lines += [f"No diff is shown: {_diff_missing(score, case_id, arm, key)}.", ""]
            continue
        shown, note = cut_lines(diff)
        lines += [*fenced(shown, "diff", marked_lines(shown, rows)), *([f"*{text(note)}.*"] if note else []), ""]
    return lines


def _side_by_side(agent: str, ours: ArmCase, theirs: ArmCase) -> list[str]:
    """The block's per-case cells of both arms, one row per column, and what the block leaves out."""
    cells = {OBELIZE: case_cells(OBELIZE, ours), agent: case_cells(agent, theirs)}
    rows: list[list[object]] = [[name, cells[OBELIZE][i], cells[agent][i]] for i, name in enumerate(CASE_COLUMNS)
                                if i >= 2]  # fmt: skip
    rows.append(["compiles", _value(ours.compiles), _value(theirs.compiles)])
    rows.append(["suite after", _suite(ours.tests_after), _suite(theirs.tests_after)])
    return table(["", "obelize", "general agent"], ["---", "---", "---"], rows)


def _scan(score: ComparisonScore, case_id: str, key: Case | None, ours: ArmCase, theirs: ArmCase) -> list[str]:
    """Every (path, kind, symbol) the key names or the scan reported before either arm, counted."""
    case = score.record.cases[case_id]
    wanted = Counter(key_triples(key)) if key is not None else Counter()
    before = scan_triples(case.findings.get(BASE, []))
    after = {arm: scan_triples(case.findings.get(arm, [])) for arm in (OBELIZE, score.agent)}
    lines_at: dict[tuple[str, str, str | None], list[int]] = {}
    for path, line, kind, symbol in case.findings.get(BASE, []):
        lines_at.setdefault((path, kind, symbol), []).append(line)
    found = []
    for triple in sorted(set(wanted) | set(before), key=lambda t: (t[0], t[1], t[2] or "")):
        path, kind, symbol = triple
        at = ", ".join(str(n) for n in sorted(lines_at.get(triple, [])))
        where = f"{code(path)} {'line' if ',' not in at else 'lines'} {at}" if at else code(path)
        found.append([where, f"{code(kind)} {code(symbol)}", wanted[triple], before[triple],
                      after[OBELIZE][triple], after[score.agent][triple]])  # fmt: skip
    intro = (
        "Counted as the scorer matches them, on (path, kind, symbol), since edits move lines: **Key** is the key's "
        "rows of each, **Before** the scan's reports of it on the untouched tree (at the lines shown), "
        "**obelize** and **agent** its reports after each arm. A row with a key count is a key row; a key row is "
        "cleared when the scan after the arm no longer reports it (a deleted key file clears nothing)."
    )
    header = ["Path", "Kind and symbol", "Key", "Before", "obelize", "agent"]
    lines = [intro, ""]
    lines += table(header, ["---", "---", "--:", "--:", "--:", "--:"], found, str) if found else ["Nothing."]
    lines += [
        "",
        f"The scan saw {ours.seen} of the {ours.key_rows} key rows before either arm; obelize cleared "
        f"{ours.cleared} of them, the general agent {theirs.cleared}.",
    ]
    return lines


def comparison_case_page(score: ComparisonScore, case_id: str, key: Case | None) -> str:
    """Both arms of ``case_id`` in the comparison ``score``; ``key`` is its row of the case file."""
    record, agent = score.record, score.agent
    case = record.cases[case_id]
    ours = next(one for one in score.scores[OBELIZE] if one.case == case_id)
    theirs = next(one for one in score.scores[agent] if one.case == case_id)
    n = record.round
    lines = [
        f"# {text(case_id)}, comparison round {n}",
        "",
        f"[Back to the comparison](../comparison-round-{n}.md). The figures below are this case's rows of its summary.",
        "",
        "## Side by side",
        "",
        *_side_by_side(agent, ours, theirs),
        "",
    ]
    changed = {c.path: c for c in case.changes}
    obelize = {c.path: c for c in case.obelize_changes}
    files = [[code(path), _change(obelize.get(path)), _change(changed.get(path))]
             for path in sorted(set(changed) | set(obelize))]  # fmt: skip
    lines += ["## Files changed", ""]
    lines += (
        table(["Path", "obelize", "general agent"], ["---", "---", "---"], files, str)
        if files
        else ["Neither arm changed a file."]
    )
    lines += ["", "## Key rows and what the scan found", "", *_scan(score, case_id, key, ours, theirs)]
    lines += ["", "## The diffs, side by side", "", *_diffs(score, case_id, key)]
    if case.errors:
        errors = [[code(e.arm), code(e.step), code(e.reason), text(e.detail, 200)] for e in case.errors]
        lines += ["", "## Errors", "", *table(["Arm", "Step", "Reason", "Detail"], ["---"] * 4, errors, str)]
    return "\n".join(lines) + "\n"
