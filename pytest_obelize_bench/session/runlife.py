"""A round session's run: naming it, its manifest, stopping it at preflight, closing and publishing it.

The controller (``round_controller.py``) receives the records; this module owns the run folder they go
to. The manifest names the case file (path and sha256) and the work root, so every command can
find them again from the run alone. A session stopped by its preflight leaves no new run folder;
a finished run is published (``report.round.publish_round``) only into a results folder
that belongs to its case file.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_obelize_bench._util.caps import GRADED_FACTS_BYTES, PATCH_BYTES
from pytest_obelize_bench._util.locks import LockBusy, holder_lock
from pytest_obelize_bench.casefile.cases import CaseFileError
from pytest_obelize_bench.grading.attempts import item_name, parse_stem
from pytest_obelize_bench.grading.record import RecordError
from pytest_obelize_bench.promotion.registration import registration_fields
from pytest_obelize_bench.records.publication_note import expected_cases, owner_refusal
from pytest_obelize_bench.records.published import LOCK_NAME, read_bounded_text
from pytest_obelize_bench.records.reruns import rerun_cases, rerun_entry, run_attempts
from pytest_obelize_bench.records.runs import (
    ARTEFACTS_DIR,
    BESIDE_SUFFIXES,
    RunManifest,
    Selection,
    add_record,
    case_file_ref,
    check_run_id,
    folder_digests,
    new_run_id,
    portable_path,
    read_manifest,
    read_run_records,
    run_folder,
    runs_root,
    sandbox_of,
    tool_label,
    utc_now,
    write_manifest,
)
from pytest_obelize_bench.report.round.publish_round import publish_round, recover_round
from pytest_obelize_bench.session.resume import LATEST, latest_run, mark_resumed, plan_resume
from pytest_obelize_bench.session.tier_outcome import EXIT_RESULTS_UNWRITABLE

if TYPE_CHECKING:
    from pytest_obelize_bench.session.round_controller import Controller

RESULTS_OPTION = "--bench-results"


def results_given(config: pytest.Config) -> bool:
    """Whether ``--bench-results`` was given on the command line (a results folder chosen on purpose)."""
    return any(arg == RESULTS_OPTION or arg.startswith(RESULTS_OPTION + "=") for arg in config.invocation_params.args)


def start_run(ctl: Controller) -> None:
    """Name this session's run (or the run a rerun adds to) and what it will rerun."""
    results = Path(ctl.context.results_dir)
    number = int(ctl.context.round or 0)
    rerun = ctl.options.rerun
    given = ctl.options.run
    if ctl.options.resume is not None:  # hook: resume
        if rerun or given:
            raise pytest.UsageError("--bench-resume continues a run by itself; leave out --bench-rerun/--bench-run")
        _start_resume(ctl, results, number)
        return
    if rerun and not given:
        raise pytest.UsageError("--bench-rerun=errors needs --bench-run=RUN: the run whose errored cases to rerun")
    if given and not rerun:
        raise pytest.UsageError("--bench-run=RUN is for --bench-rerun=errors; a new run gets an id of its own")
    if given:
        folder = existing_run(results, number, given, "--bench-run")
        repeat = read_manifest(folder).repeat or 1
        if ctl.options.repeat != repeat:
            raise pytest.UsageError(
                f"run {given} ran each case {repeat} time(s): rerun its errors with --bench-repeat={repeat}, "
                "so that each errored attempt runs again as itself"
            )
        ids = [case.id for case in ctl.case_file.cases]
        # each attempt is judged on its own record: attempt 2 can error where attempt 1 did not
        ctl.rerun_stems = rerun_cases(run_attempts(folder, ids), tool_errors=rerun == "all-errors")
        ctl.only = [item_name(*parse_stem(stem), repeat) for stem in ctl.rerun_stems]
        ctl.run_id = given
    else:
        _refuse_foreign_results(ctl, results, number)
        ctl.run_id = new_run_id()
        ctl.new_run = True
    ctl.run_dir = run_folder(results, number, ctl.run_id)


