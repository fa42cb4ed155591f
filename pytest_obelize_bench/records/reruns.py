"""Reruns of a run's errored cases: which run again, and what each rerun replaces.

``--bench-rerun=errors`` runs again only the cases whose latest record is an infrastructure
error; ``--bench-rerun=all-errors`` every errored one. What a rerun replaces is kept, not lost:
``run.json`` lists each replaced attempt and where ``add_record`` moved it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from pytest_obelize_bench.grading.error_classes import error_class
from pytest_obelize_bench.grading.record import Record
from pytest_obelize_bench.records.runs import (
    ATTEMPTS_DIR,
    Replaced,
    Rerun,
    infrastructure_errors,
    read_run_records,
    utc_now,
)


def rerun_cases(records: Mapping[str, Record], *, tool_errors: bool = False) -> list[str]:
    """The cases a rerun runs again: ``--bench-rerun=errors`` those whose latest record is an
    infrastructure error; ``--bench-rerun=all-errors`` (``tool_errors``) every errored one.

    A tool error (``obelize_failed``, a fix that timed out) is a measurement of the tool: running
    it again until it passes would hide it, so that takes the explicit flag.
    """
    infrastructure = set(infrastructure_errors(records))
    return sorted(
        case for case, record in records.items() if record.tier == "error" and (tool_errors or case in infrastructure)
    )


def replaced_attempts(folder: Path, records: Mapping[str, Record], cases: Iterable[str]) -> list[Replaced]:
    """What a rerun of ``cases`` replaces: each case's latest record, and where ``add_record`` keeps it."""
    replaced = []
    for case in sorted(cases):
        record = records.get(case)
        if record is None:
            continue
        n = 1 + len(list((Path(folder) / ATTEMPTS_DIR).glob(f"{case}.[0-9]*.json")))
        error = record.error
        replaced.append(
            Replaced(
                case=case,
                kept_as=f"{ATTEMPTS_DIR}/{case}.{n}.json",
                tier=record.tier,
                reason=None if error is None else error.reason,
                error_class=None if error is None else error_class(error.reason, error.step),
            )
        )
    return replaced


def rerun_entry(folder: Path, cases: Iterable[str], kind: str) -> Rerun:
    """The ``reruns`` entry a rerun of ``cases`` adds to its run: when, which kind, what it replaces."""
    cases = list(cases)
    latest = read_run_records(folder, cases).records
    return Rerun(at=utc_now(), cases=cases, kind=kind, replaced=replaced_attempts(folder, latest, cases))


__all__ = ["replaced_attempts", "rerun_cases", "rerun_entry"]
