"""The note that says which run a round was published from, and the check that it still holds.

``publication.json`` names the run and the sha256 of every record (and repeat) it published.
``publication_problems`` reads the round folder and the run back and lists every way the
published files are not exactly one complete run's: the check ``summarize --check`` runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from pytest_obelize_bench._util.digests import sha256_text
from pytest_obelize_bench._util.documents import load_optional_json
from pytest_obelize_bench._util.safe_io import UntrustedFileError
from pytest_obelize_bench._util.strict_model import StrictModel, committed_json
from pytest_obelize_bench.casefile.cases import CaseFile
from pytest_obelize_bench.grading.record import RecordError, repeat_stems
from pytest_obelize_bench.records.published import (
    PUBLICATION_NAME,
    RECORD_CAP_BYTES,
    PublishedRound,
    names_in,
    read_bounded_text,
)
from pytest_obelize_bench.records.runs import (
    IMPORTED_KIND,
    CaseFileRef,
    RunManifest,
    incomplete_reasons,
    infrastructure_errors,
    read_manifest,
    read_run_records,
    run_folder,
)


class Publication(StrictModel):
    """``publication.json``: the run a round's records were published from."""

    schema_version: int = 1
    round: int
    run: str
    kind: Literal["session", "imported"] = "session"
    published_at: str | None = None
    records: dict[str, str]
    #: The repeats (``--bench-repeat``) published beside the records: file stem to sha256.
    repeats: dict[str, str] = Field(default_factory=dict)
    infrastructure_errors: int = 0
    with_infrastructure_errors: bool = False
    #: Every rerun of the published run (``run.json`` ``reruns``), each with the attempts it replaced.
    reruns: list[dict[str, Any]] = Field(default_factory=list)
    #: the case file the round was published from (absent in notes older than the field)
    case_file: CaseFileRef | None = None
    #: rows of the case file the run named out of reach when it started, each with the reason
    #: (``casefile/reach.py``): published, so every page of the round can say what was not measured
    unreachable: dict[str, str] = Field(default_factory=dict)

    def to_json(self) -> str:
        data = self.model_dump(mode="json")
        for name in ("case_file", "unreachable"):  # absent from notes written before the field
            if not data[name]:
                del data[name]
        return committed_json(data)


#: Whose rounds a results folder holds when no publication names a case file: the project's.
DEFAULT_CASE_FILE = "cases/cases.yaml"


def owner_refusal(results: Path, round_number: int, ref: CaseFileRef, *, results_given: bool) -> str | None:
    """Why round ``round_number`` of case file ``ref`` may not be published into ``results``.

    A results folder belongs to the case file its rounds were published from (round n's own
    note first, then any round's, then the project's case file). A folder given explicitly, or
    one with nothing published yet, is never refused.
    """
    if results_given:
        return None
    notes: dict[int, Publication] = {}
    for folder in Path(results).glob("round-*"):
        number = folder.name.removeprefix("round-")
        try:
            note = read_publication(folder) if number.isdigit() else None
        except RecordError:
            note = None
        if note is not None:
            notes[int(number)] = note
    if not notes:
        return None
    named = [notes[round_number]] if round_number in notes and notes[round_number].case_file else []
    named += [notes[n] for n in sorted(notes, reverse=True) if notes[n].case_file is not None]
    owner = named[0].case_file.path if named and named[0].case_file is not None else DEFAULT_CASE_FILE
    if owner == ref.path:
        return None
    return (
        f"round {round_number} of {results} belongs to case file {owner}, not {ref.path}; "
        f"pass --bench-results=DIR to publish this case file's rounds in a folder of their own"
    )


def expected_cases(case_file: CaseFile, round_number: int, unreachable: Iterable[str] = ()) -> list[str]:
    """The cases a complete run of this round must record: the file's, retired ones aside, and those the
    run named out of reach when it started (``casefile/reach.py``) aside."""
    left_out = set(unreachable)
    return sorted(
        case.id
        for case in case_file.cases
        if (case.retired is None or case.retired.round > round_number) and case.id not in left_out
    )


def read_publication(round_folder: Path) -> Publication | None:
    """The round's publication note, None when there is none; RecordError when it is unreadable."""
    try:
        return load_optional_json(
            Path(round_folder) / PUBLICATION_NAME, Publication, RECORD_CAP_BYTES, "publication note"
        )
    except UntrustedFileError as exc:
        raise RecordError(str(exc)) from None


