"""One attempt of one case, as every reader of the results states it, computed once.

From the record, its key, the evidence of what the run did (the graded facts published beside the
record, or else the round's collected error analysis, ``results/errors/round-N.json``, which is
all upstream's round 1 published), the patch, the suites' log tails and the review. The results
document, ``obelize-bench show`` and the results pages read these facts, never the files, so none
of them can say what the data does not: "no patch" only where the record says nothing was
written, each key row's outcome from the evidence with the evidence named, and every reason for
something missing (nothing written, no suite ran, the round was imported, the licence) chosen
from the data. Pure; ``case_reading.py`` reads the files.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from pytest_obelize_bench.casefile.cases import Case
from pytest_obelize_bench.casefile.schema import Review
from pytest_obelize_bench.error_analysis.collected import CollectedCase, collect_case, graded_facts_of
from pytest_obelize_bench.error_analysis.states import STATES, MissKey, RowState, case_states
from pytest_obelize_bench.grading.grade import expected_rows, grade
from pytest_obelize_bench.grading.graded_facts import Artefacts
from pytest_obelize_bench.grading.record import Measurements, Record
from pytest_obelize_bench.grading.tiers import control_held
from pytest_obelize_bench.tool.evidence_copy import patch_publishable

__all__ = [
    "REGRADED",
    "Absence",
    "CaseFacts",
    "CaseInputs",
    "Forbidden",
    "RowsSource",
    "case_facts",
    "forbidden_reports",
]

#: Where the key rows' outcomes come from.
RowsSource = Literal["graded_facts", "error_analysis"]
#: Why something is not shown: nothing was written, the case errored first, no suite ran, the round
#: was imported from a harness that published none, the licence does not let it be published, the
#: record names no patch digest to review against, or it was not kept (too large, or older).
Absence = Literal["nothing_written", "errored", "no_suite", "imported", "licence", "no_digest", "not_kept"]
#: The record's counts the evidence grades again; the case's page says whether they agree.
REGRADED = ("detected", "false_positive", "missed_call_site", "unmigrated", "patch_applied")


@dataclass(frozen=True)
class CaseInputs:
    """Everything published about one attempt, as read."""

    round: int
    run: str | None
    imported: bool
    record: Record
    key: Case | None
    #: the graded facts beside the record, when the round published them
    graded_facts: Artefacts | None = None
    #: the case's entry in the round's collected file, read for the published first attempt only
    collected: CollectedCase | None = None
    #: how a page names the collected file (``results/errors/round-1.json``)
    collected_name: str | None = None
    #: the error-analysis reviewer's cause of each missed row (``cases/errors-round-N.yaml``)
    misses: Mapping[MissKey, str] = field(default_factory=dict)
    patch: str | None = None
    #: the tails of the suites' logs by phase (``baseline``, ``after``)
    tails: Mapping[str, str] = field(default_factory=dict)
    #: the answer for this very patch, if one was filed
    review: Review | None = None


@dataclass(frozen=True)
class Forbidden:
    """A finding at a position the key says nothing may be reported, with the key's reason."""

    path: str
    line: int
    kind: str
    symbol: str | None
    why: str


@dataclass(frozen=True)
class CaseFacts:
    """One attempt as the document, ``show`` and the pages state it."""

    round: int
    run: str | None
    imported: bool
    record: Record
    key: Case | None
    #: the record's measurements, with the counts it predates (``manifest_reported``) filled from the evidence
    measurements: Measurements
    #: the measurements filled from the evidence, by name
    filled: tuple[str, ...]
    rows_source: RowsSource | None
    #: how a page names the collected file, when the rows come from it
    collected_name: str | None
    #: every key row and what the run did with it; None without a key or without evidence
    rows: tuple[RowState, ...] | None
    #: the (path, line) of every applied edit, from the evidence; None without evidence
    applied: tuple[tuple[str, int], ...] | None
    #: the evidence graded again against the key; None without either
    regraded: Measurements | None
    forbidden: tuple[Forbidden, ...] | None
    #: for a negative control, whether it held (``tiers.control_held`` over ``measurements``)
    held: bool | None
    patch: str | None
    patch_absent: Absence | None
    tails: Mapping[str, str]
    tails_absent: Absence | None
    review: Review | None
    #: why no review can be filed; None when one is filed or awaited
    review_absent: Absence | None

    @property
    def case_id(self) -> str:
        return self.record.case

    @property
    def attempt(self) -> int:
        return self.record.attempt_number

    @property
    def licence(self) -> str | None:
        return None if self.key is None else self.key.license

    @property
    def completed(self) -> Record:
        """The record with ``measurements`` in place of its own: what the round's figures read."""
        return self.record.model_copy(update={"measurements": self.measurements})

    def state_counts(self) -> dict[str, int] | None:
        """Key rows by state (``migrated``, ``withheld``, ``derived``, ``missed``); None without rows."""
        if self.rows is None:
            return None
        return {state: sum(row.state == state for row in self.rows) for state in STATES}

    def disagreements(self) -> list[str]:
        """Each count the record states that the evidence, graded again, does not (none expected)."""
        if self.regraded is None:
            return []
        said = self.record.measurements
        return [f"{name}: the record {getattr(said, name)}, the evidence {getattr(self.regraded, name)}"
                for name in REGRADED if getattr(said, name) is not None
                and getattr(said, name) != getattr(self.regraded, name)]  # fmt: skip


