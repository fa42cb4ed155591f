"""One case of one round as a page: its tier and the rule that decided it, each key row and what
happened to it, the patch with the key rows marked on it, the suites, the review, the provenance,
and the attempts side by side. Pure: it renders the case's facts (``report/case_facts.py``), the
same the results document and ``show`` read, and decides nothing of its own; ``pages.py`` reads them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from pytest_obelize_bench._util.markdown import table
from pytest_obelize_bench.grading.error_classes import error_class
from pytest_obelize_bench.grading.grade import expected_rows
from pytest_obelize_bench.grading.record import SuiteResult
from pytest_obelize_bench.grading.tiers import explain_tier
from pytest_obelize_bench.report.case_facts import REGRADED, CaseFacts
from pytest_obelize_bench.report.site.escape import code, cut_lines, fenced, text

__all__ = ["case_page", "licence", "marked_lines"]

_HUNK = re.compile(r"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_STATE_WORDS = {
    "migrated": "migrated",
    "withheld": "withheld by its own bail",
    "derived": "withheld: its file or repository was not fully migrated",
    "missed": "missed: no applied edit landed on it",
}
_COUNT_WORDS = {
    "migrated": "migrated",
    "withheld": "withheld by their own bail",
    "derived": "withheld because their file or repository was not fully migrated",
    "missed": "missed",
}
_IMPORTED = "the round was imported from another harness"


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


def licence(spdx: str | None) -> str:
    """Why a repository's code is not republished, by its licence: the one named, or none recorded."""
    return f"the licence ({code(spdx)}) does not allow it" if spdx else "the repository names no licence"


def _suite(result: SuiteResult) -> str:
    counts = ", ".join(f"{value} {name}" for name, value in
                       (("passed", result.passed), ("failed", result.failed), ("skipped", result.skipped))
                       if value is not None)  # fmt: skip
    return f"`{result.status}`" + (f" ({counts})" if counts else "")


def _rows_table(listed: list[list[object]]) -> list[str]:
    return table(["Path", "Line", "Symbol", "What happened"], ["---", "--:", "---", "---"], listed, str)


def _source(facts: CaseFacts) -> str:
    if facts.rows_source == "error_analysis":
        return (
            f"From the round's error analysis ({code(facts.collected_name)}): this round's records carry no "
            "graded facts, and the error analysis lists the case's findings, applied edits and withheld rows."
        )
    return "From the graded facts published beside the record."


def _regraded(facts: CaseFacts) -> str:
    regraded = facts.regraded
    if regraded is None:
        return ""
    disagree = facts.disagreements()
    if disagree:
        return " Graded again from them, the record's counts do not all hold: " + "; ".join(map(text, disagree)) + "."
    said = ", ".join(f"`{name}` {text(getattr(regraded, name))}" for name in REGRADED)
    return f" Graded again from them, the record's counts hold: {said}."


def _control(facts: CaseFacts) -> list[str]:
    m = facts.measurements
    rule = "A negative control: it has no key rows, and it holds when the scan reports no call site and no pin "
    rule += "and nothing is written."
    pins = f"{text(m.manifest_reported)} pins"
    if "manifest_reported" in facts.filled:
        pins += f" (counted in {code(facts.collected_name or 'the graded facts')}: the record does not count them)"
    seen = f"{text(m.detected)} call sites, {pins}, `patch_applied` {text(m.patch_applied)}"
    if facts.held is None:
        return [f"{rule} Whether it held is not known: {seen}."]
    return [f"{rule} It held: **{'yes' if facts.held else 'no'}** ({seen})."]


