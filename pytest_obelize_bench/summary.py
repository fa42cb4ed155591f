"""A round's figures, rendered: the results document's round blocks, summary.json, the terminal.

Rendering is pure: ``render_round_block`` and ``round_summary`` read a ``RoundData`` (the round's
cases from the case file, and the round's records) and nothing else, so the same inputs always
give the same bytes and ``obelize-bench summarize --check`` can compare the document with a
fresh render. Reading rounds from disk and writing the outputs is ``roundfiles.py``'s job; the
document's markers are ``document.py``'s.

A block is a list of sections: ``BLOCK_SECTIONS`` holds one renderer per section, in order, and
``SUMMARY_PARTS`` one function per top-level key that summary.json adds to the figures. A new
result block plugs in by appending its renderer (and, if it has machine-readable figures, its
part); nothing else here changes.

Rules the figures keep (the protocol's anti-inflation rules):

* a case's split and control flag come from the round's own record when it has one, so moving
  a case between dev and holdout for a later round never rewrites an earlier round's figures;
  a case with no record takes them from the case file;
* the headline counts ``verified_success`` over graded cases with a record, and beside it over
  distinct ``pattern_key`` values (a pattern succeeds when any of its cases does, and a pattern
  with cases on both sides counts on both), so forty near-identical cases are one pattern;
* a case whose record shows ``llm_tokens_in > 0`` belongs to the model arm, which is reported
  beside the headline with its own n and never inside it;
* every rate carries its n, its split and its 95% Wilson interval; a null prints ``--``, never 0;
* the ceiling comes from the keys alone, so it can be published before the round runs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_obelize_bench.cases import Case
from pytest_obelize_bench.document import DOCUMENT_NAME
from pytest_obelize_bench.error_classes import ERROR_CLASSES, error_class
from pytest_obelize_bench.record import TIERS, Record
from pytest_obelize_bench.repeatability import AttemptFacts, round_repeatability
from pytest_obelize_bench.stats import Rate, rate_of
from pytest_obelize_bench.tiers import ceiling, control_held

__all__ = [
    "BLOCK_SECTIONS",
    "SUMMARY_PARTS",
    "RoundData",
    "render_round_block",
    "round_summary",
    "terminal_lines",
]

SUCCESS = "verified_success"
SPLITS = ("dev", "holdout")
NULL = "--"
NOT_RUN = "not yet run"
#: The cap shown for a record whose case has no row in the case file (it has no key to read).
CAP_NO_KEY = "no row in the case file"


@dataclass
class RoundData:
    """One round's inputs: the case file's rows (cases and controls) and the round's records.

    ``publication`` is the round's publication note (which run, how many infrastructure errors
    it was published with), or None for records no publication describes.
    """

    round: int
    cases: list[Case]
    records: dict[str, Record]
    #: Every attempt of every case, repeats included (only ``--bench-repeat`` gives more than one).
    attempts: list[AttemptFacts] = field(default_factory=list)
    publication: Mapping[str, Any] | None = field(default=None)


# -- the round's view of each case ----------------------------------------------------------


@dataclass(frozen=True)
class _Entry:
    """One case as this round sees it: its key (if any), its record (if any), and where it sits."""

    id: str
    case: Case | None
    record: Record | None
    control: bool
    split: str | None
    pattern: tuple[str, ...]

    @property
    def model_arm(self) -> bool:
        tokens = self.record.measurements.llm_tokens_in if self.record else None
        return tokens is not None and tokens > 0

    @property
    def won(self) -> bool:
        return self.record is not None and self.record.tier == SUCCESS


def _pattern_of(case_id: str, case: Case | None) -> tuple[str, ...]:
    """The de-duplication key: the sorted set of the key's symbols.

    A case with no key, or an empty ``pattern_key``, cannot be grouped with anything, so it is
    a pattern of its own (a symbol never contains a space, so the stand-in cannot collide).
    """
    if case is not None and case.pattern_key:
        return tuple(sorted(set(case.pattern_key)))
    return (f"(no pattern_key: {case_id})",)


def _entries(data: RoundData) -> list[_Entry]:
    cases = {case.id: case for case in data.cases}
    entries = []
    for case_id in sorted(set(cases) | set(data.records)):
        case, record = cases.get(case_id), data.records.get(case_id)
        if record is not None:
            control, split = record.control, record.split
        else:
            assert case is not None
            control, split = case.control, case.split
        entries.append(_Entry(case_id, case, record, control, split, _pattern_of(case_id, case)))
    return entries


def _in_split(entry: _Entry, split: str | None) -> bool:
    return split is None or entry.split == split


def _round_ceiling(entry: _Entry, round_number: int) -> str | None:
    """The key's cap as of this round: a retirement decided in a later round does not apply."""
    if entry.case is None:
        return CAP_NO_KEY
    update: dict[str, Any] = {"control": entry.control}
    if entry.case.retired is not None and entry.case.retired.round > round_number:
        update["retired"] = None
    return ceiling(entry.case.model_copy(update=update))


