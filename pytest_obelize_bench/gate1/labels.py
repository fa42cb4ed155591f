"""The Gate 1 answer keys: every legacy usage of a repository, written by hand before its scan.

One YAML file per labelled repository under ``cases/gate1/labels/``.  ``call_sites`` are the
actionable rows precision and recall are computed over; ``expected_other`` the rows of other kinds
it is right to report; ``must_not_report`` the positions where nothing may be reported.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, model_validator

from pytest_obelize_bench._util.strict_model import StrictRow
from pytest_obelize_bench.measure.frame import Frame, read_yaml, validation_lines

ACTIONABLE_KINDS: tuple[str, ...] = ("import", "call", "method_call", "attribute")
OTHER_KINDS: tuple[str, ...] = ("text_mention", "manifest", "dynamic", "star_import", "parse_error")


class CallSite(StrictRow):
    path: str = Field(min_length=1)
    line: int = Field(ge=1)
    kind: Literal["import", "call", "method_call", "attribute"]
    symbol: str = Field(min_length=1)
    note: str | None = None


class OtherRow(StrictRow):
    path: str = Field(min_length=1)
    line: int = Field(ge=1)
    kind: Literal["text_mention", "manifest", "dynamic", "star_import", "parse_error"]
    symbol: str | None = None
    note: str | None = None


class Forbidden(StrictRow):
    path: str = Field(min_length=1)
    line: int = Field(ge=1)
    why: str = Field(min_length=1)


class AnswerKey(StrictRow):
    repository: str
    url: str
    sha: str = Field(pattern=r"^[0-9a-f]{40}$")
    band: str
    license: str
    labeller: str = Field(min_length=1)
    labelled_at: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    what_it_is: str = Field(min_length=1)
    files_read: list[str] = Field(min_length=1)
    call_sites: list[CallSite]
    expected_other: list[OtherRow] = Field(default_factory=list)
    must_not_report: list[Forbidden] = Field(default_factory=list)
    notes: str = ""

    @model_validator(mode="after")
    def _read_before_labelled(self) -> AnswerKey:
        unread = sorted({row.path for row in self.call_sites if row.path not in self.files_read})
        if unread:
            raise ValueError(f"call_sites name files not in files_read: {', '.join(unread)}")
        return self


class LabelError(Exception):
    """Answer keys that cannot be used: one line per problem (file, repository, field)."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


def load_key(path: Path | str) -> AnswerKey:
    path = Path(path)
    data = read_yaml(path, LabelError)
    if not isinstance(data, dict):
        raise LabelError([f"{path}: top level: (file): expected a mapping"])
    repository = data.get("repository") if isinstance(data.get("repository"), str) else "top level"
    try:
        return AnswerKey.model_validate(data)
    except ValidationError as exc:
        raise LabelError(validation_lines(path, data, exc, repository=repository)) from None


def load_keys(folder: Path | str, frame: Frame) -> dict[str, AnswerKey]:
    """Every key in ``folder`` by repository full name, each checked against the frame's pin."""
    folder = Path(folder)
    keys: dict[str, AnswerKey] = {}
    problems: list[str] = []
    pinned = {repo.full_name: repo for repo in frame.repositories}
    for path in sorted(folder.glob("*.yaml")):
        try:
            key = load_key(path)
        except LabelError as exc:
            problems.extend(exc.problems)
            continue
        repo = pinned.get(key.repository)
        if repo is None:
            problems.append(f"{path}: {key.repository}: repository: not in the frame")
        elif repo.sha != key.sha:
            problems.append(f"{path}: {key.repository}: sha: the key labels {key.sha}, the frame pins {repo.sha}")
        elif key.repository in keys:
            problems.append(f"{path}: {key.repository}: repository: labelled twice")
        else:
            keys[key.repository] = key
    if problems:
        raise LabelError(problems)
    return keys


__all__ = [
    "ACTIONABLE_KINDS",
    "OTHER_KINDS",
    "AnswerKey",
    "CallSite",
    "Forbidden",
    "LabelError",
    "OtherRow",
    "load_key",
    "load_keys",
]
