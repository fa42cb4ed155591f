"""The comparison's review file, ``cases/comparison-round-N.yaml``, and its check.

Per arm, per case: ``reviewed`` (what the reviewer read; mandatory, so an absent ``wrong`` means
none rather than unread) and ``wrong`` (edits to undo, each naming a file the arm changed).
``patch_correct`` derives from it; the round's case file stays frozen.  Loading is strict and a
bad file gets one line naming the file, the arm, the case and the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from pytest_obelize_bench._util.caps import REVIEW_BYTES
from pytest_obelize_bench._util.documents import read_document
from pytest_obelize_bench._util.strict_model import StrictModel
from pytest_obelize_bench._util.validation import field_path, message_of
from pytest_obelize_bench.casefile.reviews import ReviewFileError
from pytest_obelize_bench.comparison.rows import OBELIZE, ComparisonRecord


class WrongEdit(StrictModel):
    path: str = Field(min_length=1)
    line: int | None = Field(default=None, ge=1)
    why: str = Field(min_length=1)


class ArmReview(StrictModel):
    reviewed: str = Field(min_length=1)
    wrong: list[WrongEdit] = Field(default_factory=list)


class ReviewFile(StrictModel):
    round: int = Field(ge=1)
    reviewer: str
    reviewed_at: str
    reviews: dict[str, dict[str, ArmReview]]

    def of(self, arm: str, case: str) -> ArmReview | None:
        return self.reviews.get(arm, {}).get(case)


def review_path(cases_dir: Path, n: int) -> Path:
    return Path(cases_dir) / f"comparison-round-{n}.yaml"


def parse_review(data: Any, source: str) -> ReviewFile:
    try:
        return ReviewFile.model_validate(data)
    except ValidationError as exc:
        problem = exc.errors()[0]
        loc = tuple(problem["loc"])
        if len(loc) >= 3 and loc[0] == "reviews":
            where = f"arm {loc[1]}: case {loc[2]}: {field_path(loc[3:])}"
        else:
            where = field_path(loc)
        raise ReviewFileError(f"{source}: {where}: {message_of(problem)}") from None


def read_review(path: Path) -> ReviewFile:
    return read_document(Path(path), REVIEW_BYTES, parse_review, ReviewFileError, form="yaml")


def changed_files(record: ComparisonRecord, arm: str, case: str) -> set[str]:
    """The files an arm changed on a case, from the record's ``git diff --numstat``."""
    row = record.cases[case]
    changes = row.obelize_changes if arm == OBELIZE else row.changes
    return {change.path for change in changes}


def patch_correct(review: ArmReview | None, changed: set[str]) -> bool | None:
    """No ``wrong`` entry means correct; null when nothing changed or nobody reviewed it."""
    if review is None or not changed:
        return None
    return not review.wrong


def review_problems(record: ComparisonRecord, review: ReviewFile) -> list[str]:
    """One line per case lacking a review and per ``wrong`` entry naming a file the arm did not change."""
    problems: list[str] = []
    if review.round != record.round:
        problems.append(f"the review is for round {review.round}, the record for round {record.round}")
    for arm in sorted(record.arms):
        reviews = review.reviews.get(arm, {})
        for case in sorted(record.cases):
            one = reviews.get(case)
            if one is None:
                problems.append(f"{arm}: {case}: no review")
                continue
            changed = changed_files(record, arm, case)
            for entry in one.wrong:
                if entry.path not in changed:
                    problems.append(f"{arm}: {case}: wrong names {entry.path}, a file the arm did not change")
        for case in sorted(set(reviews) - set(record.cases)):
            problems.append(f"{arm}: {case}: reviewed, but the record has no such case")
    for arm in sorted(set(review.reviews) - set(record.arms)):
        problems.append(f"{arm}: an arm the record does not have")
    return problems


__all__ = [
    "ArmReview",
    "ReviewFile",
    "ReviewFileError",
    "WrongEdit",
    "changed_files",
    "parse_review",
    "patch_correct",
    "read_review",
    "review_path",
    "review_problems",
]
