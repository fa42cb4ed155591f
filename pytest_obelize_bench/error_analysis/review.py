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
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pytest_obelize_bench._util.safe_io import UntrustedFileError, read_untrusted_text

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
MAX_REVIEW_BYTES = 4 * 1024 * 1024
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


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
    misses: list[Miss] = []
    #: ``"<case>:<path>:<line>"`` of a finding no key row claims, to its cause.
    unexpected: dict[str, str] = {}


class ReviewFileError(ValueError):
    """A reviewer file that cannot be read; the message is one line naming the file and field."""


def review_path(cases_dir: Path, number: int) -> Path:
    return Path(cases_dir) / f"errors-round-{number}.yaml"


def _where(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    for part in loc:
        parts.append(f"[{part}]" if isinstance(part, int) else ("." if parts else "") + str(part))
    return "".join(parts) or "top level"


def parse_review(text: str, source: str) -> ReviewFile:
    try:
        data = yaml.load(text, Loader=_LOADER)  # a safe loader (the C one when built)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1})" if mark is not None else ""
        raise ReviewFileError(f"{source}: not valid YAML{at}: {getattr(exc, 'problem', None) or exc}") from None
    if not isinstance(data, dict):
        raise ReviewFileError(f"{source}: expected a mapping at the top level")
    try:
        return ReviewFile.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise ReviewFileError(f"{source}: {_where(tuple(error['loc']))}: {error['msg']}") from None


def read_review(path: Path) -> ReviewFile:
    """Read a reviewer file: bounded, never through a symlink, strictly shaped."""
    try:
        text = read_untrusted_text(Path(path), MAX_REVIEW_BYTES)
    except UntrustedFileError as exc:
        raise ReviewFileError(str(exc)) from None
    return parse_review(text, str(path))