def _refuse_foreign_results(ctl: Controller, results: Path, number: int) -> None:
    """Stop before anything runs when this case file's round could not be published into ``results``."""
    if not ctl.options.publish:
        return
    ref = case_file_ref(ctl.case_file, results)
    refused = owner_refusal(results, number, ref, results_given=results_given(ctl.config))
    if refused is not None:
        raise pytest.UsageError(f"nothing ran: {refused}")


def _start_resume(ctl: Controller, results: Path, number: int) -> None:
    """Hook: resume (resume.py).  Which records of the run stand and which cases run again."""
    wanted = ctl.options.resume
    run_id = latest_run(runs_root(results, number)) if wanted == LATEST else wanted
    if run_id is None:
        raise pytest.UsageError(f"--bench-resume: no run to continue in {runs_root(results, number)}")
    folder = existing_run(results, number, run_id, "--bench-resume")
    # A row this session names out of reach is not run, so it is not run again either: counted among
    # the cases to run, it started workers for nothing and entered the manifest as a rerun it never was.
    away = ctl.unreachable
    cases = [case for case in ctl.case_file.cases if case.id not in away]
    plan = plan_resume(
        run_id,
        read_manifest(folder).exclude_newer,
        ctl.context,
        cases,
        read_run_records(folder, [case.id for case in cases]).records,
        ctl.reviews,
        cutoff_given=bool(ctl.options.exclude_newer),
    )
    ctl.context, ctl.run_id, ctl.only, ctl.kept = plan.context, run_id, plan.to_run, plan.kept
    ctl.run_dir = folder


def recover(ctl: Controller) -> list[str]:
    """Finish a publication of this round that a killed process left half-done (``recover_round``)."""
    results = Path(ctl.context.results_dir)
    number = int(ctl.context.round or 0)
    round_folder = results / f"round-{number}"
    if not round_folder.is_dir():
        return []
    try:
        with holder_lock(round_folder / LOCK_NAME, f"round {number}"):
            return recover_round(results, ctl.case_file, number)
    except (LockBusy, RecordError, OSError) as exc:
        return [f"round {number} could not be recovered: {str(exc).splitlines()[0]}"]


def keep_resumed(ctl: Controller) -> None:
    """Hook: resume.  The kept records stand in the run, marked, and count as this session's.

    A record is never rewritten in place: the marked one is added as the case's latest, and the
    one it was kept from moves, byte for byte, under ``attempts/`` (``runs.add_record``).
    """
    assert ctl.run_dir is not None
    for case, record in ctl.kept.items():
        marked = mark_resumed(record, str(ctl.run_id))
        ctl.records[case] = marked
        if marked is record:  # marked by an earlier resume already
            continue
        facts_path = ctl.run_dir / ARTEFACTS_DIR / f"{case}.json"
        facts = read_bounded_text(facts_path, GRADED_FACTS_BYTES) if facts_path.is_file() else None
        beside = {}
        for suffix in BESIDE_SUFFIXES[1:]:
            kept = ctl.run_dir / ARTEFACTS_DIR / f"{case}{suffix}"
            if kept.is_file():
                beside[suffix] = read_bounded_text(kept, PATCH_BYTES)
        add_record(ctl.run_dir, case, marked.to_json(), facts, beside)


def open_manifest(ctl: Controller) -> None:
    """Write the run's manifest (a new run's, or a rerun's appended line) at session start."""
    assert ctl.run_dir is not None
    context = ctl.context
    if ctl.only is not None:
        manifest = read_manifest(ctl.run_dir)
        stems = ctl.rerun_stems if ctl.rerun_stems is not None else ctl.only
        manifest.reruns.append(rerun_entry(ctl.run_dir, stems, ctl.options.rerun or "resume"))
        # The run is open again: how an earlier session ended it (stopped, interrupted, its end and
        # the digests it closed with) is history the reruns list keeps; this session writes its own
        # end, and a session killed before it leaves a run with no end, which nothing reads as whole.
        manifest.stopped, manifest.interrupted, manifest.ended_at, manifest.digests = None, False, None, {}
    else:
        case_file = ctl.case_file
        options = ctl.options
        manifest = RunManifest(
            run=str(ctl.run_id),
            round=int(context.round or 0),
            selection=Selection(
                keyword=options.keyword,
                marker=options.markexpr,
                split=options.split,
                last_failed=options.last_failed,
                rerun_errors=False,
            ),
            cases_expected=expected_cases(case_file, int(context.round or 0), ctl.unreachable),
            unreachable=dict(ctl.unreachable),
            case_file=case_file_ref(case_file, Path(context.results_dir)),
            work_root=portable_path(Path(context.work_root), Path(context.results_dir)),
            tool=None if context.tool is None else context.tool.identity(),
            packs=dict(context.packs),
            exclude_newer=context.exclude_newer,
            interpreter_policy=context.interpreter_policy,
            harness=context.harness,
            started_at=utc_now(),
            # pre-registration: the policy in force now is the one any decision on this run uses
            **registration_fields(Path(context.cases_path), case_file.cases, ctl.options.repeat),
        )
    ctl.manifest = manifest
    try:
        write_manifest(ctl.run_dir, manifest)
    except OSError as exc:
        if ctl.new_run:
            shutil.rmtree(ctl.run_dir, ignore_errors=True)
        pytest.exit(
            f"results: cannot write {exc.filename or ctl.run_dir}: {exc.strerror or exc}; nothing ran",
            returncode=EXIT_RESULTS_UNWRITABLE,
        )


