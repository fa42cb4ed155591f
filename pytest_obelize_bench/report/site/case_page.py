"""One case of one round as a page: its tier and the rule that decided it, each key row and what
happened to it, the patch with the key rows marked on it, the suites, the review, the provenance,
and the attempts side by side. Pure: the caller reads the published files (``pages.py``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pytest_obelize_bench._util.markdown import table
from pytest_obelize_bench.casefile.schema import Case, Review
from pytest_obelize_bench.error_analysis.collected import collect_case
from pytest_obelize_bench.error_analysis.states import case_states
from pytest_obelize_bench.grading.error_classes import error_class
from pytest_obelize_bench.grading.grade import expected_rows
from pytest_obelize_bench.grading.graded_facts import Artefacts
from pytest_obelize_bench.grading.record import Record, SuiteResult
from pytest_obelize_bench.grading.tiers import explain_tier
from pytest_obelize_bench.report.show import unmigrated_rows
from pytest_obelize_bench.report.site.escape import code, cut_lines, fenced, text

__all__ = ["CaseEvidence", "case_page", "marked_lines"]

_HUNK = re.compile(r"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_STATE_WORDS = {
    "migrated": "migrated",
    "withheld": "withheld by its own bail",
    "derived": "withheld: its file or repository was not fully migrated",
    "missed": "missed: no applied edit landed on it",
}


@dataclass(frozen=True)
class CaseEvidence:
    """Everything published about one case in one round."""

    round: int
    run: str | None
    case_id: str
    key: Case | None
    attempts: Sequence[Record]
    facts: Mapping[int, Artefacts | None] = field(default_factory=dict)
    patches: Mapping[int, str | None] = field(default_factory=dict)
    reviews: Mapping[int, Review | None] = field(default_factory=dict)
    #: the tails of the suites' logs by attempt, by phase (``baseline``, ``after``)
    tails: Mapping[int, Mapping[str, str | None]] = field(default_factory=dict)
    #: why no patch is shown when there is none (a licence, nothing written, a round of another harness)
    patch_note: str = "no patch was published for this attempt"


def marked_lines(diff_lines: Sequence[str], rows: set[tuple[str, int]]) -> list[int]:
    """The 1-based lines of a unified diff that stand at a key row (path, line of the old file):
    the removed line, or the unchanged context line, at that position."""
    marked: list[int] = []
    path: str | None = None
    old = 0
    for number, line in enumerate(diff_lines, start=1):
        if line.startswith("--- "):
            name = line[4:].split("\t")[0].strip()
            path = name[2:] if name.startswith("a/") else name
            continue
        if line.startswith("+++ "):
            continue
        hunk = _HUNK.match(line)
        if hunk is not None:
            old = int(hunk.group(1))
            continue
        if line.startswith(("-", " ")) and path is not None:
            if (path, old) in rows:
                marked.append(number)
            old += 1
    return marked


def _suite(result: SuiteResult) -> str:
    counts = ", ".join(f"{value} {name}" for name, value in
                       (("passed", result.passed), ("failed", result.failed), ("skipped", result.skipped))
                       if value is not None)  # fmt: skip
    return f"`{result.status}`" + (f" ({counts})" if counts else "")


def _rows(evidence: CaseEvidence, facts: Artefacts | None) -> list[str]:
    key = evidence.key
    if key is None:
        return ["The case is not in the case file any more: its key rows are unknown."]
    if key.control:
        return ["A negative control: it has no key rows, and it holds when nothing is written."]
    rows = expected_rows(key)
    if facts is None:
        listed = [
            [code(path), line, code(symbol), "not known: no graded facts were published"] for path, line, symbol in rows
        ]
        return table(["Path", "Line", "Symbol", "What happened"], ["---", "--:", "---", "---"], listed, str)
    try:
        states = case_states(key.id, rows, collect_case(facts, evidence.case_id), {})
    except ValueError:  # graded facts of version 1: no atomicity to attribute, only the row's own bail
        left = {(r["path"], r["line"], r["symbol"]): r["withheld_by"] for r in unmigrated_rows(key, facts)}
        listed = [[code(path), line, code(symbol), code(left[(path, line, symbol)]) if (path, line, symbol) in left
                   else "migrated"] for path, line, symbol in rows]  # fmt: skip
        return table(["Path", "Line", "Symbol", "What happened"], ["---", "--:", "---", "---"], listed, str)
    listed = []
    for state in states:
        what = _STATE_WORDS[state.state]
        if state.cause and state.state != "missed":
            what += f": {code(state.cause)}"
        if state.attributed:
            what += " (held by " + ", ".join(code(cause) for cause in state.attributed) + ")"
        listed.append([code(state.path), state.line, code(state.symbol), what])
    return table(["Path", "Line", "Symbol", "What happened"], ["---", "--:", "---", "---"], listed, str)


def _patch(evidence: CaseEvidence, attempt: int) -> list[str]:
    patch = evidence.patches.get(attempt)
    if not patch:
        return [f"*{text(evidence.patch_note)}.*"]
    lines, note = cut_lines(patch)
    rows = set()
    if evidence.key is not None and not evidence.key.control:
        rows = {(path, line) for path, line, _ in expected_rows(evidence.key)}
    block = fenced(lines, "diff", marked_lines(lines, rows))
    intro = "The patch obelize wrote; the lines at a key row are highlighted."
    return [intro, "", *block, *(["", f"*{text(note)}.*"] if note else [])]


def _tails(tails: Mapping[str, str | None]) -> list[str]:
    """The end of each suite's log, as it was published; where none was, where the logs are."""
    shown = [(phase, tail) for phase, tail in (("baseline", tails.get("baseline")), ("after", tails.get("after")))
             if tail]  # fmt: skip
    if not shown:
        return [
            "No log tail was published (the licence does not allow it, or no suite ran); the step logs stay in "
            "the work root of the machine that ran the case, where `obelize-bench show` reads them.",
            "",
        ]
    lines = []
    for phase, tail in shown:
        cut, note = cut_lines(tail or "", max_lines=60)
        title = "before the patch" if phase == "baseline" else "after the patch"
        lines += [f"The end of the suite's log {title}:", "", *fenced(cut), *([f"*{text(note)}.*"] if note else []), ""]
    return lines


