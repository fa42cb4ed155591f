"""A round's block of the results document, rendered in markdown from its figures.

Pure: ``render_round_block`` computes the round's figures (``round_figures``) and renders each
section of ``BLOCK_SECTIONS`` from them, so the same inputs always give the same bytes and
``obelize-bench summarize --check`` can compare the document with a fresh render. The markers
around the block are ``records/results_document.py``'s; reading and writing files is ``round_files.py``'s.

How a new block plugs in: write its figures model (a pure function of the round's inputs, or a
field of ``RoundFigures``) and a renderer ``(RoundFigures) -> list[str]`` that returns its lines,
headed by its own ``#### ...`` title, or no lines to leave it out; append the renderer to
``BLOCK_SECTIONS``. Sections are joined by one blank line and their trailing blank lines
dropped, so a section that is left out leaves no trace. If the block has machine-readable
figures, add its part to ``summary_json.SUMMARY_PARTS`` too. The repeatability block is plugged
in this way; the error analysis, which reads reviewer files beside the case file, is appended
by ``round_files.py`` after the block.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pytest_obelize_bench._util.markdown import NULL, cell, plain, table
from pytest_obelize_bench.grading.record import TIERS, SuiteResult
from pytest_obelize_bench.report.repeat_render import render_repeatability
from pytest_obelize_bench.report.round.case_entries import SPLITS, RoundData
from pytest_obelize_bench.report.round.figures import ControlRow, Provenance, RateRow, RoundFigures, round_figures
from pytest_obelize_bench.report.round.measured_scope import measured_scope

__all__ = ["BLOCK_SECTIONS", "BlockSection", "render_round_block", "render_sections"]

NOT_RUN = "not yet run"


def _value(value: object) -> str:
    """A cell of the round block: yes/no for a flag, two decimals for a float, else ``markdown.cell``."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}"
    return cell(value)