def _case_rate(entries: Iterable[_Entry], split: str | None) -> Rate:
    members = [e for e in entries if _in_split(e, split)]
    return rate_of(sum(e.won for e in members), len(members))


def _pattern_rate(entries: Iterable[_Entry], split: str | None) -> Rate:
    """Patterns over the members in the split; a pattern wins when any member does."""
    won: dict[tuple[str, ...], bool] = {}
    for entry in entries:
        if _in_split(entry, split):
            won[entry.pattern] = won.get(entry.pattern, False) or entry.won
    return rate_of(sum(won.values()), len(won))


def _rate_rows(entries: Sequence[_Entry]) -> list[tuple[str, str, Rate]]:
    rows = []
    for scope, function in (("cases", _case_rate), ("patterns", _pattern_rate)):
        for split in (None, *SPLITS):
            rows.append((scope, split or "all", function(entries, split)))
    return rows


def _control_held(record: Record | None) -> bool | None:
    """Whether a negative control held (``tiers.control_held``); None without a record."""
    if record is None:
        return None
    return control_held(record.error, record.measurements)


# -- the figures: computed once, rendered three ways ----------------------------------------


@dataclass(frozen=True)
class _Figures:
    round: int
    entries: list[_Entry]
    graded: list[_Entry]
    controls: list[_Entry]
    headline_pop: list[_Entry]
    model_pop: list[_Entry]
    headline: list[tuple[str, str, Rate]]
    model_arm: list[tuple[str, str, Rate]]
    caps: dict[str, str | None]
    records: list[Record]
    publication: Mapping[str, Any] | None = None

    @property
    def run(self) -> bool:
        return bool(self.records)


def _figures(data: RoundData) -> _Figures:
    entries = _entries(data)
    graded = [e for e in entries if not e.control]
    controls = [e for e in entries if e.control]
    with_record = [e for e in graded if e.record is not None]
    headline_pop = [e for e in with_record if not e.model_arm]
    model_pop = [e for e in with_record if e.model_arm]
    return _Figures(
        round=data.round,
        entries=entries,
        graded=graded,
        controls=controls,
        headline_pop=headline_pop,
        model_pop=model_pop,
        headline=_rate_rows(headline_pop),
        model_arm=_rate_rows(model_pop),
        caps={e.id: _round_ceiling(e, data.round) for e in graded},
        records=[data.records[key] for key in sorted(data.records)],
        publication=data.publication,
    )


def _tier_counts(entries: Iterable[_Entry]) -> dict[str, int]:
    counts: Counter[str] = Counter(e.record.tier for e in entries if e.record is not None)
    return {tier: counts.get(tier, 0) for tier in TIERS}


def _tally(caps: Iterable[str | None]) -> list[tuple[str, int]]:
    counts = Counter(cap for cap in caps if cap is not None)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def _provenance(records: Sequence[Record]) -> dict[str, Any] | None:
    if not records:
        return None

    def distinct(values: Iterable[str | None]) -> list[str]:
        return sorted({value for value in values if value})

    run_at = distinct(r.provenance.run_at for r in records)
    return {
        "records": len(records),
        "schema_versions": sorted({r.schema_version for r in records}),
        "obelize_versions": distinct(r.provenance.obelize_version for r in records),
        "pack_sha256": distinct(r.provenance.pack_sha256 for r in records),
        "run_at_first": run_at[0] if run_at else None,
        "run_at_last": run_at[-1] if run_at else None,
        "interpreters": distinct(r.provenance.python_used or r.provenance.python for r in records),
        # A record that names no sandbox ran without one (round 1's harness had none).
        "sandboxes": distinct(r.provenance.sandbox or "none" for r in records),
    }


