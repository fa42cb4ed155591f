"""The case file: pydantic models, the protocol's rules, and one uniform ``Case``.

The models read the upstream round-1 file unchanged as well as ours, and fixture
``case.yaml`` files. Every problem becomes one line naming the file, the case, the field
and what was expected, so a bad file stops collection before anything runs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails

ACTIONABLE_KINDS: frozenset[str] = frozenset({"import", "call", "method_call", "attribute"})
CALL_SITE_KINDS = ("import", "call", "method_call", "attribute", "dynamic")
LABELS = ("auto", "manual")
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
#: How much of a bad value a problem line quotes.
QUOTE_CHARS = 80


def quoted(value: object) -> str:
    """``repr(value)`` cut to about 80 characters: a problem line stays one readable line."""
    text = repr(value)
    return text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 3] + "..."


class _Row(BaseModel):
    # strict: YAML already gives native types, so a coercion (true read as 1) is a mistake in the file.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class CallSite(_Row):
    path: str
    line: int = Field(ge=1)
    kind: Literal["import", "call", "method_call", "attribute", "dynamic"]
    symbol: str
    label: Literal["auto", "manual"]
    why: str | None = None


class ManifestRow(_Row):
    path: str
    line: int = Field(ge=1)
    symbol: str
    label: Literal["auto", "manual"]
    why: str | None = None


class ForbiddenPosition(_Row):
    path: str
    line: int = Field(ge=1)
    why: str


class GroundTruth(_Row):
    what_it_is: str = ""
    files_read: list[str] = []
    call_sites: list[CallSite] = []
    manifests: list[ManifestRow] = []
    must_not_report: list[ForbiddenPosition] = []
    tests_cover_change: bool = False
    tests_cover_change_why: str = ""


class Review(_Row):
    human_edits: int | None = Field(default=None, ge=0)
    patch_correct: bool | None = None
    reviewer: str | None = None
    reviewed_at: str | None = None


class Retired(_Row):
    reason: str = Field(min_length=1)
    round: int = Field(ge=1)


class CaseRow(_Row):
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
    install: list[str] = []
    test_cmd: str | None = None
    tests_require_network: bool = False
    has_test_files: bool | None = None
    ground_truth: GroundTruth
    reviewer: str
    reviewed_at: str
    notes: str
    review: Review | None = None
    retired: Retired | None = None


class ControlRow(_Row):
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


class SplitMove(_Row):
    case: str
    from_split: str
    to_split: str
    round: int
    reason: str = Field(min_length=1)


class FixtureRow(_Row):
    id: str
    origin: Literal["fixture"] = "fixture"
    control: bool = False
    provider: str
    change: str
    install: list[str] = []
    test_cmd: str | None = None
    tests_require_network: bool = False
    review: Review | None = None
    ground_truth: GroundTruth
    notes: str = ""


class _FileHead(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    round: int = Field(ge=1)
    reviewer: str
    reviewed_at: str
    from_version: str
    to_version: str
    corpus: str | None = None
    draws: str | None = None
    scans: list[str] | None = None
    split_moves: list[SplitMove] = []
    cases: list[Any]
    controls: list[Any] = []


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

    @property
    def pack(self) -> str:
        return f"{self.provider}/{self.change}"

    @property
    def human_edits(self) -> int | None:
        return self.review.human_edits if self.review else None

    @property
    def patch_correct(self) -> bool | None:
        return self.review.patch_correct if self.review else None


@dataclass(frozen=True)
class CaseFile:
    """A loaded case file: its round, its cases (controls included) and recorded split moves."""

    path: Path
    round: int
    from_version: str
    to_version: str
    cases: tuple[Case, ...]
    split_moves: tuple[SplitMove, ...]

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


# -- reading ------------------------------------------------------------------------


def _describe(error: ErrorDetails) -> tuple[str, str]:
    field = ".".join(str(part) for part in error["loc"]) or "(row)"
    message = error["msg"]
    if error["type"] == "missing":
        message = "a value is required"
    elif error["type"] == "extra_forbidden":
        message = "is not a known field"
    elif "input" in error and error["type"] != "missing":
        message = f"{message} (got {quoted(error['input'])})"
    return field, message


def _row_id(row: Any, index: int, kind: str) -> str:
    if isinstance(row, dict):
        if isinstance(row.get("id"), str):
            return str(row["id"])
        if isinstance(row.get("full_name"), str):
            return slug(row["full_name"])
    return f"<{kind} #{index + 1}>"


#: libyaml's safe loader when PyYAML was built with it: about four times faster on a large file.
_BASE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StrictLoader(_BASE_LOADER):  # type: ignore[misc]  # PyYAML's loaders are untyped
    """A safe loader that refuses what a reviewed case file never needs.

    An alias is refused where it is used a second time, before it is expanded, so an alias bomb
    costs nothing; a duplicate key is refused instead of silently keeping the last value.
    """

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        if node in self.constructed_objects or node in self.recursive_objects:
            raise yaml.constructor.ConstructorError(
                None, None, "an alias (*name) is not allowed in a case file; write the value out", node.start_mark
            )
        return super().construct_object(node, deep=deep)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[object] = set()
        for key_node, _ in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else id(key_node)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {quoted(key)} in one mapping", key_node.start_mark
                )
            seen.add(key)
        result: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return result


def _read_yaml(path: Path) -> Any:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CaseFileError([f"{path}: cannot be read: {exc.strerror or exc}"]) from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise CaseFileError([f"{path}: is not UTF-8 text (line {line}, byte {exc.start})"]) from None
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a safe loader, the C one when built
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise CaseFileError([f"{path}: is not valid YAML{where}: {getattr(exc, 'problem', exc)}"]) from None
    except RecursionError:
        raise CaseFileError([f"{path}: is nested too deeply to be a case file"]) from None


def load_case_file(path: Path | str) -> CaseFile:
    """Read and validate a round's case file, or raise ``CaseFileError`` listing every problem."""
    case_file, problems = check_case_file(path)
    if problems or case_file is None:
        raise CaseFileError(problems)
    return case_file


