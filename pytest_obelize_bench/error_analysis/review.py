"""The reviewer's file, ``cases/errors-round-N.yaml``: why each unmigrated row did not migrate.

Written by hand after reading the round's rows. ``causes`` gives every distinct reason a key row
did not migrate one disposition from a closed set; ``misses`` gives each row the scan never
reported the cause it cannot carry itself (there is no bail code on a row nobody reported);
``unexpected`` names the cause of each finding no key row claims. Whether the file agrees with
the round is ``errors_check``'s business; this module only reads it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field

from pytest_obelize_bench._util.caps import REVIEW_BYTES
from pytest_obelize_bench._util.documents import parse_yaml, read_document, validated
from pytest_obelize_bench._util.safe_io import UntrustedFileError
from pytest_obelize_bench._util.strict_model import FrozenModel
from pytest_obelize_bench.casefile.reviews import ReviewFileError

CauseClass = Literal["withheld", "derived", "missed", "unexpected"]
Disposition = Literal["rule_change", "scan_change", "limitation"]
CAUSE_CLASSES: tuple[str, ...] = ("withheld", "derived", "missed", "unexpected")
DISPOSITIONS: tuple[str, ...] = ("rule_change", "scan_change", "limitation")

#: How each disposition is recorded: a limitation names the ADR that decided it, a change the
#: numbered, open gap in obelize's scan coverage list that it closes.
RECORDED_FORMS: dict[str, re.Pattern[str]] = {
    "limitation": re.compile(r"ADR-\d{3}"),
    "rule_change": re.compile(r"COVERAGE \d{1,2}"),
    "scan_change": re.compile(r"COVERAGE \d{1,2}"),
}
RECORDED_TEXT: dict[str, str] = {
    "limitation": "ADR-NNN",
    "rule_change": "COVERAGE N",
    "scan_change": "COVERAGE N",
}
MAX_REVIEW_BYTES = REVIEW_BYTES


class _Model(FrozenModel):
    model_config = ConfigDict(populate_by_name=True)


class Cause(_Model):
    cause_class: CauseClass = Field(alias="class")
    disposition: Disposition
    recorded: str
    why: str = Field(min_length=1)


class Miss(_Model):
    case: str
    path: str
    line: int = Field(ge=1)
    symbol: str
    cause: str


class ReviewFile(_Model):
    round: int = Field(ge=1)
    reviewer: str
    reviewed_at: str
    record: str
    causes: dict[str, Cause]
    misses: list[Miss] = Field(default_factory=list)
    #: ``"<case>:<path>:<line>"`` of a finding no key row claims, to its cause.
    unexpected: dict[str, str] = Field(default_factory=dict)


def review_path(cases_dir: Path, number: int) -> Path:
    return Path(cases_dir) / f"errors-round-{number}.yaml"


def parse_review(text: str, source: str) -> ReviewFile:
    try:
        data = parse_yaml(text, source)
        if not isinstance(data, dict):
            raise UntrustedFileError(source, "expected a mapping at the top level")
        return validated(ReviewFile, data, source)
    except UntrustedFileError as exc:
        raise ReviewFileError(str(exc)) from None


def read_review(path: Path) -> ReviewFile:
    """Read a reviewer file: bounded, never through a symlink, strictly shaped."""
    return read_document(Path(path), MAX_REVIEW_BYTES, parse_review, ReviewFileError)
