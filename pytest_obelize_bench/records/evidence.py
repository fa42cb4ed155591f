"""Reading a run's evidence for a decision: its ``run.json``, its records, its graded facts.

A run is a session's folder, ``results/round-N/runs/<run-id>/``::

    run.json                      the manifest: selection, cases expected and recorded, tool, pins,
                                  interpreter policy, sandbox, harness, start and end, interrupted
    <case>.json                   the first (or only) attempt of a case
    <case>.attempt-N.json         attempt N > 1 under --bench-repeat
    artefacts/<same name>         the attempt's graded facts, when they were kept

Everything in it is untrusted input that could have been edited or planted: every file is read
bounded and never through a symlink (``safe_io``), a symlinked record or folder
refuses the whole run, a record whose file name disagrees with its case or attempt is refused,
and every problem is one ``EvidenceError`` line naming the file and the field. The manifest is
the one ``run.json`` model (``manifest.py``), read leniently: fields it does not know are
dropped, and a missing fact is left for the decision to call insufficient, never guessed here.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_obelize_bench._util.caps import DECISION_BYTES, GRADED_FACTS_BYTES, RECORD_BYTES
from pytest_obelize_bench._util.safe_io import UntrustedFileError, entry_kind, read_untrusted_json, read_untrusted_text
from pytest_obelize_bench.casefile.reviews import ReviewBook, review_for
from pytest_obelize_bench.casefile.schema import Case
from pytest_obelize_bench.grading.attempts import record_file_name
from pytest_obelize_bench.grading.graded_facts import Artefacts, artefacts_from_json
from pytest_obelize_bench.grading.record import (
    Record,
    RecordError,
    parse_record,
    read_round_attempts,
)
from pytest_obelize_bench.grading.repeatability import AttemptFacts, attempt_facts
from pytest_obelize_bench.grading.tiers import tier
from pytest_obelize_bench.records.manifest import MANIFEST_NAME, RunManifest, read_manifest_leniently
from pytest_obelize_bench.records.runref import find_run_folder
from pytest_obelize_bench.records.runs import tampered

__all__ = [
    "MANIFEST_NAME",
    "EvidenceError",
    "RunEvidence",
    "RunManifest",
    "read_decision_documents",
    "read_graded_facts",
    "read_round_facts",
    "read_run",
    "resolve_run",
]

ARTEFACTS_FOLDER = "artefacts"
#: More entries than any real round could write: a folder past it is refused, not walked.
MAX_ENTRIES = 20_000

_RUN_SPEC = re.compile(r"(?:round-)?([1-9][0-9]*):([A-Za-z0-9][A-Za-z0-9._-]{0,127})")


class EvidenceError(ValueError):
    """Evidence that cannot be used: one line, naming the file and what is wrong with it."""


@dataclass(frozen=True)
class RunEvidence:
    """One run as read: its manifest (None when it has no ``run.json``) and every attempt."""

    label: str
    path: str
    run_id: str
    manifest: RunManifest | None
    attempts: tuple[AttemptFacts, ...]
    #: files of the ended run that no longer match the digests its session closed it with
    changed: tuple[str, ...] = ()

    @property
    def tool_version(self) -> str | None:
        return None if self.manifest is None else self.manifest.tool_field("version")

    @property
    def pack_sha256(self) -> str | None:
        """The sha256 of the pack the run used; several packs' digests joined by commas, by pack."""
        packs = {} if self.manifest is None else self.manifest.packs
        digests = [info.pack_sha256 for _, info in sorted(packs.items())]
        if not digests or any(d is None for d in digests):
            return None
        return ",".join(d for d in digests if d is not None)

    def identity(self) -> dict[str, Any]:
        """How a decision document names this run."""
        manifest = self.manifest
        return {
            "label": self.label,
            "path": self.path,
            "run_id": self.run_id,
            "tool_version": self.tool_version,
            "tool_commit": None if manifest is None else manifest.tool_field("commit"),
            "pack_sha256": None if manifest is None else self.pack_sha256,
            "started_at": None if manifest is None else manifest.started_at,
            "ended_at": None if manifest is None else manifest.ended_at,
        }


