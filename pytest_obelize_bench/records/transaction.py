"""Publishing as one transaction: a journal, a roll forward, recovery on the next touch.

Every publication into ``results/`` (a round, Gate 1's scan, a pack's dry run) writes the journal
``publication.pending`` into the folder it publishes before it writes any other file there. The
journal names every file the folder will hold with its sha256 and where it comes from (a path in
the immutable run folder for a round's records; the text itself for a measurement's document), the
files to remove, the new ``publication.json`` and, for a measurement, the results-document blocks
to put in. Writing it (atomically) is the commit: before it the folder is the old one, whole; after
it, ``roll_forward`` makes it the new one, whole, and may be repeated any number of times (each
step checks what is already there). The journal is removed last, by the caller that also rewrote
the document, so ``summarize --check`` fails for as long as it is there. A temporary file left by
a killed writer is removed by the same recovery.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pydantic import Field

from pytest_obelize_bench._util.caps import GRADED_FACTS_BYTES, RECORD_BYTES
from pytest_obelize_bench._util.digests import sha256_bytes
from pytest_obelize_bench._util.removal import remove_tree
from pytest_obelize_bench._util.safe_io import UntrustedFileError, fault_point, read_untrusted, write_atomically
from pytest_obelize_bench._util.strict_model import StrictModel, committed_json
from pytest_obelize_bench.grading.record import RecordError
from pytest_obelize_bench.records.published import ARTEFACTS_DIR, JOURNAL_NAME, PUBLICATION_NAME

#: The largest file a publication copies (graded facts are capped at 5 MiB).
COPY_CAP_BYTES = max(RECORD_BYTES, GRADED_FACTS_BYTES)
#: A run folder being written (``regrade --write``) is ``runs/.staging-<run id>`` until renamed.
STAGING_PREFIX = ".staging-"
#: ``write_atomically``'s temporary files: ``.<name>.<random>``.
_TEMPORARY = re.compile(r"\.[^/]+\.[A-Za-z0-9_]{8}")


class Journal(StrictModel):
    """``publication.pending``: everything a publication will write, decided before it writes."""

    schema_version: int = 1
    #: the round published (None for a measurement)
    round: int | None = None
    #: the run published, or the measurement's session
    run: str
    #: folder-relative path -> (source-relative path, sha256): copied from the run folder
    files: dict[str, tuple[str, str]] = Field(default_factory=dict)
    #: folder-relative path -> the file's whole text (a measurement's document)
    texts: dict[str, str] = Field(default_factory=dict)
    #: folder-relative paths to remove (the earlier publication's files the new one does not hold)
    remove: list[str] = Field(default_factory=list)
    #: the new publication.json, written last
    note: str
    #: results-document blocks (name -> rendered text) the publisher puts in once the files stand
    blocks: dict[str, str] = Field(default_factory=dict)

    def to_json(self) -> str:
        return committed_json(self)


def _safe_relative(path: str) -> bool:
    parts = Path(path).parts
    return bool(parts) and not Path(path).is_absolute() and ".." not in parts


def read_journal(folder: Path) -> Journal | None:
    """The folder's pending publication, None when there is none; RecordError when it is unreadable."""
    path = Path(folder) / JOURNAL_NAME
    if not path.exists() and not path.is_symlink():
        return None
    try:
        journal = Journal.model_validate_json(read_untrusted(path, COPY_CAP_BYTES))
    except UntrustedFileError as exc:
        raise RecordError(str(exc)) from None
    except ValueError as exc:
        raise RecordError(f"{path}: not a publication journal: {str(exc).splitlines()[0]}") from None
    paths = [*journal.files, *(source for source, _ in journal.files.values()), *journal.texts, *journal.remove]
    if not all(_safe_relative(p) for p in paths):
        raise RecordError(f"{path}: names a path outside its folder; refused")
    return journal


def commit(folder: Path, journal: Journal) -> None:
    """The commit point: from here on the new publication is the one that will stand."""
    write_atomically(Path(folder) / JOURNAL_NAME, journal.to_json())


def _matches(path: Path, digest: str) -> bool:
    try:
        return not path.is_symlink() and path.is_file() and sha256_bytes(read_untrusted(path, COPY_CAP_BYTES)) == digest
    except UntrustedFileError:
        return False


def roll_forward(folder: Path, run_folder: Path | None, journal: Journal) -> None:
    """Make the folder exactly what the journal says; idempotent. RecordError when the run folder no
    longer holds what the journal was written from (the journal stays, and the check keeps failing)."""
    round_folder = Path(folder)
    for target, text in sorted(journal.texts.items()):
        data = text.encode("utf-8")
        if not _matches(round_folder / target, sha256_bytes(data)):
            write_atomically(round_folder / target, data)
    for target, (source, digest) in sorted(journal.files.items()):
        path = round_folder / target
        if _matches(path, digest):
            continue
        if run_folder is None:
            raise RecordError(f"cannot finish publishing {journal.run}: the journal copies files but names no run")
        try:
            data = read_untrusted(run_folder / source, COPY_CAP_BYTES)
        except UntrustedFileError as exc:
            raise RecordError(f"cannot finish publishing run {journal.run}: {exc}") from None
        if sha256_bytes(data) != digest:
            raise RecordError(f"cannot finish publishing run {journal.run}: {run_folder / source} changed since")
        write_atomically(path, data)
    for target in sorted(journal.remove):
        path = round_folder / target
        if path.exists() or path.is_symlink():
            fault_point(path)
            path.unlink()
    note = round_folder / PUBLICATION_NAME
    if not _matches(note, sha256_bytes(journal.note.encode("utf-8"))):
        write_atomically(note, journal.note)


def finish(folder: Path) -> None:
    """Remove the journal: the publication (and the document's rewrite) is complete."""
    path = Path(folder) / JOURNAL_NAME
    if path.exists():
        fault_point(path)
        path.unlink()


def temporaries_in(folder: Path) -> list[str]:
    """The names of the temporary files a killed ``write_atomically`` left in ``folder``."""
    if not Path(folder).is_dir():
        return []
    return sorted(
        entry.name
        for entry in os.scandir(folder)
        if _TEMPORARY.fullmatch(entry.name) and entry.is_file(follow_symlinks=False)
    )


def remove_temporaries(*folders: Path) -> list[str]:
    """Remove the temporary files a killed ``write_atomically`` left in these folders; their names."""
    removed: list[str] = []
    for folder in folders:
        for name in temporaries_in(folder):
            os.unlink(Path(folder) / name)
            removed.append(name)
    return sorted(removed)


def remove_staging(runs_root: Path) -> list[str]:
    """Remove the run folders a killed writer left half-written under ``runs_root``; their names."""
    if not Path(runs_root).is_dir():
        return []
    removed = []
    for entry in sorted(os.scandir(runs_root), key=lambda e: e.name):
        if entry.name.startswith(STAGING_PREFIX) and entry.is_dir(follow_symlinks=False):
            remove_tree(Path(entry.path))
            removed.append(entry.name)
    return removed


def temporaries_of(round_folder: Path) -> list[Path]:
    """The folders a round's publication writes into, for ``remove_temporaries``."""
    return [Path(round_folder), Path(round_folder) / ARTEFACTS_DIR]


__all__ = [
    "JOURNAL_NAME",
    "STAGING_PREFIX",
    "Journal",
    "commit",
    "finish",
    "read_journal",
    "remove_staging",
    "remove_temporaries",
    "roll_forward",
    "temporaries_in",
    "temporaries_of",
]
