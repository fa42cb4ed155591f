"""A round's figures, computed once from its inputs: what the block, summary.json and the terminal show.

Pure: ``round_figures`` reads a ``RoundData`` (the round's cases from the case file, its records,
its attempts and its publication note) and nothing else, so the same inputs always give the same
figures. Every renderer (``block_markdown``, ``summary_json``, ``terminal_lines``, ``run_compare``) reads
these figures and computes none of its own, and tests can assert on figures instead of markdown.

Rules the figures keep (the protocol's anti-inflation rules):

* a case's split and control flag come from the round's own record when it has one, so moving
  a case between dev and holdout for a later round never rewrites an earlier round's figures;
  a case with no record takes them from the case file;
* the headline counts ``verified_success`` over graded cases with a record, and beside it over
  distinct ``pattern_key`` values (a pattern succeeds when any of its cases does, and a pattern
  with cases on both sides counts on both), so forty near-identical cases are one pattern;
* a case whose record shows ``llm_tokens_in > 0`` belongs to the model arm, which is reported
  beside the headline with its own n and never inside it;
* every rate carries its n, its split and its 95% Wilson interval (a ``Rate``);
* the ceiling comes from the keys alone, so it can be published before the round runs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from pytest_obelize_bench._util.stats import Rate, rate_of
from pytest_obelize_bench.grading.error_classes import ERROR_CLASSES, error_class
from pytest_obelize_bench.grading.record import TIERS, Record, SuiteResult
from pytest_obelize_bench.grading.repeatability import AttemptFacts, RoundRepeatability, round_repeatability
from pytest_obelize_bench.grading.tiers import control_held
from pytest_obelize_bench.report.round.case_entries import (
    SPLITS,
    CaseEntry,
    RoundData,
    case_entries,
    in_split,
    round_ceiling,
)

__all__ = [
    "Ceiling",
    "CeilingRow",
    "ControlRow",
    "Counts",
    "ErrorRow",
    "Provenance",
    "RateRow",
    "RoundFigures",
    "SuiteRow",
    "round_figures",
]

# -- the figures' parts ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RateRow:
    """One rate of the headline or the model arm: over cases or unique patterns, in a split."""

    scope: str  # "cases" or "patterns"
    split: str  # "all", "dev" or "holdout"
    rate: Rate


def _case_rate(entries: Iterable[CaseEntry], split: str | None) -> Rate:
    members = [e for e in entries if in_split(e, split)]
    return rate_of(sum(e.won for e in members), len(members))


def _pattern_rate(entries: Iterable[CaseEntry], split: str | None) -> Rate:
    """Patterns over the members in the split; a pattern wins when any member does."""
    won: dict[tuple[str, ...], bool] = {}
    for entry in entries:
        if in_split(entry, split):
            won[entry.pattern] = won.get(entry.pattern, False) or entry.won
    return rate_of(sum(won.values()), len(won))


def _rate_rows(entries: Sequence[CaseEntry]) -> tuple[RateRow, ...]:
    rows = []
    for scope, function in (("cases", _case_rate), ("patterns", _pattern_rate)):
        for split in (None, *SPLITS):
            rows.append(RateRow(scope, split or "all", function(entries, split)))
    return tuple(rows)


@dataclass(frozen=True)
class Counts:
    """How many of each; the field names are summary.json's ``counts`` keys."""

    graded: int
    dev: int
    holdout: int
    unique_patterns: int
    controls: int
    records: int
    graded_with_record: int
    graded_without_record: int
    headline_cases: int
    model_arm_cases: int


@dataclass(frozen=True)
class CeilingRow:
    case: str
    split: str | None
    #: The first cap that applies, or None when the key lets the case reach ``verified_success``.
    cap: str | None

    @property
    def reachable(self) -> bool:
        return self.cap is None


@dataclass(frozen=True)
class Ceiling:
    """The keys' ceiling over the graded cases, with the caps counted most frequent first."""

    cases: tuple[CeilingRow, ...]
    tally: tuple[tuple[str, int], ...]

    @property
    def reachable(self) -> int:
        return sum(row.reachable for row in self.cases)

    @property
    def graded(self) -> int:
        return len(self.cases)

    def in_split(self, split: str) -> tuple[int, int]:
        """(reachable, graded) in one split."""
        rows = [row for row in self.cases if row.split == split]
        return sum(row.reachable for row in rows), len(rows)


