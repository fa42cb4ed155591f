"""The case file's schema: the row models, the uniform ``Case``, the constants the rules check.

Kept apart from reading and from the rules, so both import it and neither imports the other.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from pytest_obelize_bench._util.strict_model import StrictModel, StrictRow

ACTIONABLE_KINDS: frozenset[str] = frozenset({"import", "call", "method_call", "attribute"})
SPLITS = ("dev", "holdout")
CONTROL_SHAPES = ("already-migrated", "vertex-generative-models", "vertex-preview", "docs-mention")
MAX_CASES_PER_OWNER = 2
#: The interpreter a control runs under when its row names none (controls carry no key).
DEFAULT_PYTHON = "cpython-3.12.9-macos-aarch64-none"
#: pack id = provider/change; the distributions a pack moves between.
PACK_DISTRIBUTIONS: dict[str, tuple[str, str]] = {
    "gemini/google-generativeai-to-google-genai": ("google-generativeai", "google-genai"),
    "openai/openai-0-to-1": ("openai", "openai"),
    "py-pdf/pypdf2-to-pypdf": ("PyPDF2", "pypdf"),
}

# Every pattern is matched against the whole value (``fullmatch``): ``$`` alone would accept a
# trailing newline, and a SHA or key with one is a different string everywhere it is used.
EXACT_VERSION = re.compile(r"\d+\.\d+\.\d+")
FULL_SHA = re.compile(r"[0-9a-f]{40}")
UV_KEY = re.compile(r"(?P<impl>[a-z]+)-(?P<version>\d+\.\d+\.\d+)-(?P<os>[a-z]+)-(?P<arch>[a-z0-9_]+)-(?P<libc>[a-z]+)")
ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
#: An id, or one half of a full_name: it becomes a folder name of the work root and of results/.
SAFE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")


class CallSite(StrictRow):
    path: str
    line: int = Field(ge=1)
    kind: Literal["import", "call", "method_call", "attribute", "dynamic"]
    symbol: str
    label: Literal["auto", "manual"]
    why: str | None = None


class ManifestRow(StrictRow):
    path: str
    line: int = Field(ge=1)
    symbol: str
    label: Literal["auto", "manual"]
    why: str | None = None


class ForbiddenPosition(StrictRow):
    path: str
    line: int = Field(ge=1)
    why: str


class GroundTruth(StrictRow):
    what_it_is: str = ""
    files_read: list[str] = Field(default_factory=list)
    call_sites: list[CallSite] = Field(default_factory=list)
    manifests: list[ManifestRow] = Field(default_factory=list)
    must_not_report: list[ForbiddenPosition] = Field(default_factory=list)
    tests_cover_change: bool = False
    tests_cover_change_why: str = ""


class Review(StrictRow):
    human_edits: int | None = Field(default=None, ge=0)
    patch_correct: bool | None = None
    reviewer: str | None = None
    reviewed_at: str | None = None
    #: what the reviewer read and checked, in one line (a review file's entry; not graded)
    why: str | None = None


class Retired(StrictRow):
    reason: str = Field(min_length=1)
    round: int = Field(ge=1)


class CaseRow(StrictRow):
    id: str
    provider: str
    change: str
    from_version: str
    to_version: str
    full_name: str
    owner: str
    repo: str
    sha: str
    license: str
    split: str
    pattern_key: list[str]
    python: str
    install: list[str] = Field(default_factory=list)
    test_cmd: str | None = None
    tests_require_network: bool = False
    has_test_files: bool | None = None
    ground_truth: GroundTruth
    reviewer: str
    reviewed_at: str
    notes: str
    review: Review | None = None
    retired: Retired | None = None


class ControlRow(StrictRow):
    control: str
    shape: str
    full_name: str
    owner: str
    repo: str
    sha: str
    license: str
    witness: str
    query: str = ""
    must_produce: str = ""
    provider: str = "gemini"
    change: str = "google-generativeai-to-google-genai"
    python: str | None = None
    reviewer: str
    reviewed_at: str
    notes: str
    retired: Retired | None = None


class SplitMove(StrictRow):
    case: str
    from_split: str
    to_split: str
    round: int
    reason: str = Field(min_length=1)


class FixtureRow(StrictRow):
    id: str
    origin: Literal["fixture"] = "fixture"
    control: bool = False
    provider: str
    change: str
    install: list[str] = Field(default_factory=list)
    test_cmd: str | None = None
    tests_require_network: bool = False
    review: Review | None = None
    ground_truth: GroundTruth
    notes: str = ""


class KeptSides(StrictRow):
    """Rows carried unchanged from an earlier round's file, whose dev/holdout sides this file keeps:
    the split rule assigns only the rows new here (``split.compute_split``'s ``kept``)."""

    from_round: int = Field(ge=1)
    reason: str = Field(min_length=1)
    cases: list[str] = Field(min_length=1)


class LeftOut(StrictRow):
    """A candidate the draw passed over, and why: named, so the draw can be checked."""

    full_name: str
    reason: str = Field(min_length=1)


class _FileHead(StrictModel):
    model_config = ConfigDict(strict=True)
    round: int = Field(ge=1)
    reviewer: str
    reviewed_at: str
    from_version: str
    to_version: str
    corpus: str | None = None
    draws: str | None = None
    scans: list[str] | None = None
    split_moves: list[SplitMove] = Field(default_factory=list)
    kept_sides: KeptSides | None = None
    left_out: list[LeftOut] = Field(default_factory=list)
    cases: list[Any]
    controls: list[Any] = Field(default_factory=list)


class Case(BaseModel):
    """One benchmark item, whatever row it came from: the harness reads nothing else."""

    model_config = ConfigDict(frozen=True)

    id: str
    origin: Literal["corpus", "fixture"]
    control: bool
    control_shape: str | None = None
    split: Literal["dev", "holdout"] | None = None
    provider: str
    change: str
    full_name: str | None = None
    owner: str | None = None
    repo: str | None = None
    sha: str | None = None
    license: str | None = None
    python: str | None = None
    from_version: str | None = None
    to_version: str | None = None
    install: tuple[str, ...] = ()
    test_cmd: str | None = None
    tests_require_network: bool = False
    has_test_files: bool | None = None
    pattern_key: tuple[str, ...] = ()
    ground_truth: GroundTruth = GroundTruth()
    review: Review | None = None
    retired: Retired | None = None
    source: str | None = None
    #: who wrote the key and when (a corpus case's row; None for fixtures)
    reviewer: str | None = None
    reviewed_at: str | None = None

    @property
    def pack(self) -> str:
        return f"{self.provider}/{self.change}"


@dataclass(frozen=True)
class CaseFile:
    """A loaded case file: its round, its cases (controls included) and recorded split moves, and the
    sha256 of the bytes they were read from."""

    path: Path
    sha256: str
    round: int
    from_version: str
    to_version: str
    cases: tuple[Case, ...]
    split_moves: tuple[SplitMove, ...]
    #: the ids whose dev/holdout side is kept from an earlier round (``KeptSides``); empty when none
    kept_sides: tuple[str, ...] = ()

    def by_id(self) -> dict[str, Case]:
        return {case.id: case for case in self.cases}


@dataclass(frozen=True)
class Problem:
    """One broken rule: ``rule`` names it (see ``rules.RULES``), ``text`` is the line a user reads."""

    rule: str
    text: str


class CaseFileError(Exception):
    """A case file that breaks the schema or a rule: one line per problem."""

    def __init__(self, problems: Sequence[str | Problem]) -> None:
        self.found = [p if isinstance(p, Problem) else Problem("schema", p) for p in problems]
        self.problems = [p.text for p in self.found]
        super().__init__("\n".join(self.problems))


def slug(full_name: str) -> str:
    """The id of a control row: its full name with ``/`` replaced by ``__``."""
    return full_name.replace("/", "__")


def key_symbols(ground_truth: GroundTruth) -> list[str]:
    """The sorted set of actionable call-site symbols: what ``pattern_key`` must equal."""
    return sorted({row.symbol for row in ground_truth.call_sites if row.kind in ACTIONABLE_KINDS})