def stopped_at_preflight(ctl: Controller) -> None:
    """A new run that the preflight stopped leaves no folder; an earlier run keeps its own, marked."""
    if ctl.manifest is None or ctl.run_dir is None:
        return
    if ctl.new_run and not ctl.records:
        shutil.rmtree(ctl.run_dir, ignore_errors=True)
        ctl.run_dir = None
        return

    ctl.manifest.stopped = "preflight"
    ctl.manifest.ended_at = utc_now()
    ctl.manifest.digests = folder_digests(ctl.run_dir)  # what the folder holds as this session leaves it
    write_manifest(ctl.run_dir, ctl.manifest)


def finish_run(ctl: Controller, *, interrupted: bool) -> None:
    """Close the manifest (with a digest of every file), then publish the run if it is a whole round."""
    assert ctl.run_dir is not None
    case_file = ctl.case_file
    found = read_run_records(ctl.run_dir, [case.id for case in case_file.cases])
    manifest = ctl.manifest
    manifest.cases_recorded = sorted(found.records)
    manifest.tools_recorded = sorted({tool_label(r) for r in found.records.values()})
    manifest.sandbox = sandbox_of(found.records.values())
    manifest.ended_at = utc_now()
    manifest.interrupted = manifest.interrupted or interrupted
    manifest.digests = folder_digests(ctl.run_dir)
    try:
        write_manifest(ctl.run_dir, manifest)
    except OSError as exc:  # the records stay; the manifest keeps what it said at the start
        ctl.summary_error = f"{ctl.run_dir}: run.json not closed: {exc.strerror or exc}; nothing published"
        return
    if ctl.results_error is not None:
        ctl.publish_lines = [f"run {ctl.run_id} not published: the session stopped before its end"]
        return
    if not ctl.options.publish:
        ctl.publish_lines = [f"run {ctl.run_id} not published (--bench-no-publish); run folder: {ctl.run_dir}"]
        return
    number = int(ctl.context.round or case_file.round)
    try:
        outcome = publish_round(
            Path(ctl.context.results_dir),
            case_file,
            number,
            str(ctl.run_id),
            allow_infrastructure_errors=ctl.options.publish_with_infra_errors,
            results_given=results_given(ctl.config),
        )
    except (CaseFileError, RecordError, OSError) as exc:
        ctl.summary_error = str(exc).splitlines()[0]
        return
    ctl.publish_lines = outcome.lines


def existing_run(results: Path, number: int, run_id: str, option: str) -> Path:
    """The folder of an existing run named on ``option``; a usage error when the id or the run is not."""
    try:
        check_run_id(run_id)
    except ValueError as exc:
        raise pytest.UsageError(f"{option}: {exc}") from None
    folder = run_folder(results, number, run_id)
    if not (folder / "run.json").is_file():
        raise pytest.UsageError(f"{option}: no run {run_id} in {folder.parent}")
    return folder


__all__: list[str] = [
    "existing_run",
    "finish_run",
    "keep_resumed",
    "open_manifest",
    "recover",
    "results_given",
    "start_run",
    "stopped_at_preflight",
]
