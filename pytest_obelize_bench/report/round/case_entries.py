"""A round's view of each of its cases: the inputs a round's figures are computed from.

``RoundData`` is what a reader of a round hands over (the case file's rows, the records, every
attempt and the publication note); ``case_entries`` turns it into one ``CaseEntry`` per case, whose
split and control flag come from the round's own record when it has one, so moving a case between
dev and holdout for a later round never rewrites an earlier round's figures.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_obelize_bench.casefile.cases import Case
from pytest_obelize_bench.grading.record import Record
from pytest_obelize_bench.grading.repeatability import SUCCESS, AttemptFacts
from pytest_obelize_bench.grading.tiers import ceiling
from pytest_obelize_bench.report.case_facts import CaseFacts

SPLITS = ("dev", "holdout")
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
    #: Each record's facts (``report/case_facts.py``), by case: what the pages and ``show`` state too.
    facts: Mapping[str, CaseFacts] = field(default_factory=dict)


# -- the round's view of each case ----------------------------------------------------------


@dataclass(frozen=True)
class CaseEntry:
    """One case as this round sees it: its key (if any), its record (if any), and where it sits."""

    id: str
    case: Case | None
    record: Record | None
    control: bool
    split: str | None
    pattern: tuple[str, ...]
    #: The record's facts, when the round was read with them.
    facts: CaseFacts | None = None

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


def case_entries(data: RoundData) -> list[CaseEntry]:
    """Every case of the round (a row of the case file or a record), sorted by id."""
    cases = {case.id: case for case in data.cases}
    entries = []
    for case_id in sorted(set(cases) | set(data.records)):
        case, record = cases.get(case_id), data.records.get(case_id)
        if record is not None:
            control, split = record.control, record.split
        else:
            assert case is not None
            control, split = case.control, case.split
        pattern = _pattern_of(case_id, case)
        entries.append(CaseEntry(case_id, case, record, control, split, pattern, data.facts.get(case_id)))
    return entries


def in_split(entry: CaseEntry, split: str | None) -> bool:
    return split is None or entry.split == split


def round_ceiling(entry: CaseEntry, round_number: int) -> str | None:
    """The key's cap as of this round: a retirement decided in a later round does not apply."""
    if entry.case is None:
        return CAP_NO_KEY
    update: dict[str, Any] = {"control": entry.control}
    if entry.case.retired is not None and entry.case.retired.round > round_number:
        update["retired"] = None
    # Reviews answer for a patch: a case not yet run is capped by its key alone; once run, by an
    # unanswered review of the patch its record holds.
    reviewed = entry.record is None or entry.record.measurements.human_edits is not None
    return ceiling(entry.case.model_copy(update=update), reviewed=reviewed)


__all__ = ["CAP_NO_KEY", "SPLITS", "SUCCESS", "CaseEntry", "RoundData", "case_entries", "in_split", "round_ceiling"]
