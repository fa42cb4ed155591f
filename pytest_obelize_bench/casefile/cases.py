"""The case file: pydantic models, the protocol's rules, and one uniform ``Case``.

The models read the upstream round-1 file unchanged as well as ours, and fixture
``case.yaml`` files. Every problem becomes one line naming the file, the case, the field
and what was expected, so a bad file stops collection before anything runs.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pytest_obelize_bench._util.caps import CASE_FILE_BYTES
from pytest_obelize_bench._util.documents import yaml_with_digest
from pytest_obelize_bench._util.safe_io import UntrustedFileError, read_untrusted
from pytest_obelize_bench._util.validation import QUOTE_CHARS, describe, quoted
from pytest_obelize_bench.casefile.reviews import FIXTURE_REVIEWS, ReviewFileError, load_reviews
from pytest_obelize_bench.casefile.rules import (
    case_row_problems,
    control_row_problems,
    file_problems,
    fixture_row_problems,
)
from pytest_obelize_bench.casefile.schema import (
    ACTIONABLE_KINDS,
    CONTROL_SHAPES,
    DEFAULT_PYTHON,
    EXACT_VERSION,
    FULL_SHA,
    ISO_DATE,
    MAX_CASES_PER_OWNER,
    PACK_DISTRIBUTIONS,
    SAFE_NAME,
    SPLITS,
    UV_KEY,
    CallSite,
    Case,
    CaseFile,
    CaseFileError,
    CaseRow,
    ControlRow,
    FixtureRow,
    ForbiddenPosition,
    GroundTruth,
    ManifestRow,
    Problem,
    Retired,
    Review,
    SplitMove,
    _FileHead,
    key_symbols,
    slug,
)

__all__ = [
    "ACTIONABLE_KINDS",
    "CONTROL_SHAPES",
    "DEFAULT_PYTHON",
    "EXACT_VERSION",
    "FULL_SHA",
    "ISO_DATE",
    "MAX_CASES_PER_OWNER",
    "PACK_DISTRIBUTIONS",
    "QUOTE_CHARS",
    "SAFE_NAME",
    "SPLITS",
    "UV_KEY",
    "CallSite",
    "Case",
    "CaseFile",
    "CaseFileError",
    "CaseRow",
    "ControlRow",
    "FixtureRow",
    "ForbiddenPosition",
    "GroundTruth",
    "ManifestRow",
    "Problem",
    "Retired",
    "Review",
    "SplitMove",
    "key_symbols",
    "quoted",
    "slug",
]


# -- reading ------------------------------------------------------------------------


def _row_id(row: Any, index: int, kind: str) -> str:
    if isinstance(row, dict):
        if isinstance(row.get("id"), str):
            return str(row["id"])
        if isinstance(row.get("full_name"), str):
            return slug(row["full_name"])
    return f"<{kind} #{index + 1}>"


def _read_yaml(path: Path) -> tuple[Any, str]:
    """The file's YAML and the sha256 of the very bytes it was parsed from (a run names the file by it)."""
    try:
        return yaml_with_digest(read_untrusted(path, CASE_FILE_BYTES), str(path))
    except UntrustedFileError as exc:
        # missing, a link, too large, not UTF-8 or not YAML: no rule can be checked at all
        raise CaseFileError([Problem(UNREADABLE, str(exc).splitlines()[0])]) from None


#: The rule name of a case file that could not be read as YAML at all.
UNREADABLE = "unreadable"


def load_case_file(path: Path | str) -> CaseFile:
    """Read and validate a round's case file, or raise ``CaseFileError`` listing every problem."""
    case_file, problems = check_case_file(path)
    if problems or case_file is None:
        raise CaseFileError(problems)
    return case_file


