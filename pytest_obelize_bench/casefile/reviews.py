"""Review answers keyed to the patch they judged, outside the frozen case file.

``cases/reviews/round-N.yaml`` holds one entry per (case, sha256 of the patch obelize wrote)::

    reviews:
      - case: owner__repo
        patch_sha256: 3f1c...   # 64 hex digits: obelize-bench review CASE --run RUN prints it
        human_edits: 0
        patch_correct: true
        reviewer: A. Reviewer
        reviewed_at: '2026-12-03'

An answer applies only to a record whose patch has the same digest, so ``verified_success`` is
reached for the patch a person read and is never inherited by a later version's other patch.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import Field, ValidationError

from pytest_obelize_bench._util.caps import PATCH_REVIEWS_BYTES
from pytest_obelize_bench._util.documents import parse_yaml
from pytest_obelize_bench._util.safe_io import UntrustedFileError, read_untrusted_text
from pytest_obelize_bench._util.strict_model import FrozenModel
from pytest_obelize_bench._util.validation import describe
from pytest_obelize_bench.casefile.schema import Case, Review

__all__ = [
    "FIXTURE_REVIEWS",
    "ReviewBook",
    "ReviewEntry",
    "ReviewFileError",
    "load_reviews",
    "review_for",
    "reviews_for_case",
    "reviews_path",
]

REVIEWS_FOLDER = "reviews"
#: A fixture's review answers, beside its ``case.yaml``, in the same shape.
FIXTURE_REVIEWS = "reviews.yaml"
_SHA256 = re.compile(r"[0-9a-f]{64}")


class ReviewFileError(ValueError):
    """A reviewer's file that cannot be used (a round's reviews, the comparison's, the error analysis's):
    one line naming the file, the case or row, and the field."""


class ReviewEntry(FrozenModel):
    case: str = Field(min_length=1)
    patch_sha256: str = Field(pattern=_SHA256.pattern)
    human_edits: int | None = Field(default=None, ge=0)
    patch_correct: bool | None = None
    reviewer: str = Field(min_length=1)
    reviewed_at: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    #: one line: what the reviewer read and checked against the key rows (not graded, published)
    why: str | None = Field(default=None, min_length=1)


class _ReviewFile(FrozenModel):
    reviews: list[ReviewEntry] = Field(default_factory=list)


ReviewBook = dict[tuple[str, str], Review]


def reviews_path(cases_path: Path, round_number: int) -> Path:
    """``cases/reviews/round-N.yaml`` beside the case file."""
    return Path(cases_path).parent / REVIEWS_FOLDER / f"round-{round_number}.yaml"


def reviews_for_case(case: Case, cases_path: Path, round_number: int | None) -> Path:
    """Where the answers for ``case``'s patches live: a fixture's ``reviews.yaml``, else the round's file."""
    if case.origin == "fixture" and case.source is not None:
        return Path(case.source).parent / FIXTURE_REVIEWS
    return reviews_path(cases_path, round_number or 0)


def review_for(book: ReviewBook, case_id: str, patch_sha256: str | None) -> Review | None:
    """The answer for exactly this patch; None when nobody reviewed it (or nothing was written)."""
    return None if patch_sha256 is None else book.get((case_id, patch_sha256))


def load_reviews(path: Path) -> ReviewBook:
    """The answers by (case, patch sha256); an absent file holds none."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        return {}
    try:
        data = parse_yaml(read_untrusted_text(path, PATCH_REVIEWS_BYTES), str(path)) or {}
    except UntrustedFileError as exc:
        raise ReviewFileError(str(exc).splitlines()[0]) from None
    try:
        parsed = _ReviewFile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = list(first["loc"])
        case = ""
        if len(loc) >= 2 and loc[0] == "reviews" and isinstance(loc[1], int):
            rows = data.get("reviews") if isinstance(data, dict) else None
            row = rows[loc[1]] if isinstance(rows, list) and loc[1] < len(rows) else None
            case = f" case {row.get('case')!r}" if isinstance(row, dict) else ""
        where, message = describe({**first, "loc": tuple(loc[2:] or loc)}, "(top level)")
        raise ReviewFileError(f"{path}:{case} field {where}: {message}") from None
    book: ReviewBook = {}
    for entry in parsed.reviews:
        key = (entry.case, entry.patch_sha256)
        if key in book:
            raise ReviewFileError(f"{path}: case {entry.case!r}: patch {entry.patch_sha256[:12]}... is reviewed twice")
        book[key] = Review(
            human_edits=entry.human_edits,
            patch_correct=entry.patch_correct,
            reviewer=entry.reviewer,
            reviewed_at=entry.reviewed_at,
            why=entry.why,
        )
    return book
