"""Publishing a run as its round (the check that it still holds is ``publication_note``).

The published round is ``results/round-N/<id>.json`` for the cases of the file, the round's
artefacts, ``publication.json`` (which run, and the sha256 of every record it published) and the
round's block. It is written only from one complete run with one tool, and only without
infrastructure errors unless the caller allows them (the document then says how many).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pytest_obelize_bench._util.caps import GRADED_FACTS_BYTES
from pytest_obelize_bench._util.digests import sha256_bytes, sha256_text
from pytest_obelize_bench._util.safe_io import UntrustedFileError, read_untrusted, write_atomically
from pytest_obelize_bench.casefile.cases import CaseFile
from pytest_obelize_bench.grading.record import NOT_RECORDS, RecordError, parse_record, repeat_stems
from pytest_obelize_bench.records.publication_note import (
    Publication,
    expected_cases,
    owner_refusal,
)
from pytest_obelize_bench.records.published import (
    ARTEFACTS_DIR,
    PUBLICATION_NAME,
    names_in,
    read_bounded_text,
)
from pytest_obelize_bench.records.runs import (
    BESIDE_SUFFIXES,
    IMPORTED_KIND,
    RunManifest,
    case_file_ref,
    incomplete_reasons,
    infrastructure_errors,
    read_manifest,
    read_run_records,
    run_folder,
    tool_label,
    utc_now,
    write_manifest,
)
from pytest_obelize_bench.records.transaction import Journal, commit, roll_forward

ARTEFACT_CAP_BYTES = GRADED_FACTS_BYTES


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
    results_given: bool = True,
) -> Outcome:
    """Publish run ``run_id``'s records as round ``round_number``, or say why it may not be.

    ``results_given`` says the results folder was chosen on purpose; when it was not, a folder
    holding another case file's rounds is refused (``owner_refusal``).

    The results document is the caller's to rewrite afterwards (``report.round.publish_round``):
    records sit below the report, so publishing never renders it.
    """
    results = Path(results)
    folder = run_folder(results, round_number, run_id)
    ref = case_file_ref(case_file, results)
    refused = owner_refusal(results, round_number, ref, results_given=results_given)
    if refused is not None:
        return Outcome(False, [f"run {run_id} is not published: {refused}"])
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
    expected = expected_cases(case_file, round_number, manifest.unreachable)
    reasons.extend(incomplete_reasons(manifest, found.records, expected))
    infra = infrastructure_errors(found.records)
    if infra and not allow_infrastructure_errors:
        reasons.append(
            f"{len(infra)} case(s) errored for infrastructure reasons ({', '.join(infra[:5])}); "
            "rerun them with --bench-rerun=errors, or pass --bench-publish-with-infra-errors"
        )
    if reasons:
        return Outcome(False, [f"run {run_id} is not published: " + "; ".join(reasons), f"run folder: {folder}"])

    round_folder = results / f"round-{round_number}"
    files, repeats = _planned_files(folder, ids, found.texts)
    note = Publication(
        round=round_number,
        run=run_id,
        published_at=utc_now(),
        records={case: sha256_text(text) for case, text in sorted(found.texts.items())},
        repeats=repeats,
        infrastructure_errors=len(infra),
        with_infrastructure_errors=bool(infra),
        reruns=[rerun.model_dump(mode="json") for rerun in manifest.reruns],
        case_file=ref,
        unreachable=dict(manifest.unreachable),
    )
    journal = Journal(
        round=round_number,
        run=run_id,
        files=files,
        remove=_published_files(round_folder, ids, set(files)),
        note=note.to_json(),
    )
    commit(round_folder, journal)
    roll_forward(round_folder, folder, journal)
    lines = [f"run {run_id} published as round {round_number}: {len(found.texts)} records in {round_folder}"]
    if infra:
        lines.append(f"published with {len(infra)} infrastructure error(s), as --bench-publish-with-infra-errors asked")
    return Outcome(True, lines)


def _read_copy(path: Path) -> bytes | None:
    """A file to publish, bounded and never through a symlink; None when there is none."""
    try:
        return read_untrusted(path, ARTEFACT_CAP_BYTES)
    except UntrustedFileError:
        return None


def _planned_files(
    run: Path, ids: list[str], texts: dict[str, str]
) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """Every file the round will hold (round path -> run path, sha256), and the repeats' sha256 by stem."""
    files: dict[str, tuple[str, str]] = {}
    for case_id in ids:
        if case_id not in texts:
            continue
        name = f"{case_id}.json"
        files[name] = (name, sha256_bytes(texts[case_id].encode("utf-8")))
        _plan_beside(run, case_id, files)
    repeats: dict[str, str] = {}
    for stem in sorted(repeat_stems(names_in(run), set(texts))):
        data = _read_copy(run / f"{stem}.json")
        if data is None:
            continue
        files[f"{stem}.json"] = (f"{stem}.json", sha256_bytes(data))
        repeats[stem] = sha256_bytes(data)
        _plan_beside(run, stem, files)
    return files, repeats


def _plan_beside(run: Path, stem: str, files: dict[str, tuple[str, str]]) -> None:
    """What the run kept beside an attempt's record: graded facts, patch, log tails."""
    for name in (f"{ARTEFACTS_DIR}/{stem}{suffix}" for suffix in BESIDE_SUFFIXES):
        data = _read_copy(run / name)
        if data is not None:
            files[name] = (name, sha256_bytes(data))


def _published_files(round_folder: Path, ids: list[str], keep: set[str]) -> list[str]:
    """The round's present records, repeats and graded facts that the new publication does not hold."""
    stems = [*ids, *repeat_stems(names_in(round_folder), set(ids))]
    present = []
    for stem in stems:
        for name in (f"{stem}.json", *(f"{ARTEFACTS_DIR}/{stem}{suffix}" for suffix in BESIDE_SUFFIXES)):
            path = round_folder / name
            if (path.exists() or path.is_symlink()) and name not in keep:
                present.append(name)
    return sorted(set(present))


__all__ = [
    "Outcome",
    "publish_run",
    "record_imported_round",
]


def record_imported_round(results: Path, round_number: int, run_id: str, note: str) -> Outcome:
    """Give records imported from elsewhere (round 1, from the upstream harness) a run and a
    publication note, leaving every record file as it is."""
    round_folder = Path(results) / f"round-{round_number}"
    texts: dict[str, str] = {}
    for path in sorted(round_folder.glob("*.json")):
        if path.name in NOT_RECORDS:
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
