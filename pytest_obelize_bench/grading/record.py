"""The per-case result record: reads the upstream schema_version 2 files, writes ours (3).

Version 3 is a superset of 2. Every measurement may be null, because a case that errored
did not make it, and a null must never look measured.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from pytest_obelize_bench.grading.attempts import parse_stem, record_file_name

SCHEMA_VERSION = 3
READABLE_SCHEMA_VERSIONS = (2, 3)

TIERS: tuple[str, ...] = (
    "error",
    "wrong",
    "unsupported",
    "partial",
    "verified_success",
    "patched_unverified",
)
Tier = Literal["error", "wrong", "unsupported", "partial", "verified_success", "patched_unverified"]
SuiteStatus = Literal["pass", "fail", "inconclusive", "not_run"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SuiteResult(_Model):
    status: SuiteStatus = "not_run"
    passed: int | None = None
    failed: int | None = None
    skipped: int | None = None


class Measurements(_Model):
    detected: int | None = None
    false_positive: int | None = None
    missed_call_site: int | None = None
    forbidden_reported: int | None = None
    #: findings of kind ``manifest`` (dependency pins): what a negative control must not report either.
    manifest_reported: int | None = None
    patch_applied: bool | None = None
    patch_compiles: bool | None = None
    unmigrated: int | None = None
    false_positive_edit: int | None = None
    tests_baseline: SuiteResult = SuiteResult()
    tests_after: SuiteResult = SuiteResult()
    tests_cover_change: bool | None = None
    human_edits: int | None = None
    patch_correct: bool | None = None
    pr_opened: bool | None = None
    pr_merged: bool | None = None
    runtime_seconds: float | None = None
    llm_tokens_in: int | None = None
    llm_tokens_out: int | None = None
    llm_cost_usd: float | None = None


class ErrorInfo(_Model):
    step: str
    reason: str
    detail: str


class StepRecord(_Model):
    number: int
    name: str
    argv: list[str]
    exit_code: int
    duration_s: float
    timed_out: bool


class Provenance(_Model):
    obelize_version: str | None = None
    obelize_commit: str | None = None
    obelize_tree_dirty: bool | None = None
    pack: str | None = None
    pack_sha256: str | None = None
    spec_sha256: str | None = None
    python: str | None = None
    python_used: str | None = None
    python_executable: str | None = None
    python_build: str | None = None
    machine: str | None = None
    os: str | None = None
    sdk_from: str | None = None
    sdk_to: str | None = None
    uv_version: str | None = None
    exclude_newer: str | None = None
    packages_sha256: str | None = None
    run_at: str | None = None
    harness_version: str | None = None
    harness_commit: str | None = None
    harness_tree_dirty: bool | None = None
    allow_dirty: bool | None = None
    #: ``bwrap <version> (<the suites' network>)`` or ``none``; null in records older than it.
    sandbox: str | None = None
    #: ``content_key.content_key`` of the run; null in records older than it and in fixtures.
    content_key: str | None = None
    #: The run id a ``--bench-resume`` kept this record from (it was not run again); else null.
    resumed_from: str | None = None
    #: ``gw3@host`` under xdist (its logs are on that machine); null in a serial run and older records.
    worker: str | None = None


class Record(_Model):
    schema_version: int = SCHEMA_VERSION
    case: str
    origin: Literal["corpus", "fixture"]
    control: bool
    split: Literal["dev", "holdout"] | None
    error: ErrorInfo | None = None
    measurements: Measurements
    steps: list[StepRecord] = []
    provenance: Provenance = Provenance()
    tier: Tier
    #: Which run of the case this is under ``--bench-repeat`` (1 for a single run); absent in
    #: records written before repeats existed, which read as attempt 1.
    attempt: int | None = None

    @property
    def attempt_number(self) -> int:
        return self.attempt or 1

    def to_json(self) -> str:
        """The published form: sorted keys, indent 2, a trailing newline."""
        return json.dumps(self.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"


class RecordError(ValueError):
    """A record file that cannot be read as a record, with the file named."""


def parse_record(text: str, source: str = "<record>") -> Record:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise RecordError(f"{source}: not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise RecordError(f"{source}: expected a JSON object")
    version = data.get("schema_version")
    if version not in READABLE_SCHEMA_VERSIONS:
        raise RecordError(f"{source}: schema_version {version!r} is not one of {READABLE_SCHEMA_VERSIONS}")
    try:
        return Record.model_validate(data)
    except Exception as exc:  # pydantic's message names the field
        raise RecordError(f"{source}: {exc}") from None


def read_record(path: Path) -> Record:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RecordError(f"{path}: cannot be read: {exc}") from None
    return parse_record(text, str(path))


#: The JSON files a round folder holds beside its records.
NOT_RECORDS = frozenset({"summary.json", "publication.json"})


def repeat_stems(names: Iterable[str], case_ids: Iterable[str] | None = None) -> dict[str, str]:
    """Of these file names, the repeats (``<case>.attempt-N.json``, N >= 2) of these cases (of any
    case when ``case_ids`` is None): file stem to case id."""
    wanted = None if case_ids is None else set(case_ids)
    found: dict[str, str] = {}
    for name in names:
        if not name.endswith(".json"):
            continue
        stem = name.removesuffix(".json")
        case, attempt = parse_stem(stem)
        if attempt >= 2 and (wanted is None or case in wanted):
            found[stem] = case
    return found


def read_round(folder: Path) -> dict[str, Record]:
    """The first attempt of every case in a round folder, keyed by case id (absent folder: empty).

    Repeats (``--bench-repeat``) are left out: the headline counts one attempt per case, the
    first, so a case whose first attempt has no record has none here.
    """
    return {
        case: attempts[0] for case, attempts in read_round_attempts(folder).items() if attempts[0].attempt_number == 1
    }


def read_round_attempts(folder: Path) -> dict[str, list[Record]]:
    """Every attempt of every case in a round folder, sorted by attempt, keyed by case id.

    A file whose name is not its record's (``<case>.json`` or ``<case>.attempt-N.json``) is
    left out: it is not that case's evidence, and the published-round check reports it.
    """
    if not folder.is_dir():
        return {}
    found: dict[str, list[Record]] = {}
    for path in sorted(folder.glob("*.json")):
        if path.name in NOT_RECORDS:
            continue
        record = read_record(path)
        if path.name != record_file_name(record.case, record.attempt):
            continue
        found.setdefault(record.case, []).append(record)
    return {case: sorted(records, key=lambda r: r.attempt_number) for case, records in found.items()}


def comparable(record: Record) -> dict[str, Any]:
    """What two runs of one case must agree on: all but wall-clock time and provenance."""
    measurements = record.model_dump(mode="json")["measurements"]
    measurements.pop("runtime_seconds", None)
    return {
        "tier": record.tier,
        "error": None if record.error is None else record.error.model_dump(),
        "measurements": measurements,
        "steps": [[step.name, step.exit_code] for step in record.steps],
    }


def differences(got: dict[str, Any], want: dict[str, Any]) -> list[str]:
    """Field-by-field differences between two comparable views, readable one per line."""
    lines = []
    for key in ("tier", "error", "steps"):
        if got.get(key) != want.get(key):
            lines.append(f"{key}: got {got.get(key)!r}, expected {want.get(key)!r}")
    got_m, want_m = got.get("measurements") or {}, want.get("measurements") or {}
    for key in sorted(set(got_m) | set(want_m)):
        if got_m.get(key) != want_m.get(key):
            lines.append(f"measurements.{key}: got {got_m.get(key)!r}, expected {want_m.get(key)!r}")
    return lines
