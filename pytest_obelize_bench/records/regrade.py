"""Re-grade a round from its stored graded facts and the current case file, running nothing.

A corrected ground-truth row republishes a round only if a number moves; this says, record by
record, which numbers would move and how. With ``--write`` the round is not edited in place: the
published run's records (repeats too) are graded again into a new run of kind ``regrade``, written
under a dot name and renamed whole, which the caller then publishes through the round's journal
like any run; the run it came from stays as it was.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TextIO

from pytest_obelize_bench._util.caps import GRADED_FACTS_BYTES, PATCH_BYTES
from pytest_obelize_bench._util.removal import remove_tree
from pytest_obelize_bench._util.safe_io import (
    UntrustedFileError,
    fault_point,
    read_untrusted,
    read_untrusted_text,
    write_atomically,
)
from pytest_obelize_bench.casefile.cases import Case, CaseFile, load_case_file
from pytest_obelize_bench.casefile.keys_digest import keys_sha256
from pytest_obelize_bench.casefile.reviews import ReviewBook, ReviewFileError, load_reviews, review_for, reviews_path
from pytest_obelize_bench.grading.grade import grade
from pytest_obelize_bench.grading.graded_facts import Artefacts, artefacts_from_json
from pytest_obelize_bench.grading.record import (
    Record,
    RecordError,
    comparable,
    differences,
    parse_record,
    repeat_stems,
)
from pytest_obelize_bench.grading.tiers import tier
from pytest_obelize_bench.records.publication_note import read_publication
from pytest_obelize_bench.records.published import ARTEFACTS_DIR, names_in, read_bounded_text, read_published
from pytest_obelize_bench.records.runs import (
    BESIDE_SUFFIXES,
    IMPORTED_KIND,
    REGRADED_KIND,
    case_file_ref,
    folder_digests,
    new_run_id,
    read_manifest,
    run_folder,
    runs_root,
    tampered,
    utc_now,
    write_manifest,
)
from pytest_obelize_bench.records.transaction import STAGING_PREFIX


def regraded(record: Record, case: Case, artefacts: Artefacts | None, reviews: ReviewBook | None = None) -> Record:
    """The record as the current key grades it: the same runs, new measurements and tier, and the
    review answers given to this record's very patch."""
    m = record.measurements
    measurements = grade(
        case,
        artefacts,
        baseline=m.tests_baseline,
        after=m.tests_after,
        patch_compiles=m.patch_compiles,
        runtime_seconds=m.runtime_seconds,
        review=review_for(reviews or {}, record.case, record.provenance.patch_sha256),
    )
    return record.model_copy(update={"measurements": measurements, "tier": tier(record.error, measurements)})


def regrade_round(results: Path, cases_path: Path, number: int, *, write: bool, out: TextIO) -> tuple[int, str | None]:
    """Print what re-grading moves; with ``write`` and a move, write the regraded run.
    (exit status, the new run's id when one was written)."""
    case_file = load_case_file(cases_path)
    cases = case_file.by_id()
    try:
        reviews = load_reviews(reviews_path(cases_path, number))
    except ReviewFileError as exc:
        print(str(exc), file=out)
        return 1, None
    folder = Path(results) / f"round-{number}"
    records = read_published(folder, cases).records
    if not records:
        print(f"{folder}: no records; nothing to re-grade", file=out)
        return 1, None
    facts_dir = folder / "artefacts"
    needing = [case for case, record in records.items() if record.error is None]
    if needing and not any((facts_dir / f"{case}.json").is_file() for case in needing):
        print(
            f"round {number}: no stored graded facts in {facts_dir}, so none of its {len(records)} records can be "
            "re-graded (rounds run before facts were kept, like an imported round, cannot be)",
            file=out,
        )
        return 1, None
    changed = skipped = 0
    for case_id, record in sorted(records.items()):
        case = cases.get(case_id)
        if case is None:
            print(f"{case_id}: no row in {cases_path}; left as it is", file=out)
            skipped += 1
            continue
        facts = folder / "artefacts" / f"{case_id}.json"
        artefacts = None
        if facts.is_file() or facts.is_symlink():
            try:
                artefacts = artefacts_from_json(read_untrusted_text(facts, GRADED_FACTS_BYTES), str(facts))
            except (UntrustedFileError, ValueError) as exc:
                print(f"{case_id}: {str(exc).splitlines()[0]}; cannot re-grade", file=out)
                skipped += 1
                continue
        elif record.error is None:
            print(f"{case_id}: no graded facts in {facts.parent}; cannot re-grade", file=out)
            skipped += 1
            continue
        new = regraded(record, case, artefacts, reviews)
        lines = differences(comparable(new), comparable(record))
        if not lines:
            continue
        changed += 1
        print(f"{case_id}:", file=out)
        for line in lines:
            print(f"  {line.replace('got', 'now', 1).replace('expected', 'published', 1)}", file=out)
    print(
        f"round {number}: {changed} of {len(records)} records {'change' if write else 'would change'}"
        + (f"; {skipped} could not be re-graded" if skipped else "")
        + ("" if write or not changed else "; rerun with --write to publish them as a regraded run"),
        file=out,
    )
    if not write or not changed:
        return 0, None
    try:
        run_id = write_regraded_run(Path(results), case_file, number, reviews)
    except (RecordError, UntrustedFileError, ValueError) as exc:
        print(f"round {number}: not rewritten: {str(exc).splitlines()[0]}", file=out)
        return 1, None
    print(f"round {number}: regraded run {run_id} written from the published run", file=out)
    return 0, run_id


