"""The comparison record, ``results/comparison/round-N.json``: upstream's shape, read strictly.

Upstream's round-1 file loads unchanged; the fields this project adds (``exclude_newer``, the
prompt's and the arm file's digests, obelize's own pass and each case's error) are optional, so
an imported record and one this harness writes are the same model.  A bad file gets one line
naming the file, the case and the field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from pytest_obelize_bench._util.caps import MEASURE_DOCUMENT_BYTES
from pytest_obelize_bench._util.documents import read_document
from pytest_obelize_bench._util.strict_model import StrictModel
from pytest_obelize_bench._util.validation import field_path, message_of
from pytest_obelize_bench.grading.record import SuiteResult

#: The largest comparison record read.
MAX_RECORD_BYTES = MEASURE_DOCUMENT_BYTES
#: Obelize's arm is always called this; the agent's name comes from its arm file.
OBELIZE = "obelize"
#: The untouched tree's scan, credited to no arm.
BASE = "base"

#: One scan finding as the record stores it: path, line, kind, symbol.
Finding = tuple[str, int, str, str | None]


class Change(StrictModel):
    """One line of ``git diff --numstat`` against the pin (null counts for a binary file)."""

    path: str
    added: int | None
    removed: int | None
    status: str


class Guide(StrictModel):
    """The guide snapshot the agent was given: where it came from, when, and its digest."""

    url: str
    fetched_at: str
    sha256_html: str | None = None
    sha256_text: str | None = None
    bytes_html: int | None = None
    bytes_text: int | None = None
    #: The snapshot file this harness hands the agent (upstream kept two renderings instead).
    sha256: str | None = None
    bytes: int | None = None


class Repeat(StrictModel):
    """A second run of the agent from the same bytes in a fresh tree."""

    changes: list[Change]
    findings: list[Finding]
    started_at: int | None
    finished_at: int | None
    runtime_seconds: float | None


class ArmError(StrictModel):
    """What stopped an arm on one case: the case measured nothing for that arm."""

    arm: str
    step: str
    reason: str
    detail: str = ""


class ObelizePass(StrictModel):
    """Obelize's own pass in this harness (upstream's record kept only its changes)."""

    runtime_seconds: float | None = None
    written: list[str] = Field(default_factory=list)
    compiles: bool | None = None
    missing_key_files: list[str] = Field(default_factory=list)
    #: Key rows its plan applied and its withheld list did not hold back: the calibration's other side.
    plan_migrated: int | None = None
    tests_after: SuiteResult | None = None


class TestsAfter(StrictModel):
    """The agent tree's suite, as step 8 runs obelize's."""

    status: Literal["pass", "fail", "inconclusive", "not_run"]
    passed: int | None = None
    failed: int | None = None
    skipped: int | None = None
    sdk_to: str | None = None

    def suite(self) -> SuiteResult:
        return SuiteResult(status=self.status, passed=self.passed, failed=self.failed, skipped=self.skipped)


class CaseComparison(StrictModel):
    """One dev case: the agent's pass in upstream's fields, the three scans, obelize's changes."""

    slug: str
    changes: list[Change]
    compiles: bool | None
    findings: dict[str, list[Finding]]
    started_at: int | None
    finished_at: int | None
    runtime_seconds: float | None
    missing_key_files: list[str]
    obelize_changes: list[Change]
    repeat: Repeat | None
    tests_after: TestsAfter | None
    written: list[str]
    # -- added by this project (absent from upstream's round 1) --
    tests_baseline: SuiteResult | None = None
    obelize: ObelizePass | None = None
    errors: list[ArmError] = Field(default_factory=list)
    prompt_sha256: str | None = None
    #: each arm's unified diff against the pin, when the repository's licence lets it be published
    #: and it is at most 256 KiB (an arm whose diff is not here wrote none, or one not kept)
    diffs: dict[str, str] = Field(default_factory=dict)


class ComparisonRecord(StrictModel):
    schema_version: int
    round: int
    prepared_at: str
    arms: list[str]
    guide: Guide
    cases: dict[str, CaseComparison]
    exclude_newer: str | None = None
    prompt_sha256: str | None = None
    arm_file_sha256: str | None = None

    @property
    def agent(self) -> str:
        """The arm that is not obelize."""
        others = [arm for arm in self.arms if arm != OBELIZE]
        return others[0] if others else "general_agent"


class ComparisonRecordError(ValueError):
    """A comparison record that cannot be read, in one line."""


def _problem(exc: ValidationError, data: Any, source: str) -> str:
    problem = exc.errors()[0]
    loc = tuple(problem["loc"])
    if len(loc) >= 2 and loc[0] == "cases":
        return f"{source}: case {loc[1]}: {field_path(loc[2:])}: {message_of(problem)}"
    return f"{source}: {field_path(loc)}: {message_of(problem)}"


def parse_comparison(data: Any, source: str) -> ComparisonRecord:
    """The record from parsed JSON, or ``ComparisonRecordError`` naming the case and the field."""
    try:
        record = ComparisonRecord.model_validate(data)
    except ValidationError as exc:
        raise ComparisonRecordError(_problem(exc, data, source)) from None
    if OBELIZE not in record.arms or len(record.arms) != 2:
        raise ComparisonRecordError(f"{source}: arms: must be obelize and one agent, not {record.arms}")
    for case, row in record.cases.items():
        unknown = sorted(set(row.findings) - {BASE, *record.arms})
        if unknown:
            raise ComparisonRecordError(f"{source}: case {case}: findings: unknown scan {unknown[0]!r}")
    return record


def read_comparison(path: Path) -> ComparisonRecord:
    return read_document(Path(path), MAX_RECORD_BYTES, parse_comparison, ComparisonRecordError, form="json")


def dump_comparison(record: ComparisonRecord) -> str:
    """The record as written: sorted keys, two-space indent, unset optional fields left out."""
    return json.dumps(record.model_dump(mode="json", exclude_none=False), indent=1, sort_keys=True) + "\n"


__all__ = [
    "BASE",
    "OBELIZE",
    "ArmError",
    "CaseComparison",
    "Change",
    "ComparisonRecord",
    "ComparisonRecordError",
    "Finding",
    "Guide",
    "ObelizePass",
    "Repeat",
    "TestsAfter",
    "dump_comparison",
    "parse_comparison",
    "read_comparison",
]
