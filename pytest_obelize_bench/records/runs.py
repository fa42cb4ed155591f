"""A run: one benchmark session's records, kept apart until it is known to be a whole round.

Every round-mode session is a run with an id (its UTC start time and a short random hash). Its
records go to ``results/round-N/runs/<run-id>/<case>.json`` beside a ``run.json`` manifest
saying what was selected, what ran it and whether it finished. A rerun of a run's errored cases
adds new records to the same folder and moves the earlier attempt under ``attempts/``, so
nothing measured is ever lost. Deciding whether a run may be published is a pure function here;
the writing is ``publication.py``'s.
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_obelize_bench._util.caps import GRADED_FACTS_BYTES, RECORD_BYTES
from pytest_obelize_bench._util.clock import utc_now
from pytest_obelize_bench._util.digests import sha256_bytes
from pytest_obelize_bench._util.safe_io import UntrustedFileError, read_untrusted, write_atomically
from pytest_obelize_bench.grading.error_classes import INFRASTRUCTURE, error_class
from pytest_obelize_bench.grading.record import Record, RecordError
from pytest_obelize_bench.records.manifest import (
    IMPORTED_KIND,
    MANIFEST_NAME,
    REGRADED_KIND,
    SESSION_KIND,
    CaseFileRef,
    Replaced,
    Rerun,
    RunManifest,
    Selection,
    case_file_ref,
    portable_path,
    read_manifest,
    resolve_portable,
    write_manifest,
)
from pytest_obelize_bench.records.published import (
    RUNS_DIR,
    read_bounded_text,
    read_case_record,
)

ATTEMPTS_DIR = "attempts"
ARTEFACTS_DIR = "artefacts"
#: A published patch beside its graded facts: ``artefacts/<case>.diff``.
PATCH_SUFFIX = ".diff"
#: The tails of the suites' logs, beside the patch: ``artefacts/<case>.tails.json``.
TAILS_SUFFIX = ".tails.json"
#: Every file kept beside an attempt's record under ``artefacts/``: graded facts, patch, log tails.
BESIDE_SUFFIXES = (".json", PATCH_SUFFIX, TAILS_SUFFIX)
_RUN_ID = re.compile(r"[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}|[A-Za-z0-9][A-Za-z0-9._-]*")


def machine_class() -> str:
    """``Linux-x86_64-8cpu``: what two runs compared for speed must share."""
    return f"{platform.system()}-{platform.machine()}-{os.cpu_count() or 0}cpu"


def new_run_id(now: float | None = None, salt: bytes | None = None) -> str:
    """``YYYYMMDDTHHMMSSZ-xxxxxx``: sorts by start time, and two sessions in one second differ."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() if now is None else now))
    digest = hashlib.sha256((salt if salt is not None else os.urandom(16)) + stamp.encode()).hexdigest()
    return f"{stamp}-{digest[:6]}"


def check_run_id(run_id: str) -> str:
    """``run_id`` if it is one safe folder name; ValueError otherwise."""
    if not _RUN_ID.fullmatch(run_id) or ".." in run_id:
        raise ValueError(f"run id {run_id!r} is not a run folder name")
    return run_id


def runs_root(results: Path, round_number: int) -> Path:
    return Path(results) / f"round-{round_number}" / RUNS_DIR


def run_folder(results: Path, round_number: int, run_id: str) -> Path:
    return runs_root(results, round_number) / check_run_id(run_id)


def tool_label(record: Record) -> str:
    """One tool's identity as records carry it: version, commit (if any), a dirty tree, pack sha."""
    p = record.provenance
    parts = [f"obelize {p.obelize_version or '?'}"]
    if p.obelize_commit:
        parts.append(p.obelize_commit[:12] + ("+dirty" if p.obelize_tree_dirty else ""))
    if p.pack_sha256:
        parts.append(f"pack {p.pack_sha256[:12]}")
    return " ".join(parts)


def sandbox_of(records: Iterable[Record]) -> str:
    """The sandbox the records name (``none`` when they name none); several are joined."""
    seen = sorted({str(value) for r in records if (value := r.provenance.model_dump().get("sandbox"))})
    return ", ".join(seen) if seen else "none"


# -- reading -------------------------------------------------------------------------------


@dataclass
class RunRecords:
    """A run folder's latest record per case, the texts they were read from, and what was refused."""

    records: dict[str, Record]
    texts: dict[str, str]
    problems: list[str]
    attempts: dict[str, int]


def read_run_records(folder: Path, case_ids: Iterable[str]) -> RunRecords:
    """The run's latest record of each of these cases (earlier attempts counted, not read)."""
    folder = Path(folder)
    records: dict[str, Record] = {}
    texts: dict[str, str] = {}
    problems: list[str] = []
    attempts: dict[str, int] = {}
    for case_id in sorted(set(case_ids)):
        path = folder / f"{case_id}.json"
        if not path.exists() and not path.is_symlink():
            continue
        try:
            records[case_id] = read_case_record(path, case_id)
            texts[case_id] = read_bounded_text(path)
        except RecordError as exc:
            problems.append(str(exc).splitlines()[0])
            continue
        attempts[case_id] = 1 + len(list((folder / ATTEMPTS_DIR).glob(f"{case_id}.[0-9]*.json")))
    return RunRecords(records, texts, problems, attempts)