def _table(header: Sequence[str], align: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    return table(header, align, rows, render=_value)


def _code(text: str) -> str:
    return f"`{text}`"


def _scope_label(scope: str) -> str:
    return "Cases" if scope == "cases" else "Unique patterns"


def _rate_table(rows: Sequence[RateRow]) -> list[str]:
    return _table(
        ["Scope", "Split", "n", "`verified_success`", "Rate [95% Wilson]"],
        ["---", "---", "---:", "---:", "---"],
        [(_scope_label(row.scope), row.split, row.rate.n, row.rate.k, row.rate.format()) for row in rows],
    )


def _run_dates(provenance: Provenance) -> str | None:
    first, last = provenance.run_at_first, provenance.run_at_last
    if first is None or last is None:
        return None
    first_day, last_day = first[:10], last[:10]
    return first_day if first_day == last_day else f"{first_day} to {last_day}"


def _joined(values: Sequence[str], wrap: bool = False) -> str | None:
    if not values:
        return None
    return ", ".join(_code(v) if wrap else v for v in values)


def _intro(f: RoundFigures) -> list[str]:
    if f.run:
        count = f"{f.counts.records} record" + ("" if f.counts.records == 1 else "s")
        intro = f"From the case file's keys and the {count} in `results/round-{f.round}/`."
    else:
        intro = f"Not yet run: no record in `results/round-{f.round}/`. The ceiling below is from the keys alone."
    return [f"### Round {f.round}", "", intro, *measured_scope(f)]


def _overview(f: RoundFigures) -> list[str]:
    rows: list[tuple[str, object]] = [
        ("Graded cases (n)", f.counts.graded),
        ("dev / holdout", f"{f.counts.dev} / {f.counts.holdout}"),
        ("Unique patterns (`pattern_key`)", f.counts.unique_patterns),
        ("Negative controls", f.counts.controls),
    ]
    provenance = f.provenance
    if provenance is None:
        rows.append(("Records", NOT_RUN))
        rows.append(("Provenance", NOT_RUN))
    else:
        versions = ", ".join(str(v) for v in provenance.schema_versions)
        rows.append(("Records", f"{provenance.records} (schema_version {versions})"))
        rows.append(("obelize", _joined(provenance.obelize_versions)))
        rows.append(("Pack sha256", _joined([sha[:16] + "..." for sha in provenance.pack_sha256], wrap=True)))
        rows.append(("Run on", _run_dates(provenance)))
        rows.append(("Interpreters", _joined(provenance.interpreters, wrap=True)))
        rows.append(("Sandbox", _joined(provenance.sandboxes)))
        classes = f.errors_by_class
        rows.append(("Errors", f"{classes['infrastructure']} infrastructure, {classes['tool']} tool"))
    if f.publication is not None:
        rows.append(("Published run", _code(str(f.publication.get("run")))))
        infra = int(f.publication.get("infrastructure_errors") or 0)
        if f.publication.get("with_infrastructure_errors"):
            rows.append(("Published with infrastructure errors", infra))
        for rerun in f.publication.get("reruns") or []:
            rows.append((f"Rerun at {rerun.get('at')} (`{rerun.get('kind')}`)", _rerun_text(rerun)))
    return _table(["Figure", "Value"], ["---", "---"], rows)


def _rerun_text(rerun: Any) -> str:
    """Each case a rerun ran again, with the attempt it replaced and where that attempt is kept."""
    replaced = rerun.get("replaced") or []
    parts = [
        f"{r.get('case')}: replaced {r.get('tier')}"
        + (f" ({r.get('error_class')}: {r.get('reason')})" if r.get("reason") else "")
        + f", kept as `{r.get('kept_as')}`"
        for r in replaced
    ]
    return "; ".join(parts) or ", ".join(str(case) for case in rerun.get("cases") or []) or "--"


def _ceiling_section(f: RoundFigures) -> list[str]:
    lines = [
        "#### Ceiling, from the keys alone",
        "",
        "Computed from the case file before the round runs: a case can reach `verified_success` only",
        "when its key gives it a test command that covers the change, every row is `auto` and edited",
        "by the pack, and a review answers `human_edits`. The first cap that applies is shown.",
        "",
    ]
    if not f.ceiling.cases:
        return [*lines, "_No graded case._"]
    rows: list[tuple[object, ...]] = [(_code(row.case), row.split, row.reachable, row.cap) for row in f.ceiling.cases]
    per_split = ", ".join(
        f"{split} {reached} of {graded}" for split in SPLITS for reached, graded in [f.ceiling.in_split(split)]
    )
    tally = "; ".join(f"{count} {cap}" for cap, count in f.ceiling.tally) or NULL
    rows.append(("**Total**", per_split, f"**{f.ceiling.reachable} of {f.ceiling.graded}**", tally))
    return [*lines, *_table(["Case", "Split", "Can reach `verified_success`", "Capped by"], ["---"] * 4, rows)]


def _headline_section(f: RoundFigures) -> list[str]:
    lines = [
        "#### Headline: `verified_success`",
        "",
        "n is the graded cases with a record in the split, model arm excluded. A unique pattern is",
        "one distinct `pattern_key`; it succeeds when any of its cases does, and a pattern with cases",
        "on both sides counts on both, so the split rows need not add up. `--` means n is 0.",
        "",
        *_rate_table(f.headline),
        "",
    ]
    if not f.model_arm_cases:
        lines.append("Model arm (records with `llm_tokens_in > 0`), never part of the headline: n = 0, rate `--`.")
        return lines
    return [
        *lines,
        "Model arm (records with `llm_tokens_in > 0`), never part of the headline, with its own n:",
        "",
        *_rate_table(f.model_arm),
    ]


def _tier_section(f: RoundFigures) -> list[str]:
    lines = ["#### Outcome tiers", ""]
    if not f.run:
        return [*lines, f"_No record: {NOT_RUN}._"]
    dev, holdout, total, model = (f.tiers[key] for key in ("dev", "holdout", "total", "model_arm"))
    rows: list[tuple[object, ...]] = [
        (_code(tier), dev[tier], holdout[tier], total[tier], model[tier]) for tier in TIERS
    ]
    missing = f.without_record
    if missing["total"]:
        rows.append(("no record", missing["dev"], missing["holdout"], missing["total"], NULL))
    lines.append("Graded cases; dev, holdout and total are the headline's cases, the model arm is apart.")
    lines.append("")
    lines.extend(
        _table(["Tier", "dev", "holdout", "Total", "Model arm"], ["---", "---:", "---:", "---:", "---:"], rows)
    )
    return lines


def _case_section(f: RoundFigures) -> list[str]:
    lines = ["#### Every graded case", ""]
    if not f.run:
        return [*lines, f"_No record: {NOT_RUN}._"]
    lines.append("FP is false positives, Missed is ground-truth call sites not found; `--` is a null, never 0.")
    lines.append("")
    rows: list[tuple[object, ...]] = []
    for e in f.graded:
        if e.record is None:
            rows.append((_code(e.id), e.split, NULL, "no record", *([None] * 7)))
            continue
        m = e.record.measurements
        rows.append(
            (
                _code(e.id),
                e.split,
                "model" if e.model_arm else "rules",
                _code(e.record.tier),
                m.detected,
                m.false_positive,
                m.missed_call_site,
                m.forbidden_reported,
                m.unmigrated,
                m.human_edits,
                m.runtime_seconds,
            )
        )
    header = ["Case", "Split", "Arm", "Tier", "Detected", "FP", "Missed", "Forbidden reported", "Unmigrated",
              "Human edits", "Runtime (s)"]  # fmt: skip
    return [*lines, *_table(header, ["---"] * 4 + ["---:"] * 7, rows)]


def _counts(suite: SuiteResult) -> str:
    values = (suite.passed, suite.failed, suite.skipped)
    if all(v is None for v in values):
        return NULL
    return " / ".join(NULL if v is None else str(v) for v in values)


def _suite_section(f: RoundFigures) -> list[str]:
    if not f.suites:
        return []
    rows = [
        (
            _code(row.case),
            _code(row.baseline.status),
            _counts(row.baseline),
            _code(row.after.status),
            _counts(row.after),
        )
        for row in f.suites
    ]
    return [
        "#### What the suites did",
        "",
        "Only cases whose suite ran; counts are pass / fail / skip from the junit report.",
        "",
        *_table(
            ["Case", "Baseline", "pass / fail / skip", "After", "pass / fail / skip"],
            ["---", "---", "---:", "---", "---:"],
            rows,
        ),
        "",
    ]


def _held_text(row: ControlRow) -> str:
    if not row.has_record:
        return NOT_RUN
    if row.held is None:
        if row.errored:
            return "unknown (errored)"
        return "unknown" if row.pins_counted else "unknown (pins not counted)"
    said = "yes" if row.held else "no"
    return f"{said}, pins counted in `{row.pins_from}`" if row.pins_from else said


def _control_section(f: RoundFigures) -> list[str]:
    lines = [
        "#### Negative controls",
        "",
        "Each must produce no call site and no pin, and none is in any rate above. It held when its",
        "record shows no call-site finding, no manifest (pin) finding, no applied edit and no error;",
        "a record that does not count manifest findings cannot show that it held.",
        "",
    ]
    if not f.control_rows:
        return [*lines, "_No control in this round._"]
    sources = sorted({row.pins_from for row in f.control_rows if row.pins_from})
    if sources:
        named = ", ".join(f"`{source}`" for source in sources)
        lines[-1:-1] = [
            "This round's records do not count them, so its error analysis does: the pins are counted",
            f"in {named}, which lists every finding of every case.",
        ]
    rows = [
        (
            _code(row.case),
            row.shape,
            row.detected,
            row.false_positive_edit,
            _code(row.tier) if row.tier is not None else None,
            _held_text(row),
        )
        for row in f.control_rows
    ]
    lines.extend(
        _table(
            ["Control", "Shape", "Detected", "False-positive edits", "Tier", "Held"],
            ["---", "---", "---:", "---:", "---", "---"],
            rows,
        )
    )
    held = f.controls_held
    lines.append("")
    if held.n == 0:
        lines.append("Held: `--`, no control has a record.")
    else:
        lines.append(f"Held: {held.k} of {held.n} controls with a record, {held.format()} (95% Wilson).")
    return lines


def _error_section(f: RoundFigures) -> list[str]:
    lines = ["#### What errored", ""]
    if not f.run:
        return [*lines, f"_No record: {NOT_RUN}._"]
    if not f.errors:
        return [*lines, "_No record has an error._"]
    classes = f.errors_by_class
    lines.append(
        "A crash or a timeout: the case measured nothing, and it stays in its n. Infrastructure errors "
        "(fetch, interpreter, install, network, a lost worker, the harness) are the machine's; tool "
        f"errors are obelize's. Here: {classes['infrastructure']} infrastructure, {classes['tool']} tool."
    )
    lines.append("")
    return [
        *lines,
        *_table(
            ["Case", "Step", "Reason", "Class", "Detail"],
            ["---"] * 5,
            (
                (_code(row.case), plain(row.step), plain(row.reason), row.error_class, plain(row.detail, 200))
                for row in f.errors
            ),
        ),
    ]


def _repeatability_section(f: RoundFigures) -> list[str]:
    """Only for a round run with ``--bench-repeat`` > 1; ``repeat_render`` renders it."""
    return render_repeatability(f.attempts)


BlockSection = Callable[[RoundFigures], list[str]]

#: The sections of a round's block, in order; each returns its lines (none to leave it out).
BLOCK_SECTIONS: list[BlockSection] = [
    _intro,
    _overview,
    _ceiling_section,
    _headline_section,
    _tier_section,
    _case_section,
    _suite_section,
    _control_section,
    _error_section,
    _repeatability_section,
]


def render_sections(figures: RoundFigures, sections: Sequence[BlockSection] = BLOCK_SECTIONS) -> str:
    """The sections' lines, one blank line apart, ending in one newline."""
    lines: list[str] = []
    for section in sections:
        part = section(figures)
        while part and part[-1] == "":
            part = part[:-1]
        if part:
            lines.extend([*([""] if lines else []), *part])
    return "\n".join(lines) + "\n"


def render_round_block(data: RoundData) -> str:
    """Round n's markdown block (without its markers), ending in one newline."""
    return render_sections(round_figures(data))
