"""Re-grade a round from its stored graded facts and the current case file, running nothing.

A corrected ground-truth row republishes a round only if a number moves; this says, record by
record, which numbers would move and how.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from pytest_obelize_bench._util.caps import GRADED_FACTS_BYTES
from pytest_obelize_bench._util.safe_io import UntrustedFileError, read_untrusted_text, write_atomically
from pytest_obelize_bench.casefile.cases import Case, load_case_file
from pytest_obelize_bench.casefile.reviews import ReviewBook, ReviewFileError, load_reviews, review_for, reviews_path
from pytest_obelize_bench.grading.grade import grade
from pytest_obelize_bench.grading.graded_facts import Artefacts, artefacts_from_json
from pytest_obelize_bench.grading.record import Record, comparable, differences
from pytest_obelize_bench.grading.tiers import tier
from pytest_obelize_bench.records.published import read_published


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


def regrade_round(results: Path, cases_path: Path, number: int, *, write: bool, out: TextIO) -> int:
    cases = load_case_file(cases_path).by_id()
    try:
        reviews = load_reviews(reviews_path(cases_path, number))
    except ReviewFileError as exc:
        print(str(exc), file=out)
        return 1
    folder = Path(results) / f"round-{number}"
    records = read_published(folder, cases).records
    if not records:
        print(f"{folder}: no records; nothing to re-grade", file=out)
        return 1
    facts_dir = folder / "artefacts"
    needing = [case for case, record in records.items() if record.error is None]
    if needing and not any((facts_dir / f"{case}.json").is_file() for case in needing):
        print(
            f"round {number}: no stored graded facts in {facts_dir}, so none of its {len(records)} records can be "
            "re-graded (rounds run before facts were kept, like an imported round, cannot be)",
            file=out,
        )
        return 1
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
        if write:
            write_atomically(folder / f"{case_id}.json", new.to_json())
    verb = "changed" if write else "would change"
    print(
        f"round {number}: {changed} of {len(records)} records {verb}"
        + (f"; {skipped} could not be re-graded" if skipped else "")
        + ("" if write or not changed else "; rerun with --write to rewrite them, then obelize-bench summarize"),
        file=out,
    )
    return 0