def forbidden_reports(case: Case, artefacts: Artefacts) -> list[Forbidden]:
    """Findings at positions the key says nothing may be reported, with the key's reason."""
    why = {(row.path, row.line): row.why for row in case.ground_truth.must_not_report}
    return [Forbidden(f.path, f.line, f.kind, f.symbol, why[(f.path, f.line)])
            for f in artefacts.findings if (f.path, f.line) in why]  # fmt: skip


def _evidence(inputs: CaseInputs) -> tuple[Artefacts | None, CollectedCase | None, RowsSource | None]:
    """The graded facts beside the record win; else the collected entry, read back as graded facts."""
    if inputs.graded_facts is not None:
        facts = inputs.graded_facts
        # graded facts of version 1 name no run_id; the states never read it
        named = facts if facts.run_id is not None else dataclasses.replace(facts, run_id="not recorded")
        return facts, collect_case(named, inputs.record.case), "graded_facts"
    if inputs.collected is not None:
        return graded_facts_of(inputs.collected), inputs.collected, "error_analysis"
    return None, None, None


def _filled(record: Record, artefacts: Artefacts | None) -> tuple[Measurements, tuple[str, ...]]:
    """Pins counted from the evidence where the record predates ``manifest_reported`` (round 1's
    schema), so a control's "no pin" is shown, not assumed; an errored record is left as it is."""
    m = record.measurements
    if artefacts is None or record.error is not None or m.manifest_reported is not None:
        return m, ()
    pins = sum(1 for finding in artefacts.findings if finding.kind == "manifest")
    return m.model_copy(update={"manifest_reported": pins}), ("manifest_reported",)


def _patch_absent(inputs: CaseInputs) -> Absence | None:
    m, key = inputs.record.measurements, inputs.key
    if inputs.patch:
        return None
    if m.patch_applied is not True:
        return "errored" if inputs.record.error is not None else "nothing_written"
    if inputs.imported:
        return "imported"
    if key is not None and not patch_publishable(key.license):
        return "licence"
    return "not_kept"


def _tails_absent(inputs: CaseInputs) -> Absence | None:
    m, key = inputs.record.measurements, inputs.key
    if any(inputs.tails.values()):
        return None
    if m.tests_baseline.status == "not_run" and m.tests_after.status == "not_run":
        return "no_suite"
    if inputs.imported:
        return "imported"
    if key is not None and not patch_publishable(key.license):
        return "licence"
    return "not_kept"


def _review_absent(inputs: CaseInputs) -> Absence | None:
    record = inputs.record
    if inputs.review is not None:
        return None
    if record.measurements.patch_applied is not True:
        return "errored" if record.error is not None else "nothing_written"
    if record.provenance.patch_sha256 is None:
        return "no_digest"
    return None


def case_facts(inputs: CaseInputs) -> CaseFacts:
    """The facts of one attempt; the one place a reader's statement about a case is decided."""
    record, key = inputs.record, inputs.key
    artefacts, collected, source = _evidence(inputs)
    measurements, filled = _filled(record, artefacts)
    rows: tuple[RowState, ...] | None = None
    regraded: Measurements | None = None
    forbidden: tuple[Forbidden, ...] | None = None
    if key is not None and artefacts is not None and collected is not None:
        listed = [] if key.control else expected_rows(key)
        rows = tuple(case_states(record.case, listed, collected, inputs.misses))
        m = record.measurements
        regraded = grade(key, artefacts, baseline=m.tests_baseline, after=m.tests_after,
                         patch_compiles=m.patch_compiles, runtime_seconds=m.runtime_seconds)  # fmt: skip
        forbidden = tuple(forbidden_reports(key, artefacts))
    return CaseFacts(
        round=inputs.round,
        run=inputs.run,
        imported=inputs.imported,
        record=record,
        key=key,
        measurements=measurements,
        filled=filled,
        rows_source=source,
        collected_name=inputs.collected_name if source == "error_analysis" else None,
        rows=rows,
        applied=None if collected is None else tuple(collected.applied),
        regraded=regraded,
        forbidden=forbidden,
        held=control_held(record.error, measurements) if record.control else None,
        patch=inputs.patch or None,
        patch_absent=_patch_absent(inputs),
        tails={phase: tail for phase, tail in inputs.tails.items() if tail},
        tails_absent=_tails_absent(inputs),
        review=inputs.review,
        review_absent=_review_absent(inputs),
    )
