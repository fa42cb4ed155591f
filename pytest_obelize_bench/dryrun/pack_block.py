"""The dry-run block of the results document for one pack, rendered from its published records."""

from __future__ import annotations

from collections import Counter

from pytest_obelize_bench._util.markdown import NULL, plain, table
from pytest_obelize_bench._util.stats import rate_of
from pytest_obelize_bench.dryrun.outcomes import OUTCOMES, DryRunDocument, pack_slug

#: How many bails the block lists, most frequent first.
TOP_BAILS = 10
MEANINGS: dict[str, str] = {
    "blocked": "the pack stopped before planning",
    "none": "no usage found (a comment mention or a manifest row alone is none)",
    "held": "usages found, no file would be written",
    "partial": "a file would be written and a row is withheld",
    "complete": "a file would be written and nothing is withheld",
}


def code(value: object) -> str:
    """A value read from the records (a repository's name, a bail, a blocked reason) as a code span
    that no backtick, tag or pipe in it can leave: the records are read as untrusted."""
    return f"`{plain(value)}`"


def render_dryrun_block(document: DryRunDocument) -> str:
    records = document.records
    measured = [record for record in records if record.outcome is not None]
    errored = len(records) - len(measured)
    lines = [
        f"### Fix dry run: `{document.pack}`",
        "",
        (
            f"From `results/dryrun/{pack_slug(document.pack)}/dryrun.json`: each repository of the frame at its pinned "
            f"commit through `obelize fix --pack {document.pack} --model none`, without `--apply`. The frame always "
            "runs whole. There is no answer key, so `complete` means the plan would write something, "
            "not that it is right."
        ),
        "",
    ]
    if document.draw_rule:
        lines += [f"How the frame was drawn: {plain(document.draw_rule, limit=2000)}", ""]
    if document.biases:
        lines += ["Its biases, stated with every figure below:", ""]
        lines += [f"* {plain(bias, limit=1000)}" for bias in document.biases]
        lines.append("")
    lines += table(
        ["Figure", "Value"],
        ["---", "---"],
        [
            ("Frame", f"`{document.frame}`, drawn for `{document.term}`"),
            ("Repositories", f"{len(records)}" + (f" ({errored} could not be run)" if errored else "")),
            ("Files the plans would write", sum(record.files_planned or 0 for record in measured)),
            ("obelize", document.obelize_version),
            ("Pack sha256", f"`{document.pack_sha256}`" if document.pack_sha256 else None),
            ("Run at", document.run_at),
            ("Harness commit", f"`{document.harness_commit}`" if document.harness_commit else None),
        ],
    )
    counts: Counter[str] = Counter(record.outcome for record in measured if record.outcome is not None)
    lines += ["", "#### Outcomes", "", f"n = {len(measured)} repositories with an outcome.", ""]
    lines += table(
        ["Outcome", "Repositories", "Share [95% Wilson]", "Meaning"],
        ["---", "---:", "---", "---"],
        [
            (f"`{name}`", counts.get(name, 0), rate_of(counts.get(name, 0), len(measured)).format(), MEANINGS[name])
            for name in OUTCOMES
        ],
    )
    if errored:
        reasons = Counter((record.error or "").split(":")[0] for record in records if record.outcome is None)
        lines += [
            "",
            "Could not be run: "
            + ", ".join(f"{plain(reason or 'unknown')} {n}" for reason, n in sorted(reasons.items()))
            + ".",
        ]
    blocked = Counter(record.blocked for record in measured if record.outcome == "blocked")
    lines += ["", "#### Blocked reasons", ""]
    if blocked:
        lines += table(
            ["Blocked reason", "Repositories"],
            ["---", "---:"],
            [(code(reason), n) for reason, n in sorted(blocked.items(), key=lambda item: (-item[1], str(item[0])))],
        )
    else:
        lines.append("None.")
    rows: Counter[str] = Counter()
    repos: dict[str, set[str]] = {}
    for record in measured:
        for row in record.withheld:
            rows[row.bail] += 1
            repos.setdefault(row.bail, set()).add(record.full_name)
    lines += ["", "#### Most frequent bails", ""]
    if rows:
        ranked = sorted(rows.items(), key=lambda item: (-item[1], item[0]))
        lines += table(
            ["Bail", "Withheld rows", "Repositories"],
            ["---", "---:", "---:"],
            [(code(bail), n, len(repos[bail])) for bail, n in ranked[:TOP_BAILS]],
        )
        if len(ranked) > TOP_BAILS:
            lines += ["", f"{len(ranked) - TOP_BAILS} more bails with fewer rows are in the records."]
    else:
        lines.append("No row was withheld.")
    lines += ["", "#### Repositories", ""]
    lines += table(
        ["Repository", "Band", "Outcome", "Files planned", "Withheld rows", "Blocked"],
        ["---", "---", "---", "---:", "---:", "---"],
        [
            (
                code(r.full_name),
                plain(r.band),
                code(r.outcome) if r.outcome else f"error: {plain(r.error)}",
                r.files_planned,
                len(r.withheld) if r.outcome else None,
                code(r.blocked) if r.blocked else NULL,
            )
            for r in sorted(records, key=lambda r: r.full_name.lower())
        ],
    )
    return "\n".join(lines) + "\n"


__all__ = ["render_dryrun_block"]
