"""The console script's commands about runs: ``runs``, ``show``, ``compare``, ``publish``, ``regrade``.

Each names runs the one way (``records.runref.find_run``) and reads a run with its own case file
(and work root, for logs) when ``--cases`` is not given; an explicit ``--cases`` that differs from
the record is used and said. Exit status 0 on success, 1 for a refusal, 2 for unusable input.
"""

from __future__ import annotations

import difflib
from collections import Counter
from pathlib import Path
from typing import TextIO

from pytest_obelize_bench._util.locks import LockBusy, holder_lock
from pytest_obelize_bench.casefile.cases import Case, CaseFile, CaseFileError, load_case_file
from pytest_obelize_bench.casefile.promotion_policy import policy_beside
from pytest_obelize_bench.dryrun.history_command import run_frame_history
from pytest_obelize_bench.grading.record import TIERS, RecordError
from pytest_obelize_bench.isolation.workspace import default_work_root
from pytest_obelize_bench.promotion.history_report import run_history
from pytest_obelize_bench.records.publication_note import expected_cases, read_publication
from pytest_obelize_bench.records.published import LOCK_NAME, read_case_record, read_published
from pytest_obelize_bench.records.regrade import regrade_round
from pytest_obelize_bench.records.reruns import run_attempts
from pytest_obelize_bench.records.runref import (
    RunRef,
    choose_case_file,
    find_run,
    published_case_file,
    round_numbers,
)
from pytest_obelize_bench.records.runs import (
    IMPORTED_KIND,
    incomplete_reasons,
    list_runs,
    read_run_records,
    resolve_portable,
    tampered,
)
from pytest_obelize_bench.report.case_reading import attempt_facts, folder_evidence, published_evidence
from pytest_obelize_bench.report.round.case_entries import RoundData
from pytest_obelize_bench.report.round.publish_round import publish_held, publish_round, recover_round
from pytest_obelize_bench.report.round.round_files import load_round
from pytest_obelize_bench.report.run_compare import compare_rounds
from pytest_obelize_bench.report.show import explain_case, print_explanation
from pytest_obelize_bench.report.summarize import summarize


def _say(lines: list[str], out: TextIO) -> None:
    for line in lines:
        print(line, file=out)


def _round_case_file(results: Path, number: int, given: Path | None, default: Path, out: TextIO) -> CaseFile:
    path, lines = choose_case_file(results, published_case_file(results, number), given, default, f"round {number}")
    _say(lines, out)
    return load_case_file(path)


def _run_case_file(results: Path, run: RunRef, given: Path | None, default: Path, out: TextIO) -> CaseFile:
    path, lines = choose_case_file(results, run.manifest.case_file, given, default, f"run {run.run_id}")
    _say(lines, out)
    return load_case_file(path)


# -- compare -----------------------------------------------------------------------------------


def _side(
    text: str, results: Path, given: Path | None, default: Path, round_number: int | None, out: TextIO
) -> tuple[str, RoundData]:
    """One side of ``compare``: a round number, a run (any naming), or a folder of records."""
    if text.isdigit():
        number = int(text)
        return f"round {text}", load_round(results, _round_case_file(results, number, given, default, out), number)
    try:
        run = find_run(results, text, round_number)
    except ValueError:
        if not Path(text).is_dir():
            raise
        case_file = load_case_file(given or default)
        number = round_number if round_number is not None else case_file.round
        ids = [case.id for case in case_file.cases]
        return text, RoundData(number, list(case_file.cases), read_published(Path(text), ids).records)
    case_file = _run_case_file(results, run, given, default, out)
    ids = [case.id for case in case_file.cases]
    return f"run {run.run_id}", RoundData(run.round, list(case_file.cases), read_run_records(run.folder, ids).records)


def compare(
    results: Path, first: str, second: str, given: Path | None, default: Path, round_number: int | None, out: TextIO
) -> int:
    try:
        (la, a), (lb, b) = (_side(x, results, given, default, round_number, out) for x in (first, second))
    except ValueError as exc:
        print(f"obelize-bench compare: {str(exc).splitlines()[0]}", file=out)
        return 2
    for label, side in ((la, a), (lb, b)):
        if not side.records:
            print(f"obelize-bench compare: {label} has no records; nothing to compare", file=out)
            return 2

    policy = policy_beside(given or default)  # the thresholds every comparison is told at
    _say(compare_rounds(a, b, (la, lb), alpha=policy.alpha, power=policy.power, min_n=policy.min_n), out)
    return 0


# -- runs --------------------------------------------------------------------------------------


def _repeats_line(folder: Path, ids: list[str]) -> str:
    """The tiers of a repeated run's later attempts, and which errored: the run line counts attempt 1."""
    later = [r for r in run_attempts(folder, ids).values() if r.attempt_number > 1]
    counts: Counter[str] = Counter(record.tier for record in later)
    tiers = ", ".join(f"{tier} {counts[tier]}" for tier in TIERS if counts[tier])
    errored = sorted(f"{r.case} attempt {r.attempt_number}" for r in later if r.tier == "error")
    return f"  repeats: [{tiers or 'no records'}]" + (f"; errored: {', '.join(errored)}" if errored else "")


