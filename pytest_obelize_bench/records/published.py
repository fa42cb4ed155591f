"""Reading a round folder as untrusted input: only ``<id>.json`` for ids in the case file.

A published figure must come from a record the harness wrote for that case. So a file is read
only when its name is a case id of the case file, never through a symlink and never past a size
bound; a record naming another case than its file is refused; the tier is recomputed from the
measurements, and a stored tier that disagrees is reported. Everything else in the folder is
listed as unknown, for ``summarize --check`` to fail on.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pytest_obelize_bench._util.caps import RECORD_BYTES
from pytest_obelize_bench._util.safe_io import UntrustedFileError, parse_json_object, read_untrusted_text
from pytest_obelize_bench.grading.record import Record, RecordError, parse_record, repeat_stems
from pytest_obelize_bench.grading.tiers import tier

#: A record is a few kilobytes; anything past this is not one.
RECORD_CAP_BYTES = RECORD_BYTES
SUMMARY_NAME = "summary.json"
PUBLICATION_NAME = "publication.json"
ARTEFACTS_DIR = "artefacts"
RUNS_DIR = "runs"
#: The lock one publisher of the round holds (``_util.locks.holder_lock``); ignored by git.
LOCK_NAME = ".publish.lock"
#: The journal of a publication under way (``transaction.py``); its presence fails the check.
JOURNAL_NAME = "publication.pending"
#: The history of releases over the round's runs (``promotion.history``).
HISTORY_NAME = "history.json"
#: What a round folder may hold besides ``<id>.json`` for the case file's ids.
KNOWN_ENTRIES = frozenset(
    {SUMMARY_NAME, PUBLICATION_NAME, ARTEFACTS_DIR, RUNS_DIR, LOCK_NAME, JOURNAL_NAME, HISTORY_NAME}
)


def read_bounded_text(path: Path, cap: int = RECORD_CAP_BYTES) -> str:
    """A small UTF-8 file, read without following a symlink; RecordError names the problem."""
    try:
        return read_untrusted_text(Path(path), cap)
    except UntrustedFileError as exc:
        raise RecordError(str(exc)) from None


def recomputed_tier(record: Record) -> str:
    """The tier the measurements give; RecordError when they give none."""
    try:
        return tier(record.error, record.measurements)
    except ValueError as exc:
        raise RecordError(f"case {record.case}: field tier: {exc}") from None


def read_case_record(path: Path, case_id: str) -> Record:
    """The record of ``case_id`` at ``path``: its ``case`` must be ``case_id``; tier recomputed."""
    record = parse_record(read_bounded_text(path), str(path))
    if record.case != case_id:
        raise RecordError(f"{path}: case {case_id}: field case says {record.case!r}; refused")
    return record


@dataclass
class PublishedRound:
    """What a round folder holds that may be counted, and what it holds that may not."""

    records: dict[str, Record] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)


def names_in(folder: Path) -> list[str]:
    """The names in a folder (none when it is not one)."""
    return [entry.name for entry in folder.iterdir()] if folder.is_dir() else []


def read_published(folder: Path, case_ids: Iterable[str]) -> PublishedRound:
    """The records of ``folder`` for these case ids, each checked; an absent folder is empty.

    A record whose stored tier disagrees with ``tier()`` is kept with the recomputed tier (the
    figures never trust a stored tier) and reported as a problem.
    """
    folder = Path(folder)
    result = PublishedRound()
    if not folder.is_dir():
        return result
    wanted = set(case_ids)
    for case_id in sorted(wanted):
        path = folder / f"{case_id}.json"
        if not path.exists() and not path.is_symlink():
            continue
        try:
            text = read_bounded_text(path)
            record = parse_record(text, str(path))
            if record.case != case_id:
                raise RecordError(f"{path}: case {case_id}: field case says {record.case!r}; refused")
            computed = recomputed_tier(record)
        except RecordError as exc:
            result.problems.append(str(exc).splitlines()[0])
            continue
        if computed != record.tier:
            result.problems.append(
                f"{path}: case {case_id}: field tier: stored {record.tier!r}, the measurements give {computed!r}"
            )
            record = record.model_copy(update={"tier": computed})
        result.records[case_id] = record
        result.texts[case_id] = text
    entries = names_in(folder)
    names = {f"{case_id}.json" for case_id in wanted} | KNOWN_ENTRIES
    names |= {f"{stem}.json" for stem in repeat_stems(entries, wanted)}
    result.unknown = sorted(name for name in entries if name not in names)
    return result


def read_json_object(path: Path, cap: int = RECORD_CAP_BYTES) -> dict[str, object]:
    """A small JSON object file read like a record (bounded, no symlink)."""
    try:
        return parse_json_object(read_bounded_text(path, cap), str(path))
    except UntrustedFileError as exc:
        raise RecordError(str(exc)) from None


__all__ = [
    "ARTEFACTS_DIR",
    "HISTORY_NAME",
    "JOURNAL_NAME",
    "KNOWN_ENTRIES",
    "LOCK_NAME",
    "PUBLICATION_NAME",
    "RUNS_DIR",
    "SUMMARY_NAME",
    "PublishedRound",
    "names_in",
    "read_bounded_text",
    "read_case_record",
    "read_json_object",
    "read_published",
    "recomputed_tier",
]