def write_regraded_run(results: Path, case_file: CaseFile, number: int, reviews: ReviewBook) -> str:
    """A new run of round ``number`` holding the published run's records and repeats graded again
    (graded facts copied as they are); its id. RecordError when the published run cannot be read
    or changed since its session ended. The caller holds the round's lock."""
    note = read_publication(results / f"round-{number}")
    if note is None:
        raise RecordError(f"round {number} has no publication.json: its records come from no run to re-grade")
    source = run_folder(results, number, note.run)
    manifest = read_manifest(source)
    if manifest.kind == IMPORTED_KIND:
        raise RecordError(f"run {note.run} is an imported run: it has no graded facts to re-grade from")
    changed = tampered(source, manifest)
    if changed:
        raise RecordError(f"run {note.run} changed since its session ended: {', '.join(changed[:5])}")
    cases = case_file.by_id()
    stems = {stem: stem for stem in note.records} | repeat_stems(names_in(source), set(note.records))
    run_id = new_run_id()
    staging = runs_root(results, number) / f"{STAGING_PREFIX}{run_id}"
    try:
        _write_regraded(source, staging, stems, cases, reviews)
        new = manifest.model_copy(
            update={
                "run": run_id,
                "kind": REGRADED_KIND,
                "regraded_from": note.run,
                "regraded_at": utc_now(),
                "case_file": case_file_ref(case_file, results),
                "case_keys_sha256": keys_sha256(case_file.cases),
                "digests": folder_digests(staging),
            }
        )
        write_manifest(staging, new)
        fault_point(staging)
        os.rename(staging, run_folder(results, number, run_id))
    except BaseException:
        if staging.exists():
            remove_tree(staging)
        raise
    return run_id


def _write_regraded(
    source: Path, staging: Path, stems: dict[str, str], cases: dict[str, Case], reviews: ReviewBook
) -> None:
    """Each record and repeat of ``source`` graded again into ``staging``, its graded facts beside it."""
    for stem, case_id in sorted(stems.items()):
        record = parse_record(read_bounded_text(source / f"{stem}.json"), str(source / f"{stem}.json"))
        facts_path = source / ARTEFACTS_DIR / f"{stem}.json"
        facts = None
        if facts_path.exists() or facts_path.is_symlink():
            facts = read_untrusted_text(facts_path, GRADED_FACTS_BYTES)
        case = cases.get(case_id)
        if case is not None and (facts is not None or record.error is not None):
            artefacts = None if facts is None else artefacts_from_json(facts, str(facts_path))
            record = regraded(record, case, artefacts, reviews)
        write_atomically(staging / f"{stem}.json", record.to_json())
        if facts is not None:
            write_atomically(staging / ARTEFACTS_DIR / f"{stem}.json", facts)
        for suffix in BESIDE_SUFFIXES[1:]:  # the patch and the log tails, byte for byte
            kept = source / ARTEFACTS_DIR / f"{stem}{suffix}"
            if kept.is_file() and not kept.is_symlink():
                write_atomically(staging / ARTEFACTS_DIR / kept.name, read_untrusted(kept, PATCH_BYTES))
