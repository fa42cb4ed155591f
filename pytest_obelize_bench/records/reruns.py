"""Reruns of a run's errored cases: which run again, and what each rerun replaces.

``--bench-rerun=errors`` runs again only the attempts whose latest record is an infrastructure
error; ``--bench-rerun=all-errors`` every errored one. Under ``--bench-repeat`` each attempt is
its own record (``<case>.json``, ``<case>.attempt-N.json``), so each is judged, and rerun, on its
own: a record's stem names it. What a rerun replaces is kept, not lost: ``run.json`` lists each
replaced attempt and where ``add_record`` moved it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from pytest_obelize_bench.grading.attempts import attempt_stem, parse_stem
from pytest_obelize_bench.grading.error_classes import error_class
from pytest_obelize_bench.grading.record import Record, read_round_attempts
from pytest_obelize_bench.records.runs import (
    ATTEMPTS_DIR,
    Replaced,
    Rerun,
    infrastructure_errors,
    utc_now,
)


def rerun_cases(records: Mapping[str, Record], *, tool_errors: bool = False) -> list[str]:
    """The records (by case, or by attempt stem) a rerun runs again: ``--bench-rerun=errors`` those
    that are an infrastructure error; ``--bench-rerun=all-errors`` (``tool_errors``) every errored one.

    A tool error (``obelize_failed``, a fix that timed out) is a measurement of the tool: running
    it again until it passes would hide it, so that takes the explicit flag.
    """
    infrastructure = set(infrastructure_errors(records))
    return sorted(
        case for case, record in records.items() if record.tier == "error" and (tool_errors or case in infrastructure)
    )


def run_attempts(folder: Path, case_ids: Iterable[str]) -> dict[str, Record]:
    """The run's latest record of every attempt of these cases, keyed by its stem."""
    wanted = set(case_ids)
    return {
        attempt_stem(record.case, record.attempt): record
        for case, records in read_round_attempts(Path(folder)).items()
        if case in wanted
        for record in records
    }


def replaced_attempts(folder: Path, records: Mapping[str, Record], stems: Iterable[str]) -> list[Replaced]:
    """What a rerun of ``stems`` replaces: each attempt's latest record, and where ``add_record`` keeps it."""
    replaced = []
    for stem in sorted(stems):
        record = records.get(stem)
        if record is None:
            continue
        n = 1 + len(list((Path(folder) / ATTEMPTS_DIR).glob(f"{stem}.[0-9]*.json")))
        error = record.error
        replaced.append(
            Replaced(
                case=record.case,
                kept_as=f"{ATTEMPTS_DIR}/{stem}.{n}.json",
                tier=record.tier,
                reason=None if error is None else error.reason,
                error_class=None if error is None else error_class(error.reason, error.step),
            )
        )
    return replaced


def rerun_entry(folder: Path, stems: Iterable[str], kind: str) -> Rerun:
    """The ``reruns`` entry a rerun of ``stems`` (cases, or attempts of them) adds to its run."""
    stems = list(stems)
    latest = run_attempts(folder, {parse_stem(stem)[0] for stem in stems})
    return Rerun(at=utc_now(), cases=stems, kind=kind, replaced=replaced_attempts(folder, latest, stems))


__all__ = ["replaced_attempts", "rerun_cases", "rerun_entry", "run_attempts"]
