"""``obelize-bench review CASE --run RUN``: the patch a record graded, and a review entry to fill in.

A review answers for one patch, named by its sha256 (``provenance.patch_sha256``), and goes in
``cases/reviews/round-N.yaml`` (``casefile/reviews.py``), never in the frozen case file. The
patch is read from the round's logs only when its digest is the record's: a patch another run
left there is not the one to judge. ``template`` is pure; ``run_review`` reads and prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from pytest_obelize_bench._util.caps import PATCH_BYTES
from pytest_obelize_bench._util.digests import sha256_bytes
from pytest_obelize_bench._util.safe_io import UntrustedFileError, read_untrusted
from pytest_obelize_bench.casefile.cases import load_case_file
from pytest_obelize_bench.casefile.reviews import reviews_path
from pytest_obelize_bench.grading.attempts import attempt_stem, record_file_name
from pytest_obelize_bench.grading.record import Record, RecordError
from pytest_obelize_bench.isolation.workspace import default_work_root
from pytest_obelize_bench.records.published import read_case_record
from pytest_obelize_bench.records.runs import run_folder
from pytest_obelize_bench.tool.evidence_copy import kept_patch

if TYPE_CHECKING:
    import argparse

__all__ = ["review_command", "run_review", "template"]


def template(record: Record, patch: str | None, note: str, reviews_file: str) -> list[str]:
    """The lines ``review`` prints: the record, the patch (or why not) and the entry to fill in."""
    digest = record.provenance.patch_sha256
    lines = [f"{record.case}, attempt {record.attempt_number}: tier {record.tier}"]
    if digest is None:
        return [*lines, "this record names no patch (nothing was written, or it predates patch digests): no review"]
    lines += [f"patch sha256: {digest}", f"--- patch ({note}) ---"]
    lines += (patch.rstrip("\n").splitlines() if patch is not None else ["(not shown)"]) + ["--- end of patch ---"]
    lines += [
        f"Add under `reviews:` in {reviews_file}; it applies to this patch only:",
        f"  - case: {record.case}",
        f"    patch_sha256: {digest}",
        "    human_edits:      # lines a person must change for the patch to be right (0: none)",
        "    patch_correct:    # true when the patch is right as written, false when it is wrong",
        "    reviewer:         # who read it",
        "    reviewed_at:      # 'YYYY-MM-DD'",
        "    why:              # one line: what you read and checked against the key rows",
    ]
    return lines


def _patch(logs: Path, digest: str | None) -> tuple[str | None, str]:
    path = kept_patch(logs)
    try:
        data = read_untrusted(path, PATCH_BYTES)
    except UntrustedFileError as exc:
        return None, f"{path}: {exc}"
    if sha256_bytes(data) != digest:
        return None, f"{path} is another patch (its sha256 differs from the record's): not shown"
    return data.decode("utf-8", errors="replace"), str(path)


def run_review(
    case: str, *, run: str, round_number: int, attempt: int, results: Path, work: Path, reviews_file: Path, out: TextIO
) -> int:
    """Print the review template of one attempt of a case in a run; 2 when there is no record."""
    try:
        path = run_folder(results, round_number, run) / record_file_name(case, attempt)
        record = read_case_record(path, case)
    except (RecordError, ValueError) as exc:
        print(f"obelize-bench review: {str(exc).splitlines()[0]}", file=out)
        return 2
    logs = work / f"round-{round_number}" / f"{attempt_stem(case, attempt)}.logs"
    patch, note = _patch(logs, record.provenance.patch_sha256)
    for line in template(record, patch, note, str(reviews_file)):
        print(line, file=out)
    return 0


def review_command(args: argparse.Namespace, out: TextIO) -> int:
    """The console script's ``review``: the round from the case file unless given, logs under the work root."""
    number = args.round_number if args.round_number is not None else load_case_file(args.cases).round
    work = Path(args.work).expanduser() if args.work else default_work_root()
    reviews = reviews_path(args.cases, number)
    return run_review(
        args.case, run=args.run, round_number=number, attempt=args.attempt, results=args.results, work=work,
        reviews_file=reviews, out=out,
    )  # fmt: skip