# -- markdown helpers -------------------------------------------------------------------------


def _cell(value: object) -> str:
    """A table cell: null is ``--``; pipes and line breaks cannot break the table."""
    if value is None:
        return NULL
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}"
    text = str(value)
    return " ".join(text.replace("|", "\\|").split())


def _code(text: str) -> str:
    return f"`{text}`"


def _table(header: Sequence[str], align: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines.extend("| " + " | ".join(_cell(value) for value in row) + " |" for row in rows)
    return lines


def _scope_label(scope: str) -> str:
    return "Cases" if scope == "cases" else "Unique patterns"


def _rate_table(rows: Sequence[tuple[str, str, Rate]]) -> list[str]:
    return _table(
        ["Scope", "Split", "n", "`verified_success`", "Rate [95% Wilson]"],
        ["---", "---", "---:", "---:", "---"],
        [(_scope_label(scope), split, rate.n, rate.k, rate.format()) for scope, split, rate in rows],
    )


def _run_dates(provenance: Mapping[str, Any]) -> str | None:
    first, last = provenance["run_at_first"], provenance["run_at_last"]
    if first is None or last is None:
        return None
    first_day, last_day = first[:10], last[:10]
    return first_day if first_day == last_day else f"{first_day} to {last_day}"


def _joined(values: Sequence[str], wrap: bool = False) -> str | None:
    if not values:
        return None
    return ", ".join(_code(v) if wrap else v for v in values)


def _overview(f: _Figures) -> list[str]:
    dev = sum(e.split == "dev" for e in f.graded)
    holdout = sum(e.split == "holdout" for e in f.graded)
    rows: list[tuple[str, object]] = [
        ("Graded cases (n)", len(f.graded)),
        ("dev / holdout", f"{dev} / {holdout}"),
        ("Unique patterns (`pattern_key`)", len({e.pattern for e in f.graded})),
        ("Negative controls", len(f.controls)),
    ]
    provenance = _provenance(f.records)
    if provenance is None:
        rows.append(("Records", NOT_RUN))
        rows.append(("Provenance", NOT_RUN))
    else:
        versions = ", ".join(str(v) for v in provenance["schema_versions"])
        rows.append(("Records", f"{provenance['records']} (schema_version {versions})"))
        rows.append(("obelize", _joined(provenance["obelize_versions"])))
        rows.append(("Pack sha256", _joined([sha[:16] + "..." for sha in provenance["pack_sha256"]], wrap=True)))
        rows.append(("Run on", _run_dates(provenance)))
        rows.append(("Interpreters", _joined(provenance["interpreters"], wrap=True)))
        rows.append(("Sandbox", _joined(provenance["sandboxes"])))
        classes = _error_classes(f)
        rows.append(("Errors", f"{classes['infrastructure']} infrastructure, {classes['tool']} tool"))
    if f.publication is not None:
        rows.append(("Published run", _code(str(f.publication.get("run")))))
        infra = int(f.publication.get("infrastructure_errors") or 0)
        if f.publication.get("with_infrastructure_errors"):
            rows.append(("Published with infrastructure errors", infra))
    return _table(["Figure", "Value"], ["---", "---"], rows)


def _ceiling_section(f: _Figures) -> list[str]:
    lines = [
        "#### Ceiling, from the keys alone",
        "",
        "Computed from the case file before the round runs: a case can reach `verified_success` only",
        "when its key gives it a test command that covers the change, every row is `auto` and edited",
        "by the pack, and a review answers `human_edits`. The first cap that applies is shown.",
        "",
    ]
    if not f.graded:
        return [*lines, "_No graded case._"]
    rows: list[tuple[object, ...]] = []
    for entry in f.graded:
        cap = f.caps[entry.id]
        rows.append((_code(entry.id), entry.split, cap is None, cap))
    reachable = sum(cap is None for cap in f.caps.values())
    per_split = ", ".join(
        f"{split} {sum(f.caps[e.id] is None for e in f.graded if e.split == split)}"
        f" of {sum(e.split == split for e in f.graded)}"
        for split in SPLITS
    )
    tally = "; ".join(f"{count} {cap}" for cap, count in _tally(f.caps.values())) or NULL
    rows.append(("**Total**", per_split, f"**{reachable} of {len(f.graded)}**", tally))
    return [*lines, *_table(["Case", "Split", "Can reach `verified_success`", "Capped by"], ["---"] * 4, rows)]


def _headline_section(f: _Figures) -> list[str]:
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
    if not f.model_pop:
        lines.append("Model arm (records with `llm_tokens_in > 0`), never part of the headline: n = 0, rate `--`.")
        return lines
    return [
        *lines,
        "Model arm (records with `llm_tokens_in > 0`), never part of the headline, with its own n:",
        "",
        *_rate_table(f.model_arm),
    ]


def _tier_section(f: _Figures) -> list[str]:
    lines = ["#### Outcome tiers", ""]
    if not f.run:
        return [*lines, f"_No record: {NOT_RUN}._"]
    dev = _tier_counts(e for e in f.headline_pop if e.split == "dev")
    holdout = _tier_counts(e for e in f.headline_pop if e.split == "holdout")
    total = _tier_counts(f.headline_pop)
    model = _tier_counts(f.model_pop)
    rows: list[tuple[object, ...]] = [
        (_code(tier), dev[tier], holdout[tier], total[tier], model[tier]) for tier in TIERS
    ]
    missing = [e for e in f.graded if e.record is None]
    if missing:
        rows.append(
            (
                "no record",
                sum(e.split == "dev" for e in missing),
                sum(e.split == "holdout" for e in missing),
                len(missing),
                NULL,
            )
        )
    lines.append("Graded cases; dev, holdout and total are the headline's cases, the model arm is apart.")
    lines.append("")
    lines.extend(
        _table(["Tier", "dev", "holdout", "Total", "Model arm"], ["---", "---:", "---:", "---:", "---:"], rows)
    )
    return lines


def _case_section(f: _Figures) -> list[str]:
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
    header = [
        "Case",
        "Split",
        "Arm",
        "Tier",
        "Detected",
        "FP",
        "Missed",
        "Forbidden reported",
        "Unmigrated",
        "Human edits",
        "Runtime (s)",
    ]
    return [*lines, *_table(header, ["---"] * 4 + ["---:"] * 7, rows)]


def _counts(suite: Any) -> str:
    values = (suite.passed, suite.failed, suite.skipped)
    if all(v is None for v in values):
        return NULL
    return " / ".join(NULL if v is None else str(v) for v in values)


def _suite_section(f: _Figures) -> list[str]:
    ran = [
        e
        for e in f.entries
        if e.record is not None
        and (
            e.record.measurements.tests_baseline.status != "not_run"
            or e.record.measurements.tests_after.status != "not_run"
        )
    ]
    if not ran:
        return []
    rows = []
    for e in ran:
        m = e.record.measurements  # type: ignore[union-attr]
        rows.append(
            (
                _code(e.id),
                _code(m.tests_baseline.status),
                _counts(m.tests_baseline),
                _code(m.tests_after.status),
                _counts(m.tests_after),
            )
        )
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


def _held_rate(f: _Figures) -> Rate:
    with_record = [e for e in f.controls if e.record is not None]
    return rate_of(sum(_control_held(e.record) is True for e in with_record), len(with_record))


def _held_text(held: bool | None, record: Record | None) -> str:
    if record is None:
        return NOT_RUN
    if held is None:
        if record.error is not None:
            return "unknown (errored)"
        return "unknown (pins not counted)" if record.measurements.manifest_reported is None else "unknown"
    return "yes" if held else "no"


def _control_section(f: _Figures) -> list[str]:
    lines = [
        "#### Negative controls",
        "",
        "Each must produce no call site and no pin, and none is in any rate above. It held when its",
        "record shows no call-site finding, no manifest (pin) finding, no applied edit and no error;",
        "a record that does not count manifest findings cannot show that it held.",
        "",
    ]
    if not f.controls:
        return [*lines, "_No control in this round._"]
    rows = []
    for e in f.controls:
        m = e.record.measurements if e.record is not None else None
        rows.append(
            (
                _code(e.id),
                e.case.control_shape if e.case is not None else None,
                m.detected if m else None,
                m.false_positive_edit if m else None,
                _code(e.record.tier) if e.record else None,
                _held_text(_control_held(e.record), e.record),
            )
        )
    lines.extend(
        _table(
            ["Control", "Shape", "Detected", "False-positive edits", "Tier", "Held"],
            ["---", "---", "---:", "---:", "---", "---"],
            rows,
        )
    )
    held = _held_rate(f)
    lines.append("")
    if held.n == 0:
        lines.append("Held: `--`, no control has a record.")
    else:
        lines.append(f"Held: {held.k} of {held.n} controls with a record, {held.format()} (95% Wilson).")
    return lines


def _error_rows(f: _Figures) -> list[tuple[str, str, str, str, str]]:
    return [
        (
            e.id,
            e.record.error.step,
            e.record.error.reason,
            error_class(e.record.error.reason, e.record.error.step),
            e.record.error.detail,
        )
        for e in f.entries
        if e.record is not None and e.record.error is not None
    ]


def _error_classes(f: _Figures) -> dict[str, int]:
    """Errors per class over every record (controls included): both stay in their n."""
    counts = Counter(row[3] for row in _error_rows(f))
    return {name: counts.get(name, 0) for name in ERROR_CLASSES}


def _error_section(f: _Figures) -> list[str]:
    lines = ["#### What errored", ""]
    if not f.run:
        return [*lines, f"_No record: {NOT_RUN}._"]
    rows = _error_rows(f)
    if not rows:
        return [*lines, "_No record has an error._"]
    classes = _error_classes(f)
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
            ((_code(c), s, r, k, d) for c, s, r, k, d in rows),
        ),
    ]