def _rows(facts: CaseFacts) -> list[str]:
    key = facts.key
    if key is None:
        return ["The case is not in the case file any more: its key rows are unknown."]
    if facts.record.control:
        return _control(facts)
    rows = expected_rows(key)
    if facts.rows is None:
        why = (
            "the case errored before obelize left graded facts"
            if facts.record.error is not None
            else "no graded facts were published for this attempt, and no error analysis of the round lists it"
        )
        unknown: list[list[object]] = [[code(path), line, code(symbol), "not known"] for path, line, symbol in rows]
        return [f"What happened to each of its {len(rows)} key rows is not known: {why}.", "", *_rows_table(unknown)]
    counts = facts.state_counts() or {}
    tally = ", ".join(f"{counts[state]} {words}" for state, words in _COUNT_WORDS.items())
    listed: list[list[object]] = []
    for state in facts.rows:
        what = _STATE_WORDS[state.state]
        if state.cause and state.state != "missed":
            what += f": {code(state.cause)}"
        if state.state == "missed" and state.cause:
            what += f" (the review's cause: {code(state.cause)})"
        if state.attributed:
            what += " (held by " + ", ".join(code(cause) for cause in state.attributed) + ")"
        listed.append([code(state.path), state.line, code(state.symbol), what])
    intro = f"{_source(facts)}{_regraded(facts)}"
    return [intro, "", f"{len(facts.rows)} key rows: {tally}.", "", *_rows_table(listed)]


def _applied(facts: CaseFacts) -> str:
    """The applied edits the evidence lists, file by file, when the patch itself is not shown."""
    if not facts.applied:
        return ""
    lines: dict[str, list[int]] = {}
    for path, line in facts.applied:
        lines.setdefault(path, []).append(line)
    where = "; ".join(f"{code(path)} line{'s' if len(at) > 1 else ''} {', '.join(map(str, at))}"
                      for path, at in lines.items())  # fmt: skip
    source = "the error analysis" if facts.rows_source == "error_analysis" else "the graded facts"
    return f" {source.capitalize()} lists its {len(facts.applied)} applied edits: {where}."


def _patch_missing(facts: CaseFacts) -> str:
    record = facts.record
    match facts.patch_absent:
        case "errored":
            step = record.error.step if record.error is not None else "--"
            return f"No patch: the case errored at step {code(step)} before anything was written."
        case "nothing_written":
            return "obelize wrote no patch: the record says nothing was written (`patch_applied` is false)."
        case "imported":
            said = f"obelize wrote a patch (`patch_applied` is true), but {_IMPORTED}, which published none."
            return said + _applied(facts)
        case "licence":
            said = f"The patch is not published: {licence(facts.licence)}."
            return said + _applied(facts)
        case _:
            return "obelize wrote a patch, but none was kept beside the record (one over 1 MiB is not kept)."


def _patch(facts: CaseFacts) -> list[str]:
    patch = facts.patch
    if not patch:
        return [_patch_missing(facts)]
    lines, note = cut_lines(patch)
    rows = set()
    if facts.key is not None and not facts.key.control:
        rows = {(path, line) for path, line, _ in expected_rows(facts.key)}
    block = fenced(lines, "diff", marked_lines(lines, rows))
    intro = "The patch obelize wrote; the lines at a key row are highlighted."
    return [intro, "", *block, *(["", f"*{text(note)}.*"] if note else [])]


_LOGS_KEPT = (
    "the step logs stay in the work root of the machine that ran the case, where `obelize-bench show` reads them"
)


def _tails_missing(facts: CaseFacts) -> str:
    match facts.tails_absent:
        case "no_suite":
            return "No suite ran, so there is no log tail."
        case "imported":
            return f"No log tail: {_IMPORTED}, which published none."
        case "licence":
            said = f"No log tail is published: {licence(facts.licence)}"
            return f"{said} (a log quotes the repository); {_LOGS_KEPT}."
        case _:
            return f"No log tail was kept beside the record; {_LOGS_KEPT}."


def _tails(facts: CaseFacts) -> list[str]:
    """The end of each suite's log, as it was published; where none was, why."""
    tails: Mapping[str, str] = facts.tails
    shown = [(phase, tails[phase]) for phase in ("baseline", "after") if tails.get(phase)]
    if not shown:
        return [_tails_missing(facts), ""]
    lines = []
    for phase, tail in shown:
        cut, note = cut_lines(tail, max_lines=60)
        title = "before the patch" if phase == "baseline" else "after the patch"
        lines += [f"The end of the suite's log {title}:", "", *fenced(cut), *([f"*{text(note)}.*"] if note else []), ""]
    return lines