def _review(evidence: CaseEvidence, record: Record) -> list[str]:
    review = evidence.reviews.get(record.attempt_number)
    sha = record.provenance.patch_sha256
    if review is not None:
        return [
            f"Reviewed by {text(review.reviewer or 'an unnamed reviewer')} on {text(review.reviewed_at or '--')}: "
            f"`patch_correct` {text(review.patch_correct)}, `human_edits` {text(review.human_edits)} "
            f"(patch {code((sha or '')[:12])})."
        ]
    if sha is None:
        return ["Nothing to review: the attempt wrote no patch."]
    where = f"round-{evidence.round}:{evidence.run}" if evidence.run else f"round-{evidence.round}:RUN"
    command = f"obelize-bench review {evidence.case_id} --run {where}"
    if record.attempt_number > 1:
        command += f" --attempt {record.attempt_number}"
    return ["Not reviewed yet. A reviewer reads the patch against the key rows and files the answer:", "",
            *fenced([f".venv/bin/{command}"], "sh")]  # fmt: skip


def _provenance(record: Record) -> list[str]:
    p = record.provenance
    fields = [
        ("obelize", p.obelize_version), ("obelize commit", p.obelize_commit), ("pack", p.pack),
        ("pack sha256", p.pack_sha256), ("exclude_newer", p.exclude_newer),
        ("SDK", f"{p.sdk_from} -> {p.sdk_to}" if p.sdk_from or p.sdk_to else None),
        ("Python", p.python_used or p.python), ("machine", f"{p.os} {p.machine}" if p.os or p.machine else None),
        ("run at", p.run_at),
        ("patch sha256", p.patch_sha256),
    ]  # fmt: skip
    shown = [[name, code(value)] for name, value in fields if value is not None]
    return table(["Field", "Value"], ["---", "---"], shown, str)


def _attempts(evidence: CaseEvidence) -> list[str]:
    rows = []
    for record in evidence.attempts:
        m = record.measurements
        rows.append([
            record.attempt_number, f"`{record.tier}`", text(m.unmigrated), text(m.runtime_seconds),
            code((record.provenance.patch_sha256 or "--")[:12]),
        ])  # fmt: skip
    header = ["Attempt", "Tier", "Rows unmigrated", "Runtime (s)", "Patch"]
    return ["## Attempts", "", *table(header, ["--:", "---", "--:", "--:", "---"], rows, str), ""]


def case_page(evidence: CaseEvidence) -> str:
    """The page of ``evidence``'s case: the first attempt in full, every attempt in one table."""
    record = evidence.attempts[0]
    m = record.measurements
    title = f"# {text(evidence.case_id)}, round {evidence.round}"
    why = explain_tier(record.error, m).removeprefix(f"{record.tier}: ")
    lines = [title, "", f"Tier **`{record.tier}`**: {text(why, 600)}.", ""]
    split = (
        "that is a negative control"
        if record.control
        else f"in the {record.split} split"
        if record.split
        else "no split"
    )
    run = f"run {code(evidence.run)}" if evidence.run else "an imported round"
    back = f"[Back to round {evidence.round}](../round-{evidence.round}.md)"
    lines += [f"A case {split}, published from {run}. {back}.", ""]
    if record.error is not None:
        kind = error_class(record.error.reason, record.error.step)
        lines += [f"The case errored at step {code(record.error.step)}: {code(record.error.reason)} ({kind}).", ""]
        if record.error.detail:
            shown, note = cut_lines(record.error.detail, max_lines=40)
            lines += [*fenced(shown), *([f"*{text(note)}.*"] if note else []), ""]
    if len(evidence.attempts) > 1:
        lines += _attempts(evidence)
    lines += ["## Key rows", "", *_rows(evidence, evidence.facts.get(record.attempt_number)), ""]
    lines += ["## The patch", "", *_patch(evidence, record.attempt_number), ""]
    lines += [
        "## The suites",
        "",
        f"Before the patch: {_suite(m.tests_baseline)}. After it: {_suite(m.tests_after)}. "
        f"The suite covers the change: {text(m.tests_cover_change)}.",
        "",
        *_tails(evidence.tails.get(record.attempt_number) or {}),
    ]
    lines += ["## The review", "", *_review(evidence, record), ""]
    lines += ["## Provenance", "", *_provenance(record), ""]
    return "\n".join(lines)
