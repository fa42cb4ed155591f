"""The resolved tool: how to run the obelize under test and what it is.

The controller resolves it once (``tool_env``); it travels to the workers inside the round
context, and every record's provenance comes from it. ``ToolIdentity`` is the part a run's
``run.json`` keeps: what the tool is, without this machine's paths to run it.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError

from pytest_obelize_bench._util.strict_model import FrozenModel
from pytest_obelize_bench._util.validation import problem_text

Source = Literal["installed", "requirement", "checkout"]


class ToolError(Exception):
    """The tool cannot be resolved; the message is one line a user can act on."""


class ToolIdentity(BaseModel):
    """What the tool under test is, as a run's manifest records it (no path of this machine).

    Every field may be missing from an older manifest, and a field it does not know is ignored.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    version: str | None = None
    commit: str | None = None
    tree_dirty: bool | None = None
    source: Source | None = None
    exclude_newer_tool: str | None = None
    #: A source checkout's commit date (ISO 8601, the committer's): the history orders commits by it.
    commit_date: str | None = None


class ToolInfo(FrozenModel):
    """How to run the obelize under test, and what it is (provenance for every record)."""

    argv_prefix: Annotated[tuple[StrictStr, ...], Field(min_length=1)]
    python: StrictStr
    version: StrictStr
    commit: StrictStr | None
    tree_dirty: StrictBool | None
    source: Source
    spec: StrictStr | None
    #: The upload cutoff the named release was exempted to (``--exclude-newer-package``) while its
    #: dependencies resolved as of the round's ``exclude_newer``; null for an installed obelize, a
    #: source checkout, or a venv built with no cutoff.
    exclude_newer_tool: StrictStr | None = None
    commit_date: StrictStr | None = None
    #: The marker the installed obelize's answers were kept under when the session resolved it
    #: (``installed_answers.py``), as (name, value) pairs: the session's pack answers are kept under
    #: the same one without hashing the package a second time.  Not provenance; null otherwise.
    answers_marker: tuple[tuple[StrictStr, StrictStr], ...] | None = None

    @property
    def checkout(self) -> str | None:
        """The source checkout it runs from, as given (None unless ``source`` is ``checkout``)."""
        return self.spec if self.source == "checkout" else None

    def identity(self) -> ToolIdentity:
        return ToolIdentity(
            version=self.version,
            commit=self.commit,
            tree_dirty=self.tree_dirty,
            source=self.source,
            exclude_newer_tool=self.exclude_newer_tool,
            commit_date=self.commit_date,
        )

    def to_json(self) -> str:
        """One line of JSON: how a tool venv's own process hands back what it resolved."""
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str) -> ToolInfo:
        try:
            return cls.model_validate_json(text)
        except ValidationError as error:
            raise ToolError(f"tool info: {problem_text(error.errors()[0])}") from None


__all__ = ["Source", "ToolError", "ToolIdentity", "ToolInfo"]