def _review(facts: CaseFacts) -> list[str]:
    review, record = facts.review, facts.record
    sha = record.provenance.patch_sha256
    if review is not None:
        said = [
            f"Reviewed by {text(review.reviewer or 'an unnamed reviewer')} on {text(review.reviewed_at or '--')}: "
            f"`patch_correct` {text(review.patch_correct)}, `human_edits` {text(review.human_edits)} "
            f"(patch {code((sha or '')[:12])})."
        ]
        return [*said, "", f"What the reviewer checked: {text(review.why, limit=1000)}"] if review.why else said
    match facts.review_absent:
        case "nothing_written":
            return ["Nothing to review: the attempt wrote no patch."]
        case "errored":
            return ["Nothing to review: the case errored before writing a patch."]
        case "no_digest":
            why = f"{_IMPORTED}, which recorded none" if facts.imported else "this record names none"
            return [
                "Not reviewed, and no review can be filed: obelize wrote a patch, but a review answers for one "
                f"patch digest (`patch_sha256`), and {why}. `human_edits` stays null."
            ]
    where = f"round-{facts.round}:{facts.run}" if facts.run else f"round-{facts.round}:RUN"
    command = f"obelize-bench review {facts.case_id} --run {where}"
    if facts.attempt > 1:
        command += f" --attempt {facts.attempt}"
    return ["Not reviewed yet. A reviewer reads the patch against the key rows and files the answer:", "",
            *fenced([f".venv/bin/{command}"], "sh")]  # fmt: skip


def _provenance(facts: CaseFacts) -> list[str]:
    p = facts.record.provenance
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


def _attempts(attempts: Sequence[CaseFacts]) -> list[str]:
    rows = []
    for facts in attempts:
        record, m = facts.record, facts.measurements
        rows.append([
            facts.attempt, f"`{record.tier}`", text(m.unmigrated), text(m.runtime_seconds),
            code((record.provenance.patch_sha256 or "--")[:12]),
        ])  # fmt: skip
    header = ["Attempt", "Tier", "Rows unmigrated", "Runtime (s)", "Patch"]
    return ["## Attempts", "", *table(header, ["--:", "---", "--:", "--:", "---"], rows, str), ""]


def case_page(attempts: Sequence[CaseFacts]) -> str:
    """The page of a case: its first attempt in full, every attempt in one table."""
    facts = attempts[0]
    record, m = facts.record, facts.measurements
    title = f"# {text(facts.case_id)}, round {facts.round}"
    why = explain_tier(record.error, m).removeprefix(f"{record.tier}: ")
    lines = [title, "", f"Tier **`{record.tier}`**: {text(why, 600)}.", ""]
    split = (
        "that is a negative control"
        if record.control
        else f"in the {record.split} split"
        if record.split
        else "no split"
    )
    run = f"run {code(facts.run)}" if facts.run else "a round no publication note names"
    if facts.imported:
        run += f" ({_IMPORTED})"
    back = f"[Back to round {facts.round}](../round-{facts.round}.md)"
    lines += [f"A case {split}, published from {run}. {back}.", ""]
    if record.error is not None:
        kind = error_class(record.error.reason, record.error.step)
        lines += [f"The case errored at step {code(record.error.step)}: {code(record.error.reason)} ({kind}).", ""]
        if record.error.detail:
            shown, note = cut_lines(record.error.detail, max_lines=40)
            lines += [*fenced(shown), *([f"*{text(note)}.*"] if note else []), ""]
    if len(attempts) > 1:
        lines += _attempts(attempts)
    lines += ["## Key rows", "", *_rows(facts), ""]
    lines += ["## The patch", "", *_patch(facts), ""]
    lines += [
        "## The suites",
        "",
        f"Before the patch: {_suite(m.tests_baseline)}. After it: {_suite(m.tests_after)}. "
        f"The suite covers the change: {text(m.tests_cover_change)}.",
        "",
        *_tails(facts),
    ]
    lines += ["## The review", "", *_review(facts), ""]
    lines += ["## Provenance", "", *_provenance(facts), ""]
    return "\n".join(lines)
