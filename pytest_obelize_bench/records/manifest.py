"""``run.json``: the one model of a run's manifest, written by this harness and read by all.

The session writes it strictly (``write_manifest``) and the harness's own commands read it back
strictly (``read_manifest``). A promotion decision may be asked about a run an older harness
wrote, so ``read_manifest_leniently`` reads the same model from an untrusted file: fields it
does not know are dropped, the older names (``run_id``, ``harness_version``, ``complete``) are
mapped, and a fact that is missing stays missing for the decision to call insufficient.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, field_serializer

from pytest_obelize_bench._util.caps import MANIFEST_BYTES
from pytest_obelize_bench._util.safe_io import UntrustedFileError, read_untrusted_json, write_atomically
from pytest_obelize_bench._util.strict_model import StrictModel, committed_json
from pytest_obelize_bench._util.validation import problem_text
from pytest_obelize_bench.casefile.schema import CaseFile
from pytest_obelize_bench.grading.record import RecordError
from pytest_obelize_bench.isolation.gitquery import HarnessInfo
from pytest_obelize_bench.records.published import RUNS_DIR, read_bounded_text
from pytest_obelize_bench.tool.info import ToolIdentity
from pytest_obelize_bench.tool.packs import PackInfo

MANIFEST_NAME = "run.json"
MANIFEST_SCHEMA = 1
#: The run that stands for a round imported from the upstream harness (round 1).
IMPORTED_KIND: Literal["imported"] = "imported"
SESSION_KIND: Literal["session"] = "session"
#: A run written by ``regrade --write``: another run's records graded again under the current keys.
REGRADED_KIND: Literal["regrade"] = "regrade"
INTERRUPTED = "it was interrupted"


class Selection(StrictModel):
    """How the session chose its items; documentation, since completeness is judged by records."""

    keyword: str | None = None
    marker: str | None = None
    split: str | None = None
    last_failed: bool = False
    rerun_errors: bool = False


class Replaced(StrictModel):
    """The attempt a rerun replaced: kept under ``attempts/`` as ``kept_as``, with its error."""

    case: str
    kept_as: str
    tier: str
    reason: str | None = None
    error_class: str | None = None


class Rerun(StrictModel):
    at: str
    cases: list[str]
    #: ``errors`` (infrastructure errors only) or ``all-errors`` (tool errors too, asked for).
    kind: str = "errors"
    replaced: list[Replaced] = Field(default_factory=list)


def portable_path(path: Path, results: Path) -> str:
    """``path`` as a published file may name it: relative to the results folder's parent (the
    project) when inside it, else under ``<tmp>`` or ``~``; never this machine's absolute path when
    one of those fits."""
    path = Path(path).resolve()
    for base, label in (
        (Path(results).resolve().parent, ""),
        (Path(tempfile.gettempdir()).resolve(), "<tmp>/"),
        (Path.home().resolve(), "~/"),
    ):
        if path.is_relative_to(base):
            return label + path.relative_to(base).as_posix()
    return str(path)


def resolve_portable(text: str, results: Path) -> Path:
    """The path ``portable_path`` wrote, on this machine."""
    if text.startswith("<tmp>/"):
        return Path(tempfile.gettempdir()) / text.removeprefix("<tmp>/")
    if text.startswith("~/"):
        return Path.home() / text.removeprefix("~/")
    path = Path(text)
    return path if path.is_absolute() else Path(results).resolve().parent / path


class CaseFileRef(StrictModel):
    """The case file a run ran from: its path (``portable_path``) and the sha256 of its bytes."""

    path: str
    sha256: str

    def resolve(self, results: Path) -> Path:
        return resolve_portable(self.path, results)


def case_file_ref(case_file: CaseFile, results: Path) -> CaseFileRef:
    """The reference a run and a publication record for ``case_file``: the digest of the bytes it
    was loaded from, never a second read that could see another file."""
    return CaseFileRef(path=portable_path(Path(case_file.path).resolve(), results), sha256=case_file.sha256)


class RunManifest(StrictModel):
    """``run.json``: what a run was asked to do and what it did."""

    schema_version: int = MANIFEST_SCHEMA
    run: str
    round: int
    kind: Literal["session", "imported", "regrade"] = "session"
    note: str | None = None
    #: a regraded run's source run, and when it was graded again
    regraded_from: str | None = None
    regraded_at: str | None = None
    selection: Selection = Selection()
    cases_expected: list[str] = Field(default_factory=list)
    cases_recorded: list[str] = Field(default_factory=list)
    #: rows of the case file named out of reach when the run started (``--bench-unreachable``), with
    #: the reason for each: not run, not in ``cases_expected``, and named wherever the run is published
    unreachable: dict[str, str] = Field(default_factory=dict)
    #: the case file the run ran from, and the work root its logs are under
    case_file: CaseFileRef | None = None
    work_root: str | None = None
    #: what the tool under test is (its paths on the controller are not kept)
    tool: ToolIdentity | None = None
    tools_recorded: list[str] = Field(default_factory=list)
    packs: dict[str, PackInfo] = Field(default_factory=dict)
    exclude_newer: str | None = None
    interpreter_policy: str | None = None
    sandbox: str = "none"
    harness: HarnessInfo = HarnessInfo()
    started_at: str | None = None
    ended_at: str | None = None
    interrupted: bool = False
    stopped: str | None = None
    reruns: list[Rerun] = Field(default_factory=list)
    #: Registered when the run starts, for the promotion gate: the sha256 of the promotion policy
    #: in force (``cases/promotion.yaml``), of the case file's keys (``casefile/keys_digest.py``), the
    #: controller's machine class and the attempts per case (``--bench-repeat``).
    promotion_policy_sha256: str | None = None
    case_keys_sha256: str | None = None
    machine_class: str | None = None
    repeat: int | None = None
    #: every file of the run folder (but run.json) and its sha256, written when the run ends
    digests: dict[str, str] = Field(default_factory=dict)
    #: Read from manifests of older harnesses only (``complete: false`` said the run was not
    #: whole); never written: this harness says so with ``ended_at``, ``interrupted`` and ``stopped``.
    complete: bool | None = Field(default=None, exclude=True)

    @field_serializer("harness")
    def _harness(self, harness: HarnessInfo) -> dict[str, Any]:
        """A run that knows nothing of its harness (an imported round's) says ``{}``, as it always has."""
        return {} if harness == HarnessInfo() else harness.model_dump(mode="json")

    def to_json(self) -> str:
        data = self.model_dump(mode="json")
        if not data["unreachable"]:  # a run that named no row out of reach writes what it always wrote
            del data["unreachable"]
        return committed_json(data)

    def tool_field(self, name: str) -> str | None:
        value = getattr(self.tool, name, None)
        return None if value is None else str(value)

    def field(self, name: str) -> str | None:
        """A top-level field as text, or ``harness.version`` / ``harness.commit``; None when absent."""
        key = name.removeprefix("harness.")
        value = getattr(self.harness, key, None) if key != name else getattr(self, name)
        return None if value is None else str(value)

    def unfinished(self, *, until_ended: bool = True) -> list[str]:
        """Why the run is not whole by its own account: stopped, interrupted, never ended (the last
        only with ``until_ended``: a session publishing its own run has not ended it yet)."""
        reasons = []
        if self.complete is False:
            reasons.append("complete is false")
        if self.stopped:
            reasons.append(f"it stopped at {self.stopped}")
        if self.interrupted:
            reasons.append(INTERRUPTED)
        if until_ended and self.ended_at is None:
            reasons.append("it has no ended_at: its session never finished")
        return reasons


def read_manifest(folder: Path) -> RunManifest:
    path = Path(folder) / MANIFEST_NAME
    text = read_bounded_text(path, MANIFEST_BYTES)
    try:
        return RunManifest.model_validate_json(text)
    except ValidationError as exc:
        raise RecordError(f"{path}: not a run manifest: {problem_text(exc.errors()[0])}") from None
    except ValueError as exc:
        raise RecordError(f"{path}: not a run manifest: {str(exc).splitlines()[0]}") from None


def write_manifest(folder: Path, manifest: RunManifest) -> Path:
    path = Path(folder) / MANIFEST_NAME
    write_atomically(path, manifest.to_json())
    return path


def _known(model: type[BaseModel], data: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if key in model.model_fields}


def _salvaged(model: type[BaseModel], data: dict[str, Any]) -> dict[str, Any]:
    """What of a nested part an older harness wrote still fits: unknown fields and values this
    model would refuse (a tool ``source`` named differently) are dropped, as facts not given."""
    known = _known(model, data)
    try:
        model.model_validate(known)
    except ValidationError as exc:
        for error in exc.errors():
            if error["loc"]:
                known.pop(str(error["loc"][0]), None)
    return known


def lenient_manifest_data(data: dict[str, Any], folder_name: str) -> dict[str, Any]:
    """An older or foreign ``run.json``'s fields as this model names them; unknown ones dropped."""
    known = _known(RunManifest, data)
    if "run" not in known:
        named = data.get("run_id")
        known["run"] = named if isinstance(named, str) and named else folder_name
    harness = known.get("harness")
    harness = dict(harness) if isinstance(harness, dict) else {}
    if "version" not in harness and isinstance(data.get("harness_version"), str):
        harness["version"] = data["harness_version"]
    known["harness"] = harness
    for name, model in (("selection", Selection), ("tool", ToolIdentity), ("harness", HarnessInfo)):
        if isinstance(known.get(name), dict):
            known[name] = _salvaged(model, known[name])
    if isinstance(known.get("packs"), dict):
        known["packs"] = {
            pack: _salvaged(PackInfo, {"pack": pack, **info})
            for pack, info in known["packs"].items()
            if isinstance(info, dict)
        }
    sandbox = known.get("sandbox")
    if isinstance(sandbox, dict):
        known["sandbox"] = str(sandbox.get("mode") or json.dumps(sandbox, sort_keys=True))
    # A null where this model has a default (``interrupted: null``, ``packs: null``) is read as absent.
    return {
        key: value for key, value in known.items() if value is not None or RunManifest.model_fields[key].default is None
    }


def _round_of(folder: Path) -> int | None:
    """N of ``round-N/runs/<run>``, the layout every run folder has; None elsewhere."""
    match = re.fullmatch(r"round-([1-9][0-9]*)", folder.parent.parent.name)
    return int(match.group(1)) if match and folder.parent.name == RUNS_DIR else None


def read_manifest_leniently(path: Path) -> RunManifest:
    """``run.json`` of any harness, read as untrusted (bounded, no symlink): ``UntrustedFileError``
    naming the file and the field when even the lenient reading fails. A manifest that does not
    name its round takes it from the folder it is in, ``round-N/runs/<run>``."""
    data = read_untrusted_json(path, MANIFEST_BYTES)
    folder = Path(path).parent
    known = lenient_manifest_data(data, folder.name)
    if "round" not in known and (number := _round_of(folder)) is not None:
        known["round"] = number
    try:
        return RunManifest.model_validate(known)
    except ValidationError as exc:
        raise UntrustedFileError(str(path), problem_text(exc.errors()[0])) from None


__all__ = [
    "IMPORTED_KIND",
    "INTERRUPTED",
    "MANIFEST_NAME",
    "MANIFEST_SCHEMA",
    "REGRADED_KIND",
    "SESSION_KIND",
    "CaseFileRef",
    "Replaced",
    "Rerun",
    "RunManifest",
    "Selection",
    "case_file_ref",
    "lenient_manifest_data",
    "portable_path",
    "read_manifest",
    "read_manifest_leniently",
    "resolve_portable",
    "write_manifest",
]