def _repeat_problems(round_folder: Path, note: Publication, label: str) -> list[str]:
    """The round's repeat files must be exactly the ones the note published, byte for byte."""
    on_disk = repeat_stems(names_in(round_folder), set(note.records))
    problems = []
    for stem in sorted(set(on_disk) - set(note.repeats)):
        problems.append(f"{label}: repeat {stem}.json was not published from run {note.run}")
    for stem in sorted(set(note.repeats) - set(on_disk)):
        problems.append(f"{label}: repeat {stem}.json of run {note.run} is missing from the round")
    for stem in sorted(set(on_disk) & set(note.repeats)):
        try:
            text = read_bounded_text(round_folder / f"{stem}.json")
        except RecordError as exc:
            problems.append(str(exc).splitlines()[0])
            continue
        if sha256_text(text) != note.repeats[stem]:
            problems.append(f"{round_folder / (stem + '.json')}: differs from what run {note.run} published")
    return problems


def publication_problems(
    results: Path, round_number: int, published: PublishedRound, expected: Iterable[str]
) -> list[str]:
    """Why round n's published records are not one complete run's; empty when they are."""
    round_folder = Path(results) / f"round-{round_number}"
    label = f"round {round_number}"
    try:
        note = read_publication(round_folder)
    except RecordError as exc:
        return [str(exc).splitlines()[0]]
    if note is None:
        if published.records:
            return [
                f"{label}: {len(published.records)} published record(s) but no {PUBLICATION_NAME}: "
                "they come from no recorded run"
            ]
        return []
    problems = _round_against_note(round_folder, round_number, published, note, label)
    try:
        manifest = read_manifest(run_folder(results, round_number, note.run))
    except (RecordError, ValueError) as exc:
        return [
            *problems,
            f"{label}: the published run {note.run} has no readable manifest: {str(exc).splitlines()[0]}",
        ]
    if manifest.kind == IMPORTED_KIND:
        if sorted(manifest.cases_recorded) != sorted(note.records):
            problems.append(f"{label}: the imported run {note.run} recorded other cases than were published")
        return problems
    problems.extend(_note_against_run(results, round_number, manifest, note, label, expected))
    infra = infrastructure_errors(published.records)
    if infra and not note.with_infrastructure_errors:
        problems.append(f"{label}: {len(infra)} infrastructure error(s) published without being declared")
    if note.infrastructure_errors != len(infra):
        problems.append(
            f"{label}: {PUBLICATION_NAME} declares {note.infrastructure_errors} infrastructure error(s), "
            f"the records hold {len(infra)}"
        )
    return problems


def _round_against_note(
    round_folder: Path, round_number: int, published: PublishedRound, note: Publication, label: str
) -> list[str]:
    """The round folder's records and repeats must be exactly the ones the note lists."""
    problems: list[str] = []
    if note.round != round_number:
        problems.append(f"{round_folder / PUBLICATION_NAME}: field round says {note.round}")
    extra = sorted(set(published.records) - set(note.records))
    absent = sorted(set(note.records) - set(published.records))
    if extra:
        problems.append(f"{label}: record(s) not published from run {note.run}: {', '.join(extra)}")
    if absent:
        problems.append(f"{label}: record(s) of run {note.run} missing from the round: {', '.join(absent)}")
    for case, text in sorted(published.texts.items()):
        if case in note.records and sha256_text(text) != note.records[case]:
            problems.append(f"{round_folder / (case + '.json')}: differs from what run {note.run} published")
    problems.extend(_repeat_problems(round_folder, note, label))
    return problems


def _note_against_run(
    results: Path, round_number: int, manifest: RunManifest, note: Publication, label: str, expected: Iterable[str]
) -> list[str]:
    """The note's records must be the run's latest, and the run must be complete."""
    found = read_run_records(run_folder(results, round_number, note.run), note.records)
    problems = list(found.problems)
    for case, text in sorted(found.texts.items()):
        if note.records.get(case) != sha256_text(text):
            problems.append(f"{label}: the published {case}.json is not run {note.run}'s latest record")
    wanted = sorted((set(expected) - set(manifest.unreachable)) | set(manifest.cases_expected))
    for reason in incomplete_reasons(manifest, found.records, wanted):
        problems.append(f"{label}: the published run {note.run} is not complete: {reason}")
    return problems


__all__ = [
    "DEFAULT_CASE_FILE",
    "Publication",
    "expected_cases",
    "owner_refusal",
    "publication_problems",
    "read_publication",
]
