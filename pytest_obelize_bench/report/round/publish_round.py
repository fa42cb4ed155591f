"""Publishing a run as its round, and finishing a publication a killed process left half-done.

One publisher of a round at a time (the round's lock); each first recovers what an earlier one
left (a journal rolled forward, temporary files and half-written run folders removed), then
publishes through the round's journal (``records.transaction``) and rewrites the round's outputs
(``round_files.write_round_outputs``) before it removes the journal.
"""

from __future__ import annotations

from pathlib import Path

from pytest_obelize_bench._util.charts import FIGURES_FOLDER
from pytest_obelize_bench._util.locks import DEFAULT_WAIT_S, LockBusy, holder_lock
from pytest_obelize_bench.casefile.cases import CaseFile
from pytest_obelize_bench.records.publication import Outcome, publish_run
from pytest_obelize_bench.records.publication_note import owner_refusal
from pytest_obelize_bench.records.published import LOCK_NAME
from pytest_obelize_bench.records.results_document import DOCUMENT_LOCK
from pytest_obelize_bench.records.runs import case_file_ref, run_folder, runs_root
from pytest_obelize_bench.records.transaction import (
    finish,
    read_journal,
    remove_staging,
    remove_temporaries,
    roll_forward,
    temporaries_of,
)


def load_writers() -> None:
    """Import what writes a round's outputs (the document, its figures, the site; about 80 ms) now:
    a session calls this while its workers run the cases.  Imported with the controller's other
    modules, they delayed its workers' start; left to the publication, they would delay its end
    (``round_controller``).  Imported only here and where they are used."""
    # the writers: by name, so the import layers see them; cached after the first call
    from pytest_obelize_bench.report import glance_sources  # noqa: F401
    from pytest_obelize_bench.report.round import round_files  # noqa: F401
    from pytest_obelize_bench.report.site import pages  # noqa: F401


def recover_round(results_dir: Path, case_file: CaseFile, n: int) -> list[str]:
    """Finish a publication a killed process left half-done, and remove its temporary files.

    The caller holds the round's lock. One line per thing recovered; none when there was nothing.
    """
    results_dir = Path(results_dir)
    round_folder = results_dir / f"round-{n}"
    lines = [
        f"recovered: removed {name}, a run a killed writer left half-written"
        for name in remove_staging(runs_root(results_dir, n))
    ]
    journal = read_journal(round_folder)
    with holder_lock(results_dir / DOCUMENT_LOCK, "the results document"):
        removed = remove_temporaries(*temporaries_of(round_folder), results_dir, results_dir / FIGURES_FOLDER)
        if removed:
            lines.append(f"recovered: removed {len(removed)} temporary file(s) a killed writer left in {round_folder}")
        if journal is None:
            return lines
        roll_forward(round_folder, run_folder(results_dir, n, journal.run), journal)
        # the writers: loaded where they are used, or while a round's cases run (load_writers)
        from pytest_obelize_bench.report.glance_sources import refresh_glance
        from pytest_obelize_bench.report.round.round_files import write_round_outputs

        write_round_outputs(results_dir, case_file, n)
        refresh_glance(results_dir, case_file)
    finish(round_folder)
    lines.append(f"recovered: round {n}: finished publishing run {journal.run}, which a stopped process left half-done")
    return lines


def publish_round(
    results_dir: Path,
    case_file: CaseFile,
    n: int,
    run_id: str,
    *,
    allow_infrastructure_errors: bool = False,
    results_given: bool = True,
    wait: float = DEFAULT_WAIT_S,
) -> Outcome:
    """Publish a run as round ``n`` (``records.publication``), then rewrite the round's document.

    One publisher of a round at a time (the round's lock, waited for at most ``wait`` seconds);
    a publication an earlier process left half-done is finished first. The journal is removed
    only after the document is rewritten, so a crash anywhere is recovered whole.
    """
    results_dir = Path(results_dir)
    round_folder = results_dir / f"round-{n}"
    refused = owner_refusal(results_dir, n, case_file_ref(case_file, results_dir), results_given=results_given)
    if refused is not None:  # before the lock, so a refused publication creates nothing
        return Outcome(False, [f"run {run_id} is not published: {refused}"])
    try:
        with holder_lock(round_folder / LOCK_NAME, f"round {n}", wait):
            recovered = recover_round(results_dir, case_file, n)
            outcome = publish_held(results_dir, case_file, n, run_id, allow_infrastructure_errors, results_given, wait)
            outcome.lines[:0] = recovered
            return outcome
    except LockBusy as exc:
        return Outcome(False, [f"run {run_id} is not published: {exc}"])


def publish_held(
    results_dir: Path,
    case_file: CaseFile,
    n: int,
    run_id: str,
    allow_infrastructure_errors: bool,
    results_given: bool,
    wait: float = DEFAULT_WAIT_S,
) -> Outcome:
    """``publish_round`` once the caller holds the round's lock and has recovered the round."""
    outcome = publish_run(
        results_dir,
        case_file,
        n,
        run_id,
        allow_infrastructure_errors=allow_infrastructure_errors,
        results_given=results_given,
    )
    if outcome.published:
        # the writers: loaded where they are used, or while a round's cases run (load_writers)
        from pytest_obelize_bench.report.glance_sources import refresh_glance
        from pytest_obelize_bench.report.round.round_files import write_round_outputs
        from pytest_obelize_bench.report.site.pages import write_site_beside

        with holder_lock(Path(results_dir) / DOCUMENT_LOCK, "the results document", wait):
            document, _ = write_round_outputs(results_dir, case_file, n)
            refresh_glance(results_dir, case_file)  # what the glance stands on has just changed
            outcome.lines += write_site_beside(results_dir, case_file.path)
        finish(Path(results_dir) / f"round-{n}")
        outcome.lines.append(f"summary: {document}")
    return outcome


__all__ = ["load_writers", "publish_held", "publish_round", "recover_round"]
