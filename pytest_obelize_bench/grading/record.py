"""The per-case result record: reads the upstream schema_version 2 files, writes ours (3).

Version 3 is a superset of 2. Every measurement may be null, because a case that errored
did not make it, and a null must never look measured.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field

from pytest_obelize_bench._util.strict_model import StrictModel, committed_json
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


class _Model(StrictModel):
    # Each field's docstring is its description, which the record reference (docs/) is generated from.
    model_config = ConfigDict(use_attribute_docstrings=True)


class SuiteResult(_Model):
    status: SuiteStatus = "not_run"
    """pass, fail, inconclusive or not_run, the words obelize verify uses"""
    passed: int | None = None
    """from a junit report the harness asked for; null without one, never 0"""
    failed: int | None = None
    """likewise"""
    skipped: int | None = None
    """likewise"""


class Measurements(_Model):
    detected: int | None = None
    """call sites obelize found"""
    false_positive: int | None = None
    """findings that are not real usage"""
    missed_call_site: int | None = None
    """ground-truth call sites obelize did not find"""
    forbidden_reported: int | None = None
    """findings of any kind at a must_not_report position (not a tier input)"""
    manifest_reported: int | None = None
    """findings of kind manifest (dependency pins): what a negative control must not report either."""
    patch_applied: bool | None = None
    """whether a patch was written"""
    patch_compiles: bool | None = None
    """whether every .py file the run wrote compiles under the case's interpreter; null when nothing was written"""
    unmigrated: int | None = None
    """ground-truth rows (call sites and manifest pins) the run left as they were"""
    false_positive_edit: int | None = None
    """applied edits at a position no ground-truth row names; on a negative control, every applied edit"""
    tests_baseline: SuiteResult = SuiteResult()
    """the repository's suite before the migration"""
    tests_after: SuiteResult = SuiteResult()
    """the suite after the migration and the new SDK's install, the legacy SDK still installed"""
    tests_cover_change: bool | None = None
    """the reviewer's judgement, copied from the case file's ground truth"""
    human_edits: int | None = None
    """hunks a human had to write after obelize; null until a reviewer reads the patch"""
    patch_correct: bool | None = None
    """the reviewer's judgement; null until made"""
    pr_opened: bool | None = None
    """null: the harness opens no pull request"""
    pr_merged: bool | None = None
    """null, for the same reason"""
    runtime_seconds: float | None = None
    """wall-clock time of the obelize run"""
    llm_tokens_in: int | None = None
    """tokens sent to a model, if one was used (a separate arm, never the headline)"""
    llm_tokens_out: int | None = None
    """tokens received from a model, if one was used"""
    llm_cost_usd: float | None = None
    """the model's cost, if one was used"""


class ErrorInfo(_Model):
    step: str
    """the step that failed (its record name, or harness)"""
    reason: str
    """the error reason: fetch_failed, venv_failed, install_failed, version_mismatch, obelize_failed, timeout, ..."""
    detail: str
    """the step's output, secrets redacted, the machine's paths and names labelled, cut to 200 characters"""


class StepRecord(_Model):
    number: int
    """the protocol's step number"""
    name: str
    """the step's name (fetch, venv, install, baseline, fix, compile, after, ...)"""
    argv: list[str]
    """the command, harness paths shown as <case>, <logs>, <work>, <repo>, <harness-python>, <harness-uv>"""
    exit_code: int
    """its exit status"""
    duration_s: float
    """its wall-clock duration"""
    timed_out: bool
    """whether it was killed at its time limit"""