def list_runs_report(results: Path, given: Path | None, default: Path, round_number: int | None, out: TextIO) -> int:
    """Every run of a round (or of every round): id, tool, complete or not, tier counts, and any
    run folder whose files no longer match what its session wrote."""
    rounds = [round_number] if round_number is not None else round_numbers(results)
    shown = 0
    for number in rounds:
        try:
            note = read_publication(Path(results) / f"round-{number}")
        except RecordError:
            note = None
        for folder, manifest, problem in list_runs(results, number):
            shown += 1
            if manifest is None:
                print(f"round {number}  {folder.name}  unreadable: {problem}", file=out)
                continue
            run = RunRef(number, manifest.run, folder, manifest)
            recorded = manifest.case_file
            path, lines = choose_case_file(results, recorded, given, default, f"run {manifest.run}")
            _say(lines, out)
            case_file = load_case_file(path)
            if manifest.kind == "imported":
                published = read_published(Path(results) / f"round-{number}", manifest.cases_recorded).records
                counts: Counter[str] = Counter(record.tier for record in published.values())
                state, reasons = "imported", []
            else:
                found = read_run_records(run.folder, [case.id for case in case_file.cases])
                counts = Counter(record.tier for record in found.records.values())
                expected = (
                    expected_cases(case_file, number, manifest.unreachable)
                    if number == case_file.round
                    else manifest.cases_expected
                )
                reasons = incomplete_reasons(manifest, found.records, expected)
                state = "complete" if not reasons else "partial"
            published_mark = "  PUBLISHED" if note is not None and note.run == manifest.run else ""
            tools = ", ".join(manifest.tools_recorded) or "--"
            tiers = ", ".join(f"{tier} {counts[tier]}" for tier in TIERS if counts[tier])
            print(
                f"round {number}  {manifest.run}  {tools}  {state}  [{tiers or 'no records'}]{published_mark}", file=out
            )
            if manifest.unreachable:
                away = sorted(manifest.unreachable)
                more = f" and {len(away) - 3} more" if len(away) > 3 else ""
                print(f"  not run, out of reach when it started: {', '.join(away[:3])}{more}", file=out)
            for why in reasons:  # one line each, under the run's own
                print(f"  partial: {why}", file=out)
            if manifest.regraded_from is not None:
                print(f"  regraded from run {manifest.regraded_from} at {manifest.regraded_at}", file=out)
            if manifest.kind != "imported" and (manifest.repeat or 1) > 1:
                print(_repeats_line(run.folder, [case.id for case in case_file.cases]), file=out)
            changed = tampered(folder, manifest)
            if changed:
                shown_files = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
                print(f"  CHANGED since its session wrote it: {shown_files}", file=out)
    if not shown:
        print(f"no runs under {results}", file=out)
    return 0


# -- show --------------------------------------------------------------------------------------


def did_you_mean(name: str, known: set[str]) -> str:
    """``; did you mean navamai__navamai?`` for a case id given by half or misspelt; empty when none is near."""
    halves = sorted(k for k in known if name in k.split("__") or k.startswith(name) or k.endswith(name))
    near = halves or difflib.get_close_matches(name, sorted(known), n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(near[:3])}?" if near else ""


def _record_ids(folder: Path) -> set[str]:
    """The cases a round folder holds a record of (its file names, nothing read)."""
    if not folder.is_dir():
        return set()
    return {p.stem for p in folder.glob("*.json") if "." not in p.stem and "__" in p.stem}


def _case_file_or_none(path: Path) -> list[Case]:
    try:
        return list(load_case_file(path).cases)
    except CaseFileError:
        return []


