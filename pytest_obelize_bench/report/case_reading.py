"""Reading what ``case_facts`` computes from: a round's (or a run's) files about each attempt.

The I/O edge of the case facts. A folder's shared evidence (its round, run, whether it was
imported, the keys, the review answers and, for a published round, its collected error analysis
and the reviewer's causes) is read once (``folder_evidence``); each attempt then adds its record
and what was kept beside it under ``artefacts/``: graded facts, patch, log tails
(``attempt_facts``). Graded facts are read as untrusted evidence: one that is malformed or
planted stops the render in one line (``EvidenceError``), as it stops the round's figures; an
unreadable patch or tail is shown as not kept.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pytest_obelize_bench._util.caps import PATCH_BYTES
from pytest_obelize_bench._util.safe_io import (
    UntrustedFileError,
    parse_json_object,
    read_untrusted,
    read_untrusted_text,
)
from pytest_obelize_bench.casefile.cases import Case, CaseFile
from pytest_obelize_bench.casefile.reviews import ReviewBook, ReviewFileError, load_reviews, review_for, reviews_path
from pytest_obelize_bench.error_analysis.collected import CollectedFileError, CollectedRound, read_collected
from pytest_obelize_bench.error_analysis.commands import ERRORS_FOLDER, collected_path
from pytest_obelize_bench.error_analysis.review import read_review, review_path
from pytest_obelize_bench.error_analysis.states import MissKey
from pytest_obelize_bench.grading.attempts import record_file_name
from pytest_obelize_bench.grading.record import Record, RecordError, read_round_attempts
from pytest_obelize_bench.records.evidence import EvidenceError, read_graded_facts
from pytest_obelize_bench.records.publication_note import read_publication
from pytest_obelize_bench.report.case_facts import CaseFacts, CaseInputs, case_facts

__all__ = ["FolderEvidence", "attempt_facts", "folder_evidence", "published_evidence", "round_case_facts"]

ARTEFACTS = "artefacts"


@dataclass(frozen=True)
class FolderEvidence:
    """What every attempt in one folder (a published round, or one run) shares."""

    round: int
    run: str | None
    imported: bool
    keys: Mapping[str, Case]
    reviews: ReviewBook
    #: the round's collected file: for the published round's first attempts only
    collected: CollectedRound | None = None
    collected_name: str | None = None
    misses: Mapping[MissKey, str] = field(default_factory=dict)


def _collected(results: Path, n: int, *, lenient: bool) -> CollectedRound | None:
    path = collected_path(results, n)
    if not os.path.lexists(path):
        return None
    try:
        collected = read_collected(path)
    except CollectedFileError as exc:
        if lenient:
            return None
        raise EvidenceError(str(exc)) from None
    if collected.round != n:
        if lenient:
            return None
        raise EvidenceError(f"{path}: round: is {collected.round}, but the file is round {n}'s")
    return collected


def _misses(cases_dir: Path, n: int, *, lenient: bool) -> dict[MissKey, str]:
    path = review_path(cases_dir, n)
    if not os.path.lexists(path):
        return {}
    try:
        return {(m.case, m.path, m.line, m.symbol): m.cause for m in read_review(path).misses}
    except ReviewFileError:
        if lenient:
            return {}
        raise


def folder_evidence(
    results: Path,
    case_file: CaseFile,
    n: int,
    *,
    run: str | None,
    imported: bool,
    published: bool,
    lenient: bool = False,
) -> FolderEvidence:
    """Round ``n``'s shared evidence; ``published`` for ``results/round-N/`` itself, whose first
    attempts the collected file and the reviewer's causes describe.

    ``lenient`` is the round's figures' reading: an unreadable error-analysis file is left out
    rather than costing the round its block (``summarize --check`` names it), and the patch reviews
    are not read, as the figures take the answers from the regraded records. The pages and ``show``
    read strictly, so a page never gives a reason that an unreadable file hides.
    """
    collected = _collected(results, n, lenient=lenient) if published else None
    return FolderEvidence(
        round=n,
        run=run,
        imported=imported,
        keys=case_file.by_id(),
        reviews={} if lenient else load_reviews(reviews_path(case_file.path, n)),
        collected=collected,
        collected_name=None if collected is None else f"results/{ERRORS_FOLDER}/round-{n}.json",
        misses=_misses(case_file.path.parent, n, lenient=lenient) if collected is not None else {},
    )


def _patch(folder: Path, stem: str) -> str | None:
    path = folder / ARTEFACTS / f"{stem}.diff"
    try:
        return read_untrusted(path, PATCH_BYTES).decode("utf-8", errors="replace") if path.is_file() else None
    except UntrustedFileError:
        return None


def _tails(folder: Path, stem: str) -> dict[str, str]:
    """The published tails of the attempt's suite logs; none when the file is not the harness's."""
    path = folder / ARTEFACTS / f"{stem}.tails.json"
    try:
        data = parse_json_object(read_untrusted_text(path, PATCH_BYTES), str(path)) if path.is_file() else {}
    except UntrustedFileError:
        return {}
    return {phase: value for phase, value in data.items() if phase in ("baseline", "after") and isinstance(value, str)}


def attempt_facts(folder: Path, shared: FolderEvidence, record: Record) -> CaseFacts:
    """The facts of one attempt whose record is in ``folder``."""
    name = record_file_name(record.case, record.attempt)
    stem = name.removesuffix(".json")
    first = record.attempt_number == 1
    collected = shared.collected.cases.get(record.case) if shared.collected is not None and first else None
    inputs = CaseInputs(
        round=shared.round,
        run=shared.run,
        imported=shared.imported,
        record=record,
        key=shared.keys.get(record.case),
        graded_facts=read_graded_facts(Path(folder) / ARTEFACTS, name),
        collected=collected,
        collected_name=shared.collected_name,
        misses=shared.misses,
        patch=_patch(Path(folder), stem),
        tails=_tails(Path(folder), stem),
        review=review_for(shared.reviews, record.case, record.provenance.patch_sha256),
    )
    return case_facts(inputs)


def published_evidence(results: Path, case_file: CaseFile, n: int, *, lenient: bool = False) -> FolderEvidence:
    """The shared evidence of the published round ``n``: its run and kind from its publication note."""
    try:
        note = read_publication(Path(results) / f"round-{n}")
    except RecordError:  # ``summarize --check`` names an unreadable note; the round reads as unpublished
        note = None
    return folder_evidence(
        results, case_file, n, run=None if note is None else note.run,
        imported=note is not None and note.kind == "imported", published=True, lenient=lenient,
    )  # fmt: skip


def round_case_facts(results: Path, case_file: CaseFile, n: int) -> dict[str, list[CaseFacts]]:
    """Every attempt of every case published in round ``n``, first attempt first, by case."""
    folder = Path(results) / f"round-{n}"
    shared = published_evidence(results, case_file, n)
    return {case_id: [attempt_facts(folder, shared, record) for record in attempts]
            for case_id, attempts in sorted(read_round_attempts(folder).items())}  # fmt: skip
