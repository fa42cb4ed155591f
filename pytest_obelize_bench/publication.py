"""Publishing a run as its round, and checking that a published round is one run.

The published round is ``results/round-N/<id>.json`` for the cases of the file, the round's
artefacts, ``publication.json`` (which run, and the sha256 of every record it published) and the
round's block. It is written only from one complete run with one tool, and only without
infrastructure errors unless the caller allows them (the document then says how many). The
check reads the same files back and fails when the published records are not exactly what one
complete run recorded.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from pytest_obelize_bench.cases import CaseFile
from pytest_obelize_bench.published import (
    ARTEFACTS_DIR,
    PUBLICATION_NAME,
    PublishedRound,
    read_bounded_text,
)
from pytest_obelize_bench.record import RecordError, parse_record, write_atomically
from pytest_obelize_bench.runs import (
    IMPORTED_KIND,
    incomplete_reasons,
    infrastructure_errors,
    read_manifest,
    read_run_records,
    run_folder,
    tool_label,
    utc_now,
)

ARTEFACT_CAP_BYTES = 5 << 20


class Publication(BaseModel):
    """``publication.json``: the run a round's records were published from."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    round: int
    run: str
    kind: Literal["session", "imported"] = "session"
    published_at: str | None = None
    records: dict[str, str]
    infrastructure_errors: int = 0
    with_infrastructure_errors: bool = False

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def expected_cases(case_file: CaseFile, round_number: int) -> list[str]:
    """The cases a complete run of this round must record: the file's, retired ones aside."""
    return sorted(
        case.id
        for case in case_file.cases
        if case.retired is None or case.retired.round > round_number
    )


def read_publication(round_folder: Path) -> Publication | None:
    """The round's publication note, None when there is none; RecordError when it is unreadable."""
    path = Path(round_folder) / PUBLICATION_NAME
    if not path.exists() and not path.is_symlink():
        return None
    text = read_bounded_text(path)
    try:
        return Publication.model_validate_json(text)
    except ValueError as exc:
        raise RecordError(f"{path}: not a publication note: {str(exc).splitlines()[0]}") from None


@dataclass
class Outcome:
    """What a publication attempt did: published or not, and the lines that say why."""

    published: bool
    lines: list[str] = field(default_factory=list)