def show(
    results: Path,
    case_id: str,
    *,
    run_name: str | None,
    round_number: int | None,
    given: Path | None,
    default: Path,
    work: str | None,
    as_json: bool,
    out: TextIO,
) -> int:
    """Explain one case's record: the published one, a named run's, or the latest run holding it."""
    run: RunRef | None = None
    if run_name:
        run = find_run(results, run_name, round_number)
        number = run.round
        case_file = _run_case_file(results, run, given, default, out)
        folder, source = run.folder, f"run {run.run_id} of round {number}"
    else:
        number = round_number if round_number is not None else load_case_file(given or default).round
        round_folder = Path(results) / f"round-{number}"
        if (round_folder / f"{case_id}.json").exists():
            case_file = _round_case_file(results, number, given, default, out)
            folder, source = round_folder, f"published round {number}"
        else:
            with_case = [
                (f, m) for f, m, _ in list_runs(results, number) if m is not None and (f / f"{case_id}.json").is_file()
            ]
            if not with_case:
                known = _record_ids(round_folder) | {case.id for case in _case_file_or_none(given or default)}
                print(
                    f"obelize-bench show: no record of {case_id} in round {number} (published or in a run)"
                    + did_you_mean(case_id, known),
                    file=out,
                )
                return 2
            folder, manifest = with_case[-1]
            run = RunRef(number, manifest.run, folder, manifest)
            case_file = _run_case_file(results, run, given, default, out)
            source = f"run {folder.name} of round {number} (not published)"
    try:
        record = read_case_record(folder / f"{case_id}.json", case_id)
    except RecordError as exc:
        print(f"obelize-bench show: {str(exc).splitlines()[0]}", file=out)
        return 2
    try:
        if run is None:
            shared = published_evidence(results, case_file, number)
        else:
            imported = run.manifest.kind == IMPORTED_KIND
            shared = folder_evidence(results, case_file, number, run=run.run_id, imported=imported, published=False)
        facts = attempt_facts(folder, shared, record)
    except ValueError as exc:  # planted or malformed evidence, an unreadable review or error-analysis file
        print(f"obelize-bench show: {str(exc).splitlines()[0]}", file=out)
        return 2
    recorded_work = run.manifest.work_root if run is not None else None
    if work:
        root = Path(work).expanduser()
    else:
        root = resolve_portable(recorded_work, results) if recorded_work else default_work_root()
    logs = root / f"round-{number}" / f"{case_id}.logs"
    data = explain_case(facts, source=source, logs=logs)
    print_explanation(data, out, as_json=as_json)
    return 0


# -- publish and regrade -------------------------------------------------------------------------


def publish(
    results: Path,
    run_name: str,
    round_number: int | None,
    given: Path | None,
    default: Path,
    *,
    with_infra_errors: bool,
    results_given: bool,
    wait: float,
    out: TextIO,
) -> int:
    run = find_run(results, run_name, round_number)
    if run.manifest.kind == IMPORTED_KIND:
        print(
            f"run {run.run_id} is round {run.round}'s imported run: its records were published when it was "
            "imported (they live in the round folder, not the run folder); nothing to publish",
            file=out,
        )
        return 0
    try:
        note = read_publication(Path(results) / f"round-{run.round}")
    except RecordError:
        note = None
    if note is not None and note.run == run.run_id:
        when = f" at {note.published_at}" if note.published_at else ""
        print(f"run {run.run_id} is already round {run.round}'s published run (published{when}); nothing rewritten",
              file=out)  # fmt: skip
        return 0
    case_file = _run_case_file(results, run, given, default, out)
    outcome = publish_round(
        results,
        case_file,
        run.round,
        run.run_id,
        allow_infrastructure_errors=with_infra_errors,
        results_given=results_given,
        wait=wait,
    )
    _say(outcome.lines, out)
    return 0 if outcome.published else 1


def regrade(results: Path, round_number: int, given: Path | None, default: Path, *, write: bool, out: TextIO) -> int:
    """Say what re-grading round N moves; with ``write``, publish the moved records as a new run of
    kind ``regrade`` through the round's journal, under the round's lock (``publish_round.py``)."""
    path, lines = choose_case_file(
        results, published_case_file(results, round_number), given, default, f"round {round_number}"
    )
    _say(lines, out)
    if not write:
        return regrade_round(results, path, round_number, write=False, out=out)[0]

    case_file = load_case_file(path)
    try:  # a new publication of the round: one at a time, after what a killed one left is finished
        with holder_lock(Path(results) / f"round-{round_number}" / LOCK_NAME, f"round {round_number}"):
            _say(recover_round(results, case_file, round_number), out)
            status, run_id = regrade_round(results, path, round_number, write=True, out=out)
            if run_id is None:
                return status
            note = read_publication(Path(results) / f"round-{round_number}")
            with_infra = note is not None and note.with_infrastructure_errors
            outcome = publish_held(results, case_file, round_number, run_id, with_infra, results_given=True)
    except (LockBusy, RecordError) as exc:
        print(f"obelize-bench regrade: {str(exc).splitlines()[0]}", file=out)
        return 1
    _say(outcome.lines, out)
    return 0 if outcome.published else 1


def history(results: Path, round_number: int, cases: Path, find: str | None, out: TextIO) -> int:
    """``history --round N``: write the round's history.json, then the document's block and chart
    from it (``summarize``); with ``--find CASE``, only say where the case changed."""
    status = run_history(results, cases, round_number, find=find, out=out)
    if status != 0 or find is not None:
        return status
    return summarize(results, cases, check=False, out=out)


def frame_history(results: Path, pack: str, cases: Path, find: str | None, out: TextIO) -> int:
    """``history --frame PACK``: write the pack's history.json from each release's kept dry run, then the
    document's block, figure and page (``summarize``); with ``--find REPOSITORY``, only say where it changed."""
    status = run_frame_history(results, pack, Path(cases).parent, find=find, out=out)
    if status != 0 or find is not None:
        return status
    return summarize(results, cases, check=False, out=out)


__all__ = ["compare", "frame_history", "history", "list_runs_report", "publish", "regrade", "show"]
