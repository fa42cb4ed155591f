"""Published records whose review answers are no longer what the reviews file says of their patch.

A record carries the answer (``human_edits``, ``patch_correct``) for its own patch as it was when
the round was graded. A review written, changed or withdrawn in ``cases/reviews/round-N.yaml``
after that reaches the record, and so the tiers, only through ``obelize-bench regrade --write``.
Until then the published figures are stale, and ``summarize --check`` says so, one line per case.
Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pytest_obelize_bench.casefile.reviews import ReviewBook, load_reviews, review_for, reviews_path
from pytest_obelize_bench.grading.record import Record

__all__ = ["drifted_reviews", "review_drift"]


def _answer(edits: int | None, correct: bool | None) -> str:
    shown = {None: "null", True: "true", False: "false"}
    return f"human_edits {'null' if edits is None else edits}, patch_correct {shown[correct]}"


def review_drift(round_number: int, records: Mapping[str, Record], book: ReviewBook) -> list[str]:
    """One line per record whose patch's answer in the reviews file differs from the record's."""
    lines = []
    for case, record in sorted(records.items()):
        digest = record.provenance.patch_sha256
        if digest is None:
            continue
        review = review_for(book, case, digest)
        filed = (None, None) if review is None else (review.human_edits, review.patch_correct)
        m = record.measurements
        if filed != (m.human_edits, m.patch_correct):
            lines.append(
                f"round {round_number}: {case}: the reviews file says {_answer(*filed)} of its patch, the "
                f"published record {_answer(m.human_edits, m.patch_correct)}: "
                f"run `obelize-bench regrade --round {round_number} --write`"
            )
    return lines


def drifted_reviews(cases_path: Path, rounds: Mapping[int, Mapping[str, Record]]) -> list[str]:
    """``review_drift`` of every published round, each against its reviews file beside the case file."""
    return [
        line
        for number, records in sorted(rounds.items())
        for line in review_drift(number, records, load_reviews(reviews_path(cases_path, number)))
    ]