def _intro(f: _Figures) -> list[str]:
    if f.run:
        count = f"{len(f.records)} record" + ("" if len(f.records) == 1 else "s")
        intro = f"From the case file's keys and the {count} in `results/round-{f.round}/`."
    else:
        intro = f"Not yet run: no record in `results/round-{f.round}/`. The ceiling below is from the keys alone."
    return [f"### Round {f.round}", "", intro]


BlockSection = Callable[[_Figures], list[str]]

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
]


def render_round_block(data: RoundData) -> str:
    """Round n's markdown block (without its markers), ending in one newline."""
    f = _figures(data)
    lines: list[str] = []
    for section in BLOCK_SECTIONS:
        part = section(f)
        while part and part[-1] == "":
            part = part[:-1]
        if part:
            lines.extend([*([""] if lines else []), *part])
    # Repeats: a block of their own (repeat_render.py), only for a round run with K > 1.
    from pytest_obelize_bench.repeat_render import render_repeatability

    repeat_lines = render_repeatability(data.attempts)
    if repeat_lines:
        lines.extend(["", *repeat_lines])
    return "\n".join(lines) + "\n"


SummaryPart = Callable[[_Figures], Any]

#: Extra top-level keys of summary.json, each computed from the figures (result blocks add theirs).
SUMMARY_PARTS: list[tuple[str, SummaryPart]] = []


