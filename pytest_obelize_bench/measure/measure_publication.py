"""The guard and the note of a published measurement (Gate 1's scan, a pack's dry run).

A measurement is published like a round: never from a session in which nothing was measured,
never with infrastructure errors unless ``--bench-publish-with-infra-errors`` says so, always with
``publication.json`` beside the document naming the session and the sha256 of each file it wrote,
and as one journalled transaction (``records.transaction``), so a kill at any write leaves the old
measurement or the new one once the next publisher or ``summarize`` has recovered it.
``note_problems`` reads them back for ``summarize --check``: a hand edit, or a file that bypassed
the guard, has no note or a note that no longer matches.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from pytest_obelize_bench._util.caps import MEASURE_DOCUMENT_BYTES
from pytest_obelize_bench._util.digests import sha256_text
from pytest_obelize_bench._util.documents import load_optional_json
from pytest_obelize_bench._util.locks import holder_lock
from pytest_obelize_bench._util.safe_io import UntrustedFileError, read_untrusted_text, write_atomically
from pytest_obelize_bench._util.strict_model import StrictModel, committed_json
from pytest_obelize_bench.grading.error_classes import INFRASTRUCTURE, error_class
from pytest_obelize_bench.records.published import JOURNAL_NAME, LOCK_NAME, PUBLICATION_NAME
from pytest_obelize_bench.records.results_document import DOCUMENT_LOCK, DOCUMENT_NAME, apply_blocks
from pytest_obelize_bench.records.transaction import (
    Journal,
    commit,
    finish,
    read_journal,
    remove_temporaries,
    roll_forward,
    temporaries_in,
)

#: The folder of a pack's dry runs kept per release (``dryrun.release_files`` reads them; a layer above).
RELEASES = "releases"
NOTE_NAME = PUBLICATION_NAME  # a round folder's note has the same name: one spelling of it
NOTE_BYTES = 1 << 20
#: A published measurement document is at most this large (80 repositories' findings).
DOCUMENT_CAP_BYTES = MEASURE_DOCUMENT_BYTES
INFRA_FLAG = "--bench-publish-with-infra-errors"
_FINISH = "run `obelize-bench summarize` to finish it"


class MeasurementNote(StrictModel):
    """``publication.json`` beside a published measurement: which session wrote which bytes."""

    schema_version: int = 1
    kind: Literal["session", "imported"] = "session"
    measurement: Literal["gate1", "dryrun"]
    pack: str
    session: str
    published_at: str | None = None
    files: dict[str, str]
    repositories: int
    infrastructure_errors: int = 0
    with_infrastructure_errors: bool = False

    def to_json(self) -> str:
        return committed_json(self)


def scan_error_parts(error: str | None) -> tuple[str, str] | None:
    """A Gate 1 record's error (``step: reason: detail``) as (step, reason); None without one."""
    if error is None:
        return None
    step, _, rest = error.partition(": ")
    return step, rest.partition(": ")[0]


def dryrun_error_parts(error: str | None) -> tuple[str, str] | None:
    """A dry-run record's error (``reason: step: detail``) as (step, reason); None without one."""
    if error is None:
        return None
    reason, _, rest = error.partition(": ")
    return rest.partition(": ")[0], reason


def infrastructure_repositories(errors: Mapping[str, tuple[str, str]]) -> list[str]:
    """The repositories whose error (step, reason) is the machine's, not the tool's."""
    return sorted(name for name, (step, reason) in errors.items() if error_class(reason, step) == INFRASTRUCTURE)


def refusal(
    what: str, measured: int, total: int, infrastructure: Sequence[str], *, allow_infrastructure: bool
) -> str | None:
    """Why this session may not replace the published measurement; None when it may."""
    if measured == 0:
        return f"not published: no repository of the frame was {what} ({total} errored), so there is nothing to report"
    if infrastructure and not allow_infrastructure:
        shown = ", ".join(infrastructure[:5]) + (
            f" and {len(infrastructure) - 5} more" if len(infrastructure) > 5 else ""
        )
        return (
            f"not published: {len(infrastructure)} repositories errored for infrastructure reasons ({shown}); "
            f"the published one stays. Rerun when they can be fetched, or pass {INFRA_FLAG}"
        )
    return None


def read_note(folder: Path) -> MeasurementNote | None:
    """The note in ``folder``; None when there is none; ValueError (one line) when it is unreadable."""
    return load_optional_json(Path(folder) / NOTE_NAME, MeasurementNote, NOTE_BYTES, "publication note")


def note_problems(folder: Path, document: str, infrastructure: int) -> list[str]:
    """Why the published ``document`` in ``folder`` is not exactly what a guarded session wrote."""
    try:
        note = read_note(folder)
    except ValueError as exc:
        return [str(exc)]
    if note is None:
        return [f"{folder / document}: published without {NOTE_NAME}: no session is known to have written it"]
    problems = []
    if document not in note.files:
        problems.append(f"{folder / NOTE_NAME}: does not name {document}")
    for name, digest in sorted(note.files.items()):
        try:
            text = read_untrusted_text(folder / name, DOCUMENT_CAP_BYTES)
        except UntrustedFileError as exc:
            problems.append(str(exc))
            continue
        if sha256_text(text) != digest:
            problems.append(f"{folder / name}: differs from what session {note.session} published")
    if note.kind == "session" and infrastructure != note.infrastructure_errors:
        problems.append(
            f"{folder / NOTE_NAME}: declares {note.infrastructure_errors} infrastructure error(s), "
            f"the document holds {infrastructure}"
        )
    if note.kind == "session" and infrastructure and not note.with_infrastructure_errors:
        problems.append(f"{folder / document}: {infrastructure} infrastructure error(s) published without {INFRA_FLAG}")
    return problems