def resolve_run(spec: str, results_dir: Path) -> Path:
    """A run named as a folder, as ``round-N:RUN_ID`` / ``N:RUN_ID``, or by its bare id, under ``results_dir``."""
    match = _RUN_SPEC.fullmatch(spec)
    if match is not None:
        return Path(results_dir) / f"round-{match.group(1)}" / "runs" / match.group(2)
    if not Path(spec).exists():
        try:
            return find_run_folder(Path(results_dir), spec)
        except ValueError:
            pass
    return Path(spec)


def _real_folder(path: Path, what: str) -> None:
    try:
        kind = entry_kind(path)
    except OSError as exc:
        raise EvidenceError(f"{path}: {what} cannot be inspected: {exc.strerror or exc}") from None
    if kind == "missing":
        raise EvidenceError(f"{path}: {what} does not exist")
    if kind == "symlink":
        raise EvidenceError(f"{path}: {what} is a symlink; refused")
    if kind != "directory":
        raise EvidenceError(f"{path}: {what} is not a folder")


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    found = []
    try:
        with os.scandir(folder) as iterator:
            for entry in iterator:
                found.append(entry)
                if len(found) > MAX_ENTRIES:
                    raise EvidenceError(f"{folder}: more than {MAX_ENTRIES} entries; refused")
    except OSError as exc:
        raise EvidenceError(f"{folder}: cannot be listed: {exc.strerror or exc}") from None
    return sorted(found, key=lambda entry: entry.name)


def _read_text(path: Path, cap: int) -> str:
    try:
        return read_untrusted_text(path, cap)
    except UntrustedFileError as exc:
        raise EvidenceError(str(exc)) from None


def _read_json(path: Path, cap: int) -> dict[str, Any]:
    try:
        return read_untrusted_json(path, cap)
    except UntrustedFileError as exc:
        raise EvidenceError(str(exc)) from None


def _read_manifest(path: Path) -> RunManifest:
    try:
        return read_manifest_leniently(path)
    except UntrustedFileError as exc:
        raise EvidenceError(str(exc).splitlines()[0]) from None


def read_graded_facts(folder: Path, name: str) -> Artefacts | None:
    """``folder/name`` as graded facts, bounded and never through a link; None when there is none;
    ``EvidenceError`` (one line) when it is not graded facts."""
    path = folder / name
    try:
        os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise EvidenceError(f"{path}: cannot be inspected: {exc.strerror or exc}") from None
    text = _read_text(path, GRADED_FACTS_BYTES)
    try:
        return artefacts_from_json(text, str(path))
    except ValueError as exc:
        raise EvidenceError(str(exc).splitlines()[0]) from None


def regraded(record: Record, case: Case | None, reviews: ReviewBook | None, source: str) -> Record:
    """The record with its tier recomputed, never read from the file.

    With the case's key, ``tests_cover_change`` and ``control`` come from the key; with a review
    book, ``human_edits`` and ``patch_correct`` come from the answer for this record's patch
    digest, and are null when nobody reviewed this patch.
    """
    updates: dict[str, Any] = {}
    if case is not None:
        updates["tests_cover_change"] = case.ground_truth.tests_cover_change
    if reviews is not None:
        review = review_for(reviews, record.case, record.provenance.patch_sha256)
        updates["human_edits"] = None if review is None else review.human_edits
        updates["patch_correct"] = None if review is None else review.patch_correct
    measurements = record.measurements.model_copy(update=updates)
    try:
        computed = tier(record.error, measurements)
    except ValueError as exc:
        raise EvidenceError(f"{source}: {exc}") from None
    control = record.control if case is None else case.control
    return record.model_copy(update={"measurements": measurements, "tier": computed, "control": control})