def round_summary(data: RoundData) -> dict[str, Any]:
    """The figures of ``render_round_block`` as JSON-ready data (``results/round-N/summary.json``)."""
    f = _figures(data)

    def rate_rows(rows: Sequence[tuple[str, str, Rate]]) -> list[dict[str, Any]]:
        return [{"scope": scope, "split": split, **rate.as_dict()} for scope, split, rate in rows]

    tiers = {
        "dev": _tier_counts(e for e in f.headline_pop if e.split == "dev"),
        "holdout": _tier_counts(e for e in f.headline_pop if e.split == "holdout"),
        "total": _tier_counts(f.headline_pop),
        "model_arm": _tier_counts(f.model_pop),
    }
    ceiling_cases = [
        {"case": e.id, "split": e.split, "reachable": f.caps[e.id] is None, "cap": f.caps[e.id]} for e in f.graded
    ]
    repeats = round_repeatability(data.attempts)
    summary: dict[str, Any] = {
        **({"repeatability": repeats.as_dict()} if repeats.repeated else {}),
        "round": f.round,
        "generated_by": "obelize-bench summarize",
        "status": "run" if f.run else "not_run",
        "counts": {
            "graded": len(f.graded),
            "dev": sum(e.split == "dev" for e in f.graded),
            "holdout": sum(e.split == "holdout" for e in f.graded),
            "unique_patterns": len({e.pattern for e in f.graded}),
            "controls": len(f.controls),
            "records": len(f.records),
            "graded_with_record": len(f.headline_pop) + len(f.model_pop),
            "graded_without_record": sum(e.record is None for e in f.graded),
            "headline_cases": len(f.headline_pop),
            "model_arm_cases": len(f.model_pop),
        },
        "tiers": tiers,
        "headline": rate_rows(f.headline),
        "model_arm": rate_rows(f.model_arm),
        "ceiling": {
            "reachable": sum(c["reachable"] for c in ceiling_cases),
            "graded": len(ceiling_cases),
            "tally": dict(_tally(f.caps.values())),
            "cases": ceiling_cases,
        },
        "controls": {
            "held": _held_rate(f).as_dict(),
            "cases": [
                {
                    "case": e.id,
                    "shape": e.case.control_shape if e.case is not None else None,
                    "detected": e.record.measurements.detected if e.record else None,
                    "false_positive_edit": e.record.measurements.false_positive_edit if e.record else None,
                    "tier": e.record.tier if e.record else None,
                    "held": _control_held(e.record),
                }
                for e in f.controls
            ],
        },
        "errors": [{"case": c, "step": s, "reason": r, "class": k, "detail": d} for c, s, r, k, d in _error_rows(f)],
        "errors_by_class": _error_classes(f),
        "provenance": _provenance(f.records),
        "publication": None if f.publication is None else dict(f.publication),
    }
    for key, part in SUMMARY_PARTS:
        summary[key] = part(f)
    return summary