__all__ = [
    "INFRA_FLAG",
    "NOTE_NAME",
    "RELEASES",
    "MeasurementNote",
    "dryrun_error_parts",
    "half_published",
    "infrastructure_repositories",
    "measurement_folders",
    "note_problems",
    "read_note",
    "recover_measurement",
    "recover_measurements",
    "refusal",
    "scan_error_parts",
    "write_measurement",
]


def write_measurement(
    results: Path,
    target: Path,
    text: str,
    *,
    measurement: Literal["gate1", "dryrun"],
    pack: str,
    session: str,
    run_at: str | None,
    repositories: int,
    infrastructure: int,
    block: tuple[str, str, str] | None,
) -> list[str]:
    """Publish a measurement's document, its note and (given ``block``: name, text, label) its block
    in ``results``' document as one transaction (``records.transaction``); the lines saying so.

    One publisher of a measurement folder at a time; a publication an earlier process left
    half-done there is finished first. ``LockBusy`` when another holds the folder too long.
    """
    folder = Path(target).parent
    note = MeasurementNote(
        measurement=measurement,
        pack=pack,
        session=session,
        published_at=run_at,
        files={target.name: sha256_text(text)},
        repositories=repositories,
        infrastructure_errors=infrastructure,
        with_infrastructure_errors=bool(infrastructure),
    )
    blocks = {} if block is None else {block[0]: block[1]}
    journal = Journal(run=session, texts={target.name: text}, note=note.to_json(), blocks=blocks)
    with holder_lock(folder / LOCK_NAME, f"the {measurement} publication of {pack}"):
        lines = recover_measurement(results, folder)
        commit(folder, journal)
        _roll_forward(results, folder, journal)
    lines.append(f"records written: {target} ({repositories} repositories; session {session})")
    if block is not None:
        lines.append(f"summary: {Path(results) / DOCUMENT_NAME} ({block[2]})")
    return lines


def _roll_forward(results: Path, folder: Path, journal: Journal) -> None:
    """Make the folder what the journal says, put its blocks into the document, drop the journal."""
    roll_forward(folder, None, journal)
    if journal.blocks:
        path = Path(results) / DOCUMENT_NAME
        with holder_lock(Path(results) / DOCUMENT_LOCK, "the results document"):
            existing = path.read_text(encoding="utf-8") if path.exists() else "# Benchmark results\n"
            updated = apply_blocks(existing, journal.blocks)
            if updated != existing:
                write_atomically(path, updated)
    finish(folder)


def recover_measurement(results: Path, folder: Path) -> list[str]:
    """Finish a measurement's publication a killed process left half-done in ``folder`` and remove
    the temporary files it left; one line per thing recovered. The caller holds the folder's lock."""
    lines = []
    with holder_lock(Path(results) / DOCUMENT_LOCK, "the results document"):  # its writers' temporaries
        # the document's and its figures' too: a publication rewrites them as summarize does
        removed = remove_temporaries(folder, Path(results), Path(results) / "figures")
    if removed:
        lines.append(f"recovered: removed {len(removed)} temporary file(s) a killed writer left in {folder}")
    journal = read_journal(folder)
    if journal is not None:
        _roll_forward(results, folder, journal)
        lines.append(
            f"recovered: {folder}: finished publishing session {journal.run}, which a stopped process left half-done"
        )
    return lines


def measurement_folders(results: Path) -> list[Path]:
    """Every folder a measurement publishes into: ``gate1/``, each Gate 1 published beside the sample's
    (``gate1/<name>/``), each ``dryrun/<pack>/`` and each release kept there (``releases/<release>/``)."""
    results = Path(results)
    gate1 = results / "gate1"
    folders = [gate1] if gate1.is_dir() else []
    if gate1.is_dir():
        folders += sorted(p for p in gate1.iterdir() if p.is_dir() and not p.is_symlink())
    dryruns = results / "dryrun"
    for pack in sorted(p for p in dryruns.iterdir() if p.is_dir() and not p.is_symlink()) if dryruns.is_dir() else []:
        folders.append(pack)
        kept = pack / RELEASES  # each release's dry run of the frame, kept for the pack's history
        if kept.is_dir() and not kept.is_symlink():
            folders += sorted(p for p in kept.iterdir() if p.is_dir() and not p.is_symlink())
    return folders


def recover_measurements(results: Path) -> list[str]:
    """``recover_measurement`` for every measurement folder, each under its lock."""
    lines = []
    for folder in measurement_folders(results):
        with holder_lock(folder / LOCK_NAME, f"the publication in {folder}"):
            lines += recover_measurement(results, folder)
    return lines


def half_published(results: Path) -> list[str]:
    """One line for each measurement folder a stopped process left half-written: a journal, or a
    temporary file of a write that never finished."""
    lines = []
    for folder in measurement_folders(results):
        if (folder / JOURNAL_NAME).exists() or (folder / JOURNAL_NAME).is_symlink():
            lines.append(f"{folder} is half-published ({folder / JOURNAL_NAME} is there): {_FINISH}")
        for name in temporaries_in(folder):
            lines.append(f"{folder / name}: a temporary file a killed writer left: {_FINISH}")
    return lines