def read_run(
    path: Path,
    label: str,
    rows_per_case: Mapping[str, int],
    *,
    keys: Mapping[str, Case] | None = None,
    reviews: ReviewBook | None = None,
) -> RunEvidence:
    """Read one run folder; ``rows_per_case`` is each key's row count (for rows migrated).

    Every tier is recomputed (``regraded``) from the measurements, the case's key in ``keys``
    and the answers in ``reviews`` for the record's patch. Raises ``EvidenceError`` on anything
    hostile or malformed. A run with no ``run.json`` reads with ``manifest`` None: the decision,
    not the reader, says what that means.
    """
    folder = Path(path)
    _real_folder(folder, "run folder")
    entries = _entries(folder)
    artefacts_folder: Path | None = None
    if any(entry.name == ARTEFACTS_FOLDER for entry in entries):
        artefacts_folder = folder / ARTEFACTS_FOLDER
        _real_folder(artefacts_folder, "graded-facts folder")
    manifest: RunManifest | None = None
    attempts: list[AttemptFacts] = []
    seen: set[tuple[str, int]] = set()
    for entry in entries:
        entry_path = folder / entry.name
        if not entry.name.endswith(".json") or entry.name == "summary.json":
            continue
        if entry.is_symlink():
            raise EvidenceError(f"{entry_path}: a symlinked record is refused")
        if entry.name == MANIFEST_NAME:
            manifest = _read_manifest(entry_path)
            continue
        text = _read_text(entry_path, RECORD_BYTES)
        try:
            record = parse_record(text, str(entry_path))
        except RecordError as exc:
            raise EvidenceError(str(exc).splitlines()[0]) from None
        expected_name = record_file_name(record.case, record.attempt)
        if entry.name != expected_name:
            raise EvidenceError(
                f"{entry_path}: holds case {record.case!r} attempt {record.attempt_number}, "
                f"whose file is {expected_name}; refused"
            )
        key = (record.case, record.attempt_number)
        if key in seen:
            raise EvidenceError(f"{entry_path}: case {record.case!r} attempt {record.attempt_number} appears twice")
        seen.add(key)
        record = regraded(record, None if keys is None else keys.get(record.case), reviews, str(entry_path))
        artefacts = None if artefacts_folder is None else read_graded_facts(artefacts_folder, entry.name)
        attempts.append(attempt_facts(record, rows_total=rows_per_case.get(record.case), artefacts=artefacts))
    run_id = folder.name if manifest is None else manifest.run
    return RunEvidence(
        label=label,
        path=str(folder),
        run_id=run_id,
        manifest=manifest,
        attempts=tuple(sorted(attempts, key=lambda a: (a.case, a.attempt))),
        changed=() if manifest is None else tuple(tampered(folder, manifest)),
    )


def read_round_facts(folder: Path, rows_per_case: Mapping[str, int]) -> list[AttemptFacts]:
    """Every attempt in a published round folder, with its graded facts when they were kept.

    The records are read as the round's own readers read them (``record.read_round_attempts``);
    the graded facts beside them are read here, bounded and never through a link.
    """
    folder = Path(folder)
    artefacts_folder = folder / ARTEFACTS_FOLDER
    with_facts = artefacts_folder.is_dir() and not artefacts_folder.is_symlink()
    facts = []
    for case, records in sorted(read_round_attempts(folder).items()):
        for record in records:
            name = record_file_name(case, record.attempt)
            artefacts = read_graded_facts(artefacts_folder, name) if with_facts else None
            facts.append(attempt_facts(record, rows_total=rows_per_case.get(case), artefacts=artefacts))
    return facts


def read_decision_documents(folder: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Every decision document in ``results/decisions/`` (an absent folder holds none).

    Read as untrusted like the runs: a symlinked or oversized document is refused.
    """
    folder = Path(folder)
    try:
        os.lstat(folder)
    except FileNotFoundError:
        return []
    _real_folder(folder, "decisions folder")
    documents = []
    for entry in _entries(folder):
        if not entry.name.endswith(".json"):
            continue
        path = folder / entry.name
        if entry.is_symlink():
            raise EvidenceError(f"{path}: a symlinked decision document is refused")
        documents.append((path, _read_json(path, DECISION_BYTES)))
    return documents