def check_case_file(path: Path | str) -> tuple[CaseFile | None, list[Problem]]:
    """Every problem of a case file, each tagged with the rule it breaks (schema problems too)."""
    from pytest_obelize_bench.rules import (
        case_row_problems,
        control_row_problems,
        file_problems,
    )

    path = Path(path)
    try:
        data = _read_yaml(path)
    except CaseFileError as exc:
        return None, exc.found
    if not isinstance(data, dict):
        return None, [Problem("schema", f"{path}: expected a mapping with round, cases and controls at the top")]
    problems: list[Problem] = []
    head_fields = {k: v for k, v in data.items()}
    try:
        head = _FileHead.model_validate(head_fields)
    except ValidationError as exc:
        for error in exc.errors():
            field, message = _describe(error)
            problems.append(Problem("schema", f"{path}: top level: {field}: {message}"))
        return None, problems

    cases: list[Case] = []
    for index, raw in enumerate(head.cases):
        case_id = _row_id(raw, index, "case")
        try:
            row = CaseRow.model_validate(raw)
        except ValidationError as exc:
            for error in exc.errors():
                field, message = _describe(error)
                problems.append(Problem("schema", f"{path}: case {case_id}: {field}: {message}"))
            continue
        cases.append(
            Case(
                id=row.id,
                origin="corpus",
                control=False,
                split="dev" if row.split == "dev" else "holdout" if row.split == "holdout" else None,
                provider=row.provider,
                change=row.change,
                full_name=row.full_name,
                owner=row.owner,
                repo=row.repo,
                sha=row.sha,
                license=row.license,
                python=row.python,
                from_version=row.from_version,
                to_version=row.to_version,
                install=tuple(row.install),
                test_cmd=row.test_cmd,
                tests_require_network=row.tests_require_network,
                has_test_files=row.has_test_files,
                pattern_key=tuple(row.pattern_key),
                ground_truth=row.ground_truth,
                review=row.review,
                retired=row.retired,
            )
        )
        problems.extend(Problem(rule, f"{path}: case {row.id}: {text}") for rule, text in case_row_problems(row))

    for index, raw in enumerate(head.controls):
        case_id = _row_id(raw, index, "control")
        try:
            control = ControlRow.model_validate(raw)
        except ValidationError as exc:
            for error in exc.errors():
                field, message = _describe(error)
                problems.append(Problem("schema", f"{path}: control {case_id}: {field}: {message}"))
            continue
        cases.append(
            Case(
                id=slug(control.full_name),
                origin="corpus",
                control=True,
                control_shape=control.control,
                provider=control.provider,
                change=control.change,
                full_name=control.full_name,
                owner=control.owner,
                repo=control.repo,
                sha=control.sha,
                license=control.license,
                python=control.python or DEFAULT_PYTHON,
                from_version=head.from_version,
                to_version=head.to_version,
                retired=control.retired,
            )
        )
        problems.extend(
            Problem(rule, f"{path}: control {case_id}: {text}") for rule, text in control_row_problems(control)
        )

    problems.extend(Problem(rule, f"{path}: {text}") for rule, text in file_problems(head, cases))
    return CaseFile(
        path=path,
        round=head.round,
        from_version=head.from_version,
        to_version=head.to_version,
        cases=tuple(sorted(cases, key=lambda c: c.id)),
        split_moves=tuple(head.split_moves),
    ), problems


def load_fixture(directory: Path | str) -> Case:
    """Read ``<directory>/case.yaml``; the fixture's repository is ``<directory>/repo``."""
    directory = Path(directory)
    path = directory / "case.yaml"
    data = _read_yaml(path)
    case_id = _row_id(data, 0, "fixture")
    try:
        row = FixtureRow.model_validate(data)
    except ValidationError as exc:
        lines = []
        for error in exc.errors():
            field, message = _describe(error)
            lines.append(f"{path}: case {case_id}: {field}: {message}")
        raise CaseFileError(lines) from None
    from pytest_obelize_bench.rules import fixture_row_problems

    problems = [f"{path}: case {row.id}: {text}" for _, text in fixture_row_problems(row, directory.name)]
    if not (directory / "repo").is_dir():
        problems.append(f"{path}: case {row.id}: repo: expected a directory {directory / 'repo'}")
    if problems:
        raise CaseFileError(problems)
    return Case(
        id=row.id,
        origin="fixture",
        control=row.control,
        provider=row.provider,
        change=row.change,
        install=tuple(row.install),
        test_cmd=row.test_cmd,
        tests_require_network=row.tests_require_network,
        ground_truth=row.ground_truth,
        review=row.review,
        source=str(directory / "repo"),
    )


def load_fixtures(root: Path | str) -> list[Case]:
    """Every fixture under ``root`` (sorted by directory name), all problems reported together."""
    root = Path(root)
    if not root.is_dir():
        raise CaseFileError([f"{root}: no fixtures directory"])
    cases: list[Case] = []
    problems: list[str] = []
    for directory in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
        try:
            cases.append(load_fixture(directory))
        except CaseFileError as exc:
            problems.extend(exc.problems)
    if problems:
        raise CaseFileError(problems)
    return cases