# -- the terminal and the comparison ----------------------------------------------------------------


def terminal_lines(data: RoundData, results_dir: Path | None = None, logs_root: Path | None = None) -> list[str]:
    """The short end-of-round section: headline with intervals, tiers, ceiling, where things are.

    The paths are printed only when given: a run that was not published has no results folder.
    """
    f = _figures(data)
    dev = sum(e.split == "dev" for e in f.graded)
    holdout = sum(e.split == "holdout" for e in f.graded)
    lines = [
        (
            f"round {f.round}: {len(f.records)} records; {len(f.graded)} graded cases "
            f"({dev} dev / {holdout} holdout), negative controls: {len(f.controls)}"
        ),
        "verified_success (headline, model arm excluded):",
    ]
    for scope, split, rate in f.headline:
        label = "cases" if scope == "cases" else "patterns"
        lines.append(f"  {label:<9} {split:<8} n={rate.n:<4} {rate.k:>4}  {rate.format()}")
    model = f.model_arm[0][2]
    lines.append(f"model arm (never in the headline): n={model.n} cases, {model.k} verified_success  {model.format()}")
    tiers = _tier_counts(f.headline_pop)
    lines.append("tiers: " + ", ".join(f"{tier} {tiers[tier]}" for tier in TIERS))
    classes = _error_classes(f)
    if any(classes.values()):
        lines.append(f"errors: {classes['infrastructure']} infrastructure, {classes['tool']} tool (both stay in n)")
    reachable = sum(cap is None for cap in f.caps.values())
    tally = "; ".join(f"{count} {cap}" for cap, count in _tally(f.caps.values()))
    lines.append(
        f"ceiling: {reachable} of {len(f.graded)} can reach verified_success" + (f" ({tally})" if tally else "")
    )
    if results_dir is not None:
        lines.append(f"results: {Path(results_dir) / f'round-{f.round}'}")
        lines.append(f"summary: {Path(results_dir) / DOCUMENT_NAME}")
    if logs_root is not None:
        lines.append(f"logs:    {logs_root}")
    return lines