def _tally(caps: Iterable[str | None]) -> tuple[tuple[str, int], ...]:
    counts = Counter(cap for cap in caps if cap is not None)
    return tuple(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


@dataclass(frozen=True)
class SuiteRow:
    """A case whose suite ran, before or after the fix (controls included)."""

    case: str
    baseline: SuiteResult
    after: SuiteResult


@dataclass(frozen=True)
class ControlRow:
    case: str
    shape: str | None
    detected: int | None
    false_positive_edit: int | None
    tier: str | None
    #: ``tiers.control_held``: None without a record, or when the record cannot show it.
    held: bool | None
    has_record: bool
    errored: bool
    #: Whether the record counts manifest (pin) findings at all.
    pins_counted: bool
    #: Where the pins were counted when the record does not count them itself (the round's
    #: collected error analysis, ``results/errors/round-N.json``), or None.
    pins_from: str | None = None


def _pins_from(entry: CaseEntry) -> str | None:
    facts = entry.facts
    if facts is None or "manifest_reported" not in facts.filled:
        return None
    return facts.collected_name or "the graded facts beside the record"


def _control_row(entry: CaseEntry) -> ControlRow:
    record = entry.record
    m = record.measurements if record is not None else None
    return ControlRow(
        case=entry.id,
        shape=entry.case.control_shape if entry.case is not None else None,
        detected=m.detected if m else None,
        false_positive_edit=m.false_positive_edit if m else None,
        tier=record.tier if record else None,
        held=None if record is None else control_held(record.error, record.measurements),
        has_record=record is not None,
        errored=record is not None and record.error is not None,
        pins_counted=m is not None and m.manifest_reported is not None,
        pins_from=_pins_from(entry),
    )


@dataclass(frozen=True)
class ErrorRow:
    case: str
    step: str
    reason: str
    error_class: str
    detail: str


def _error_rows(entries: Iterable[CaseEntry]) -> tuple[ErrorRow, ...]:
    rows = []
    for e in entries:
        if e.record is None or e.record.error is None:
            continue
        error = e.record.error
        rows.append(ErrorRow(e.id, error.step, error.reason, error_class(error.reason, error.step), error.detail))
    return tuple(rows)


@dataclass(frozen=True)
class Provenance:
    """What produced the records: versions, pack, dates, interpreters and sandboxes (each distinct, sorted)."""

    records: int
    schema_versions: tuple[int, ...]
    obelize_versions: tuple[str, ...]
    pack_sha256: tuple[str, ...]
    run_at_first: str | None
    run_at_last: str | None
    interpreters: tuple[str, ...]
    #: A record that names no sandbox ran without one (round 1's harness had none): ``none``.
    sandboxes: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {key: list(value) if isinstance(value, tuple) else value for key, value in asdict(self).items()}


def _provenance(records: Sequence[Record]) -> Provenance | None:
    if not records:
        return None

    def distinct(values: Iterable[str | None]) -> tuple[str, ...]:
        return tuple(sorted({value for value in values if value}))

    run_at = distinct(r.provenance.run_at for r in records)
    return Provenance(
        records=len(records),
        schema_versions=tuple(sorted({r.schema_version for r in records})),
        obelize_versions=distinct(r.provenance.obelize_version for r in records),
        pack_sha256=distinct(r.provenance.pack_sha256 for r in records),
        run_at_first=run_at[0] if run_at else None,
        run_at_last=run_at[-1] if run_at else None,
        interpreters=distinct(r.provenance.python_used or r.provenance.python for r in records),
        sandboxes=distinct(r.provenance.sandbox or "none" for r in records),
    )


def _tier_counts(entries: Iterable[CaseEntry]) -> dict[str, int]:
    counts: Counter[str] = Counter(e.record.tier for e in entries if e.record is not None)
    return {tier: counts.get(tier, 0) for tier in TIERS}


def _split_counts(entries: Sequence[CaseEntry]) -> dict[str, int]:
    return {**{split: sum(e.split == split for e in entries) for split in SPLITS}, "total": len(entries)}


# -- the figures ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RoundFigures:
    """Everything a round's block, summary.json and terminal lines show, computed once."""

    round: int
    #: Every case of the round, sorted by id; ``graded`` and ``controls`` split them by the control flag.
    entries: tuple[CaseEntry, ...]
    graded: tuple[CaseEntry, ...]
    controls: tuple[CaseEntry, ...]
    #: Graded cases with a record, outside and inside the model arm.
    headline_cases: tuple[CaseEntry, ...]
    model_arm_cases: tuple[CaseEntry, ...]
    counts: Counts
    headline: tuple[RateRow, ...]
    model_arm: tuple[RateRow, ...]
    #: Tier counts of graded cases with a record: ``dev``, ``holdout``, ``total`` (the headline's) and ``model_arm``.
    tiers: Mapping[str, Mapping[str, int]]
    #: Graded cases with no record: ``dev``, ``holdout`` and ``total``.
    without_record: Mapping[str, int]
    ceiling: Ceiling
    suites: tuple[SuiteRow, ...]
    control_rows: tuple[ControlRow, ...]
    #: Controls that held, over the controls with a record.
    controls_held: Rate
    errors: tuple[ErrorRow, ...]
    #: Errors per class over every record (controls included): both stay in their n.
    errors_by_class: Mapping[str, int]
    provenance: Provenance | None
    publication: Mapping[str, Any] | None
    attempts: tuple[AttemptFacts, ...]
    repeatability: RoundRepeatability

    @property
    def run(self) -> bool:
        """Whether the round has any record."""
        return self.counts.records > 0

    def headline_rate(self, scope: str, split: str) -> Rate:
        """The headline's rate for ``scope`` (cases or patterns) and ``split`` (all, dev or holdout)."""
        return next(row.rate for row in self.headline if (row.scope, row.split) == (scope, split))


def _suite_rows(entries: Iterable[CaseEntry]) -> tuple[SuiteRow, ...]:
    rows = []
    for e in entries:
        if e.record is None:
            continue
        m = e.record.measurements
        if m.tests_baseline.status != "not_run" or m.tests_after.status != "not_run":
            rows.append(SuiteRow(e.id, m.tests_baseline, m.tests_after))
    return tuple(rows)


def round_figures(data: RoundData) -> RoundFigures:
    """The round's figures."""
    entries = tuple(case_entries(data))
    graded = tuple(e for e in entries if not e.control)
    controls = tuple(e for e in entries if e.control)
    with_record = [e for e in graded if e.record is not None]
    headline_cases = tuple(e for e in with_record if not e.model_arm)
    model_arm_cases = tuple(e for e in with_record if e.model_arm)
    records = [data.records[key] for key in sorted(data.records)]
    caps = tuple(CeilingRow(e.id, e.split, round_ceiling(e, data.round)) for e in graded)
    controls_with_record = [e for e in controls if e.record is not None]
    control_rows = tuple(_control_row(e) for e in controls)
    errors = _error_rows(entries)
    by_class = Counter(row.error_class for row in errors)
    without_record = _split_counts([e for e in graded if e.record is None])
    return RoundFigures(
        round=data.round,
        entries=entries,
        graded=graded,
        controls=controls,
        headline_cases=headline_cases,
        model_arm_cases=model_arm_cases,
        counts=Counts(
            graded=len(graded),
            dev=sum(e.split == "dev" for e in graded),
            holdout=sum(e.split == "holdout" for e in graded),
            unique_patterns=len({e.pattern for e in graded}),
            controls=len(controls),
            records=len(records),
            graded_with_record=len(with_record),
            graded_without_record=without_record["total"],
            headline_cases=len(headline_cases),
            model_arm_cases=len(model_arm_cases),
        ),
        headline=_rate_rows(headline_cases),
        model_arm=_rate_rows(model_arm_cases),
        tiers={
            "dev": _tier_counts(e for e in headline_cases if e.split == "dev"),
            "holdout": _tier_counts(e for e in headline_cases if e.split == "holdout"),
            "total": _tier_counts(headline_cases),
            "model_arm": _tier_counts(model_arm_cases),
        },
        without_record=without_record,
        ceiling=Ceiling(caps, _tally(row.cap for row in caps)),
        suites=_suite_rows(entries),
        control_rows=control_rows,
        controls_held=rate_of(sum(row.held is True for row in control_rows), len(controls_with_record)),
        errors=errors,
        errors_by_class={name: by_class.get(name, 0) for name in ERROR_CLASSES},
        provenance=_provenance(records),
        publication=data.publication,
        attempts=tuple(data.attempts),
        repeatability=round_repeatability(data.attempts),
    )