class Provenance(_Model):
    obelize_version: str | None = None
    """the tool's version, read once when the round starts"""
    obelize_commit: str | None = None
    """its commit, for a source checkout"""
    obelize_tree_dirty: bool | None = None
    """whether that checkout had uncommitted changes"""
    obelize_exclude_newer: str | None = None
    """the cutoff the named obelize release was exempted to, beside exclude_newer for its dependencies"""
    pack: str | None = None
    """the pack that ran"""
    pack_sha256: str | None = None
    """the pack's sha256"""
    spec_sha256: str | None = None
    """the sha256 of the ScanSpec a scan reads"""
    python: str | None = None
    """the interpreter key the case asked for"""
    python_used: str | None = None
    """the key used (differs under --bench-interpreter=minor)"""
    python_executable: str | None = None
    """the interpreter's path as it printed it, labelled as a step's output is"""
    python_build: str | None = None
    """its sys.version, which tells two machines' resolutions of one key apart"""
    machine: str | None = None
    """platform.machine() of the case interpreter"""
    os: str | None = None
    """the operating system"""
    sdk_from: str | None = None
    """the legacy SDK's version, as the case interpreter reports it"""
    sdk_to: str | None = None
    """the new SDK's version, likewise"""
    uv_version: str | None = None
    """the uv that built the case's venv"""
    exclude_newer: str | None = None
    """the cutoff every install resolved as of"""
    packages_sha256: str | None = None
    """the sha256 of the installed package set after the new SDK's install"""
    run_at: str | None = None
    """when the case ran (UTC)"""
    harness_version: str | None = None
    """this plugin's version"""
    harness_commit: str | None = None
    """this project's commit"""
    harness_tree_dirty: bool | None = None
    """whether this project's tree had uncommitted changes"""
    allow_dirty: bool | None = None
    """whether --bench-allow-dirty let a dirty tree run"""
    sandbox: str | None = None
    """bwrap <version> (<the suites' network>) or none; null in records older than it."""
    content_key: str | None = None
    """content_key.content_key of the run; null in records older than it and in fixtures."""
    resumed_from: str | None = None
    """The run id a --bench-resume kept this record from (it was not run again); else null."""
    worker: str | None = None
    """gw3@host under xdist (its logs are on that machine); null in a serial run and older records."""
    patch_sha256: str | None = None
    """sha256 of the patch obelize wrote (patch.diff): what a review in cases/reviews/ answers for; null when
    nothing was written, and in older records."""
    env_template: str | None = None
    """The template key of the case's venv (it came from or built it); null without one and in older records."""
    env_view: str | None = None
    """overlay or copy (of a template), built (made it), installed (its own installs); null in fixtures."""
    env_template_after: str | None = None
    """The key of the template of the new SDK installed over env_template that the case's overlay took for
    its after suite (no install-to step), or built (its install-to step); null when it installed into a view of
    its own, and in older records."""


class Record(_Model):
    schema_version: int = SCHEMA_VERSION
    """3 when written by this plugin; 2 in the upstream harness's records"""
    case: str
    """the case id, also the file's name"""
    origin: Literal["corpus", "fixture"]
    """a case of the case file, or an offline fixture"""
    control: bool
    """a negative control, excluded from the success rate"""
    split: Literal["dev", "holdout"] | None
    """the case's side of the split (null for a fixture)"""
    error: ErrorInfo | None = None
    """what failed, when the tier is error"""
    measurements: Measurements
    """the protocol's per-case result fields"""
    steps: list[StepRecord] = Field(default_factory=list)
    """every step run, in order"""
    provenance: Provenance = Provenance()
    """what ran, where and as of when"""
    tier: Tier
    """computed by tier() in the protocol's order, never assigned"""
    attempt: int | None = None
    """Which run of the case this is under --bench-repeat (1 for a single run); absent in records
    written before repeats existed, which read as attempt 1."""

    @property
    def attempt_number(self) -> int:
        return self.attempt or 1

    def to_json(self) -> str:
        return committed_json(self)


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


#: Files of a round or run folder that are not records: a published round's summary and
#: publication note, and a run folder's manifest (``records/runs.py``).
NOT_RECORDS = frozenset({"summary.json", "publication.json", "run.json", "history.json"})


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


#: Steps that prepare a case's environment.  Which of them run depends on whether a template of
#: its key existed (``case/templates.py``), so on which case ran first: two runs need not agree on
#: them.  The checks of what the environment holds (``install-from-check``, ``freeze``) stay.
PREPARATION_STEPS = frozenset({"venv", "resolve", "install", "install-from", "install-to", "bytecode"})


def comparable(record: Record) -> dict[str, Any]:
    """What two runs of one case must agree on: all but wall-clock time, provenance and preparation."""
    measurements = record.model_dump(mode="json")["measurements"]
    measurements.pop("runtime_seconds", None)
    return {
        "tier": record.tier,
        "error": None if record.error is None else record.error.model_dump(),
        "measurements": measurements,
        "steps": [[step.name, step.exit_code] for step in record.steps if step.name not in PREPARATION_STEPS],
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
