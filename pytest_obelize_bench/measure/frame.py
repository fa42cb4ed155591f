"""A frame: the repositories a Gate 1 scan or a fix dry run measures, each at a pinned commit.

The Gate 1 sample (``cases/gate1/sample.yaml``) and every dry-run frame share this schema: how the
frame was drawn (the query term, the size bands and their populations, what was rejected and why)
and the drawn repositories.  A fixture frame's repository may instead name a local folder
(``path``, relative to the frame file) and the outcome it is expected to give (``expected``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator

from pytest_obelize_bench._util import documents
from pytest_obelize_bench._util.caps import CASE_FILE_BYTES
from pytest_obelize_bench._util.safe_io import UntrustedFileError
from pytest_obelize_bench._util.strict_model import StrictRow
from pytest_obelize_bench._util.validation import describe
from pytest_obelize_bench.casefile.cases import FULL_SHA
from pytest_obelize_bench.tool.run_documents import path_problem

#: What a fix dry run says of one repository (the protocol's five outcomes).
OUTCOMES: tuple[str, ...] = ("blocked", "none", "held", "partial", "complete")
Outcome = Literal["blocked", "none", "held", "partial", "complete"]
_FULL_NAME = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


class Band(StrictRow):
    band: str
    population: int = Field(ge=0)
    allocated: int = Field(ge=0)
    drawn: int = Field(ge=0)


class Rejected(StrictRow):
    full_name: str
    reason: str = Field(min_length=1)


class FrameRepository(StrictRow):
    full_name: str = Field(pattern=_FULL_NAME.pattern)
    owner: str | None = None
    url: str | None = None
    sha: str | None = Field(default=None, pattern=rf"^{FULL_SHA.pattern}$")
    default_branch: str | None = None
    license: str | None = None
    size_kb: int | None = Field(default=None, ge=0)
    stars: int | None = Field(default=None, ge=0)
    archived: bool | None = None
    pushed_at: str | None = None
    band: str
    #: a fixture's local folder, relative to the frame file; replaces url and sha.
    path: str | None = None
    #: a fixture's committed expected dry-run outcome.
    expected: Outcome | None = None
    notes: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> FrameRepository:
        if self.path is None and (self.url is None or self.sha is None):
            raise ValueError("needs url and sha, or a local path for a fixture")
        if self.path is not None and (self.url is not None or self.sha is not None):
            raise ValueError("a fixture's local path replaces url and sha; give one or the other")
        if self.owner is not None and self.owner != self.full_name.split("/")[0]:
            raise ValueError(f"owner {self.owner!r} is not the owner in full_name {self.full_name!r}")
        return self

    @property
    def id(self) -> str:
        """The item and record id: the full name with ``/`` as ``__``."""
        return self.full_name.replace("/", "__")


class Frame(StrictRow):
    queried_at: str | None = None
    term: str
    #: the pack a dry-run frame is drawn for; the Gate 1 sample names none.
    pack: str | None = None
    bands: list[Band] = Field(default_factory=list)
    population: int | None = Field(default=None, ge=0)
    size_cap_kb: int | None = Field(default=None, ge=0)
    excluded_owners: list[str] = Field(default_factory=list)
    rejected: list[Rejected] = Field(default_factory=list)
    #: how repositories were added after the first draw (a frame grown from a candidate list), and the
    #: biases of the whole frame, stated beside every figure drawn from it
    draw_rule: str | None = None
    biases: list[str] = Field(default_factory=list)
    repositories: list[FrameRepository] = Field(min_length=1)

    @property
    def is_fixture(self) -> bool:
        """Every repository local with an expected outcome: a fixture frame, never published."""
        return all(repo.path is not None and repo.expected is not None for repo in self.repositories)


class FrameError(Exception):
    """A frame that cannot be used: one line per problem (file, repository, field)."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


def _repository_of(data: Any, loc: tuple[Any, ...]) -> str:
    if len(loc) >= 2 and loc[0] == "repositories" and isinstance(loc[1], int):
        try:
            name = data["repositories"][loc[1]].get("full_name")
        except (KeyError, IndexError, TypeError, AttributeError):
            name = None
        return str(name) if name else f"repositories[{loc[1]}]"
    return "top level"


def validation_lines(path: Path, data: Any, error: ValidationError, repository: Any = None) -> list[str]:
    """Each pydantic error as ``<file>: <repository>: <field>: <message>``."""
    lines = []
    for problem in error.errors():
        loc = tuple(problem["loc"])
        where = repository if repository is not None else _repository_of(data, loc)
        rest = loc[2:] if where != "top level" and repository is None else loc
        field, message = describe({**problem, "loc": rest})
        lines.append(f"{path}: {where}: {field}: {message}")
    return lines


def read_yaml(path: Path, error: type[Exception]) -> Any:
    """A YAML document read bounded and strictly, or ``error`` with one line saying why it cannot be."""
    try:
        return documents.read_yaml(Path(path), CASE_FILE_BYTES)
    except UntrustedFileError as exc:
        raise error([f"{path}: top level: (file): {exc.problem}"]) from None


def load_frame(path: Path | str) -> Frame:
    """The frame at ``path``; ``FrameError`` naming the file, repository and field otherwise."""
    path = Path(path)
    data = read_yaml(path, FrameError)
    if not isinstance(data, dict):
        raise FrameError([f"{path}: top level: (file): expected a mapping"])
    try:
        frame = Frame.model_validate(data)
    except ValidationError as exc:
        raise FrameError(validation_lines(path, data, exc)) from None
    problems = []
    seen: set[str] = set()
    for repo in frame.repositories:
        if repo.id in seen:
            problems.append(f"{path}: {repo.full_name}: full_name: listed twice")
        seen.add(repo.id)
        if repo.path is not None:
            folder = (path.parent / repo.path).resolve()
            problem = path_problem(repo.path)
            if problem is not None or not folder.is_relative_to(path.parent.resolve()):
                problems.append(f"{path}: {repo.full_name}: path: {repo.path!r} {problem or 'leaves the frame folder'}")
            elif not folder.is_dir():
                problems.append(f"{path}: {repo.full_name}: path: {repo.path} is not a folder beside the frame")
    if problems:
        raise FrameError(problems)
    return frame


__all__ = [
    "OUTCOMES",
    "Frame",
    "FrameError",
    "FrameRepository",
    "Outcome",
    "load_frame",
    "read_yaml",
    "validation_lines",
]