def publish_run(
    results: Path,
    case_file: CaseFile,
    round_number: int,
    run_id: str,
    *,
    allow_infrastructure_errors: bool = False,
) -> Outcome:
    """Publish run ``run_id`` as round ``round_number``, or say why it may not be."""
    from pytest_obelize_bench.roundfiles import write_round_outputs

    results = Path(results)
    folder = run_folder(results, round_number, run_id)
    try:
        manifest = read_manifest(folder)
    except RecordError as exc:
        return Outcome(False, [f"run {run_id} is not published: {str(exc).splitlines()[0]}"])
    ids = [case.id for case in case_file.cases]
    found = read_run_records(folder, ids)
    reasons = [*found.problems]
    if manifest.round != round_number:
        reasons.append(f"it is a run of round {manifest.round}")
    if manifest.kind == IMPORTED_KIND:
        reasons.append("it is an imported run, published when it was imported")
    reasons.extend(incomplete_reasons(manifest, found.records, expected_cases(case_file, round_number)))
    infra = infrastructure_errors(found.records)
    if infra and not allow_infrastructure_errors:
        reasons.append(
            f"{len(infra)} case(s) errored for infrastructure reasons ({', '.join(infra[:5])}); "
            "rerun them with --bench-rerun=errors, or pass --bench-publish-with-infra-errors"
        )
    if reasons:
        return Outcome(False, [f"run {run_id} is not published: " + "; ".join(reasons), f"run folder: {folder}"])

    round_folder = results / f"round-{round_number}"
    artefacts = round_folder / ARTEFACTS_DIR
    for case_id in ids:
        target = round_folder / f"{case_id}.json"
        if case_id in found.texts:
            write_atomically(target, found.texts[case_id])
        elif target.is_file() or target.is_symlink():
            target.unlink()
        source = folder / ARTEFACTS_DIR / f"{case_id}.json"
        facts = artefacts / f"{case_id}.json"
        if case_id in found.texts and source.is_file() and not source.is_symlink():
            write_atomically(facts, read_bounded_text(source, ARTEFACT_CAP_BYTES))
        elif facts.is_file() or facts.is_symlink():
            facts.unlink()
    note = Publication(
        round=round_number,
        run=run_id,
        published_at=utc_now(),
        records={case: sha256_text(text) for case, text in sorted(found.texts.items())},
        infrastructure_errors=len(infra),
        with_infrastructure_errors=bool(infra),
    )
    write_atomically(round_folder / PUBLICATION_NAME, note.to_json())
    document, _ = write_round_outputs(results, case_file, round_number)
    lines = [f"run {run_id} published as round {round_number}: {len(found.texts)} records in {round_folder}"]
    if infra:
        lines.append(f"published with {len(infra)} infrastructure error(s), as --bench-publish-with-infra-errors asked")
    lines.append(f"summary: {document}")
    return Outcome(True, lines)


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
            return [f"{label}: {len(published.records)} published record(s) but no {PUBLICATION_NAME}: they come from no recorded run"]
        return []
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
    try:
        manifest = read_manifest(run_folder(results, round_number, note.run))
    except (RecordError, ValueError) as exc:
        return [*problems, f"{label}: the published run {note.run} has no readable manifest: {str(exc).splitlines()[0]}"]
    if manifest.kind == IMPORTED_KIND:
        if sorted(manifest.cases_recorded) != sorted(note.records):
            problems.append(f"{label}: the imported run {note.run} recorded other cases than were published")
        return problems
    folder = run_folder(results, round_number, note.run)
    found = read_run_records(folder, note.records)
    problems.extend(found.problems)
    for case, text in sorted(found.texts.items()):
        if note.records.get(case) != sha256_text(text):
            problems.append(f"{label}: the published {case}.json is not run {note.run}'s latest record")
    wanted = sorted(set(expected) | set(manifest.cases_expected))
    for reason in incomplete_reasons(manifest, found.records, wanted):
        problems.append(f"{label}: the published run {note.run} is not complete: {reason}")
    infra = infrastructure_errors(published.records)
    if infra and not note.with_infrastructure_errors:
        problems.append(f"{label}: {len(infra)} infrastructure error(s) published without being declared")
    if note.infrastructure_errors != len(infra):
        problems.append(
            f"{label}: {PUBLICATION_NAME} declares {note.infrastructure_errors} infrastructure error(s), the records hold {len(infra)}"
        )
    return problems


__all__ = [
    "Outcome",
    "Publication",
    "expected_cases",
    "publication_problems",
    "publish_run",
    "read_publication",
    "record_imported_round",
    "sha256_text",
]


def record_imported_round(results: Path, round_number: int, run_id: str, note: str) -> Outcome:
    """Give records imported from elsewhere (round 1, from the upstream harness) a run and a
    publication note, leaving every record file as it is."""
    from pytest_obelize_bench.runs import RunManifest, write_manifest

    round_folder = Path(results) / f"round-{round_number}"
    texts: dict[str, str] = {}
    for path in sorted(round_folder.glob("*.json")):
        if path.name in (PUBLICATION_NAME, "summary.json"):
            continue
        text = read_bounded_text(path)
        texts[path.stem] = text
    records = {case: parse_record(text, case) for case, text in texts.items()}
    refused = [case for case, record in records.items() if record.case != case]
    if refused:
        return Outcome(False, [f"round {round_number}: record files named for another case: {', '.join(refused)}"])
    runs = sorted({r.provenance.run_at for r in records.values() if r.provenance.run_at})
    manifest = RunManifest(
        run=run_id,
        round=round_number,
        kind=IMPORTED_KIND,
        note=note,
        cases_expected=sorted(records),
        cases_recorded=sorted(records),
        tools_recorded=sorted({tool_label(r) for r in records.values()}),
        started_at=runs[0] if runs else None,
        ended_at=runs[-1] if runs else None,
    )
    write_manifest(run_folder(results, round_number, run_id), manifest)
    infra = infrastructure_errors(records)
    publication = Publication(
        round=round_number,
        run=run_id,
        kind=IMPORTED_KIND,
        published_at=runs[-1] if runs else None,
        records={case: sha256_text(text) for case, text in texts.items()},
        infrastructure_errors=len(infra),
        with_infrastructure_errors=bool(infra),
    )
    write_atomically(round_folder / PUBLICATION_NAME, publication.to_json())
    return Outcome(True, [f"round {round_number}: {len(texts)} imported records recorded as run {run_id}"])