def check_case_file(path: Path | str) -> tuple[CaseFile | None, list[Problem]]:
    """Every problem of a case file, each tagged with the rule it breaks (schema problems too).

    The file is read every time (bounded, no link); what its bytes give is parsed once a process:
    a summarize reads the same two or three case files for every round, page and measurement, and
    parsing one of 300 KB costs some 0.15 s. Same path and same bytes, same answer (a frozen model).
    """
    try:
        data = read_untrusted(Path(path), CASE_FILE_BYTES)
    except UntrustedFileError as exc:
        # missing, a link, too large or not a regular file: no rule can be checked at all
        return None, [Problem(UNREADABLE, str(exc).splitlines()[0])]
    case_file, problems = _checked(str(path), data)
    return case_file, list(problems)


@functools.lru_cache(maxsize=16)
def _checked(name: str, data: bytes) -> tuple[CaseFile | None, tuple[Problem, ...]]:
    case_file, problems = _check_bytes(Path(name), data)
    return case_file, tuple(problems)


def _check_bytes(path: Path, raw: bytes) -> tuple[CaseFile | None, list[Problem]]:
    try:
        data, digest = yaml_with_digest(raw, str(path))
    except UntrustedFileError as exc:
        return None, [Problem(UNREADABLE, str(exc).splitlines()[0])]
    if not isinstance(data, dict):
        return None, [Problem("schema", f"{path}: expected a mapping with round, cases and controls at the top")]
    problems: list[Problem] = []
    head_fields = {k: v for k, v in data.items()}
    try:
        head = _FileHead.model_validate(head_fields)
    except ValidationError as exc:
        for error in exc.errors():
            field, message = describe(error)
            problems.append(Problem("schema", f"{path}: top level: {field}: {message}"))
        return None, problems

    cases: list[Case] = []
    for index, raw in enumerate(head.cases):
        case_id = _row_id(raw, index, "case")
        try:
            row = CaseRow.model_validate(raw)
        except ValidationError as exc:
            for error in exc.errors():
                field, message = describe(error)
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
                reviewer=row.reviewer,
                reviewed_at=row.reviewed_at,
            )
        )
        problems.extend(Problem(rule, f"{path}: case {row.id}: {text}") for rule, text in case_row_problems(row))

    for index, raw in enumerate(head.controls):
        case_id = _row_id(raw, index, "control")
        try:
            control = ControlRow.model_validate(raw)
        except ValidationError as exc:
            for error in exc.errors():
                field, message = describe(error)
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
        sha256=digest,
        round=head.round,
        from_version=head.from_version,
        to_version=head.to_version,
        cases=tuple(sorted(cases, key=lambda c: c.id)),
        split_moves=tuple(head.split_moves),
        kept_sides=tuple(head.kept_sides.cases) if head.kept_sides is not None else (),
    ), problems


def load_fixture(directory: Path | str) -> Case:
    """Read ``<directory>/case.yaml``; the fixture's repository is ``<directory>/repo``."""
    directory = Path(directory)
    path = directory / "case.yaml"
    data, _ = _read_yaml(path)
    case_id = _row_id(data, 0, "fixture")
    try:
        row = FixtureRow.model_validate(data)
    except ValidationError as exc:
        lines = []
        for error in exc.errors():
            field, message = describe(error)
            lines.append(f"{path}: case {case_id}: {field}: {message}")
        raise CaseFileError(lines) from None
    problems = [f"{path}: case {row.id}: {text}" for _, text in fixture_row_problems(row, directory.name)]
    if not (directory / "repo").is_dir():
        problems.append(f"{path}: case {row.id}: repo: expected a directory {directory / 'repo'}")
    problems.extend(_fixture_review_problems(directory / FIXTURE_REVIEWS, row.id))
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


def _fixture_review_problems(path: Path, fixture_id: str) -> list[str]:
    """A fixture's ``reviews.yaml``: readable, and answering for this fixture only."""
    try:
        book = load_reviews(path)
    except ReviewFileError as exc:
        return [str(exc)]
    return [
        f"{path}: case {case!r}: case: expected {fixture_id!r}, the fixture's id"
        for case, _ in book
        if case != fixture_id
    ]


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