def list_runs(results: Path, round_number: int) -> list[tuple[Path, RunManifest | None, str | None]]:
    """Every run folder of a round, oldest first: its manifest, or why it could not be read."""
    root = runs_root(results, round_number)
    if not root.is_dir():
        return []
    found: list[tuple[Path, RunManifest | None, str | None]] = []
    # a dot folder is a run still being written (``transaction.STAGING_PREFIX``), not a run
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink() and p.name[0] != "."):
        try:
            found.append((folder, read_manifest(folder), None))
        except RecordError as exc:
            found.append((folder, None, str(exc).splitlines()[0]))
    return found


#: The largest file of a run folder that is digested: its largest kind, a record or graded facts.
DIGEST_CAP_BYTES = max(RECORD_BYTES, GRADED_FACTS_BYTES)


def folder_digests(folder: Path) -> dict[str, str]:
    """Every regular file under a run folder but ``run.json``, by relative path, with its sha256."""
    folder = Path(folder)
    digests: dict[str, str] = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if relative == MANIFEST_NAME or path.is_symlink() or not path.is_file():
            continue
        try:
            digests[relative] = sha256_bytes(read_untrusted(path, DIGEST_CAP_BYTES))
        except UntrustedFileError:
            digests[relative] = "unreadable"
    return digests


def tampered(folder: Path, manifest: RunManifest) -> list[str]:
    """The files of an ended run that no longer match what its session wrote (added, changed, gone)."""
    if not manifest.digests:
        return []
    now = folder_digests(folder)
    changed = [name for name, digest in manifest.digests.items() if now.get(name) != digest]
    added = [name for name in now if name not in manifest.digests]
    return sorted(changed + added)


# -- writing one record ----------------------------------------------------------------------


def add_record(
    folder: Path, case_id: str, text: str, artefacts: str | None = None, beside: Mapping[str, str] | None = None
) -> Path:
    """Write a case's record into the run, keeping an earlier attempt under ``attempts/``; its
    graded facts (``artefacts/<case>.json``) and what else is published beside them (``beside``:
    suffix to text, ``PATCH_SUFFIX`` and ``TAILS_SUFFIX``)."""
    folder = Path(folder)
    path = folder / f"{case_id}.json"
    if path.is_file() and not path.is_symlink():
        earlier = folder / ATTEMPTS_DIR
        n = 1 + len(list(earlier.glob(f"{case_id}.[0-9]*.json")))
        earlier.mkdir(parents=True, exist_ok=True)
        os.replace(path, earlier / f"{case_id}.{n}.json")
        for suffix in BESIDE_SUFFIXES:
            kept = folder / ARTEFACTS_DIR / f"{case_id}{suffix}"
            if kept.is_file():
                (earlier / ARTEFACTS_DIR).mkdir(exist_ok=True)
                os.replace(kept, earlier / ARTEFACTS_DIR / f"{case_id}.{n}{suffix}")
    write_atomically(path, text)
    for suffix, content in {".json": artefacts, **(beside or {})}.items():
        if suffix not in BESIDE_SUFFIXES:
            raise ValueError(f"{suffix!r} is not kept beside a record")
        if content:
            write_atomically(folder / ARTEFACTS_DIR / f"{case_id}{suffix}", content)
    return path


# -- the decision ------------------------------------------------------------------------------


def infrastructure_errors(records: Mapping[str, Record]) -> list[str]:
    """The cases whose error is the machine's, not the tool's."""
    return sorted(
        case
        for case, record in records.items()
        if record.error is not None and error_class(record.error.reason, record.error.step) == INFRASTRUCTURE
    )


def missing_cases(expected: Iterable[str], recorded: Iterable[str]) -> str | None:
    """The reason a run lacks cases of its case file, naming the first five; None when it has all."""
    missing = sorted(set(expected) - set(recorded))
    if not missing:
        return None
    shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
    return f"{len(missing)} case(s) of the case file have no record ({shown})"


def incomplete_reasons(manifest: RunManifest, records: Mapping[str, Record], expected: Iterable[str]) -> list[str]:
    """Why this run is not one complete round with one tool; empty when it is."""
    reasons = manifest.unfinished(until_ended=False)
    missing = missing_cases(expected, records)
    if missing is not None:
        reasons.append(missing)
    tools = sorted({tool_label(r) for r in records.values()})
    if len(tools) > 1:
        reasons.append(f"its records come from {len(tools)} tools ({'; '.join(tools)})")
    return reasons


__all__ = [
    "ATTEMPTS_DIR",
    "BESIDE_SUFFIXES",
    "IMPORTED_KIND",
    "MANIFEST_NAME",
    "PATCH_SUFFIX",
    "REGRADED_KIND",
    "SESSION_KIND",
    "TAILS_SUFFIX",
    "CaseFileRef",
    "Replaced",
    "Rerun",
    "RunManifest",
    "RunRecords",
    "Selection",
    "add_record",
    "case_file_ref",
    "check_run_id",
    "folder_digests",
    "incomplete_reasons",
    "infrastructure_errors",
    "list_runs",
    "machine_class",
    "missing_cases",
    "new_run_id",
    "portable_path",
    "read_manifest",
    "read_run_records",
    "resolve_portable",
    "run_folder",
    "runs_root",
    "sandbox_of",
    "tampered",
    "tool_label",
    "utc_now",
    "write_manifest",
]
