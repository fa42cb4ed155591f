"""Synthetic runs for the repeatability and promotion tests, in memory and as run folders on disk.

A run folder is laid out as a session writes it: ``run.json`` plus one record per attempt
(``<case>.json``, ``<case>.attempt-N.json``), under ``results/round-N/runs/<run-id>/``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_obelize_bench.casefile.cases import CaseFile, load_case_file
from pytest_obelize_bench.grading.attempts import record_file_name
from pytest_obelize_bench.grading.record import (
    ErrorInfo,
    Measurements,
    Provenance,
    Record,
    StepRecord,
    SuiteResult,
)
from pytest_obelize_bench.grading.repeatability import AttemptFacts
from pytest_obelize_bench.records.evidence import RunEvidence
from pytest_obelize_bench.records.manifest import RunManifest
from pytest_obelize_bench.records.runs import (
    add_record,
    case_file_ref,
    folder_digests,
    new_run_id,
    portable_path,
    run_folder,
    write_manifest,
)

RECENT = "2026-12-01T10:00:00Z"
PINS = (
    ("exclude_newer", "2026-11-30T00:00:00Z"),
    ("sdk_from", "0.8.6"),
    ("sdk_to", "2.24.0"),
    ("python", "cpython-3.12.1-linux-x86_64-gnu"),
)


def case_ids(n: int = 20) -> list[str]:
    return [f"owner{i:02d}__repo" for i in range(n)]


def split_of(index: int) -> str:
    """Every third case is holdout, as the split rule gives about a third."""
    return "holdout" if index % 3 == 0 else "dev"


def facts(
    case: str,
    tier: str,
    *,
    attempt: int = 1,
    split: str = "dev",
    control: bool = False,
    error_reason: str | None = None,
    baseline: str = "pass",
    rows_migrated: int | None = 2,
    runtime: float | None = 10.0,
    pins: tuple[tuple[str, str | None], ...] = PINS,
    touched: tuple[str, ...] | None = ("app.py",),
    lines: int | None = 2,
) -> AttemptFacts:
    return AttemptFacts(
        case=case,
        attempt=attempt,
        tier=tier,
        control=control,
        split=None if control else split,
        error_reason=error_reason,
        baseline_status=baseline,
        after_status="pass",
        unmigrated=0,
        rows_migrated=rows_migrated,
        files_touched=touched,
        lines_changed=lines,
        runtime_seconds=runtime,
        run_at=RECENT,
        pins=pins,
    )


def manifest(cases: Iterable[str], **overrides: Any) -> RunManifest:
    data: dict[str, Any] = {
        "run": "run",
        "round": 2,
        "cases_expected": sorted(cases),
        "interrupted": False,
        "exclude_newer": "2026-11-30T00:00:00Z",
        "interpreter_policy": "minor",
        "started_at": "2026-12-01T09:00:00Z",
        "ended_at": RECENT,
        "tool": {"version": "0.8.0"},
        "harness": {"version": "0.1.0", "commit": "c0ffee", "tree_dirty": False},
    }
    data.update(overrides)
    return RunManifest.model_validate(data)


def run(label: str, attempts: Sequence[AttemptFacts], **manifest_overrides: Any) -> RunEvidence:
    cases = manifest_overrides.pop("cases_expected", None)
    expected = sorted({a.case for a in attempts}) if cases is None else cases
    return RunEvidence(
        label=label,
        path=f"results/round-2/runs/{label}",
        run_id=label,
        manifest=manifest(expected, run=label, **manifest_overrides),
        attempts=tuple(attempts),
    )


def run_with(
    label: str, verified: set[int], *, n: int = 20, other: str = "partial", k: int = 1, **overrides: Any
) -> RunEvidence:
    """n cases (every third holdout), each run k times; cases in ``verified`` succeed every time."""
    attempts = [
        facts(case, "verified_success" if i in verified else other, attempt=a, split=split_of(i))
        for i, case in enumerate(case_ids(n))
        for a in range(1, k + 1)
    ]
    return run(label, attempts, **overrides)


# -- on disk ------------------------------------------------------------------------------------


def record(
    case: str,
    tier: str = "verified_success",
    *,
    attempt: int | None = 1,
    split: str = "dev",
    baseline: str = "pass",
    error: tuple[str, str] | None = None,
    unmigrated: int = 0,
    run_at: str = RECENT,
) -> Record:
    errored = error is not None
    return Record(
        case=case,
        origin="corpus",
        control=False,
        split=split,  # type: ignore[arg-type]
        error=ErrorInfo(step=error[0], reason=error[1], detail="synthetic") if error else None,
        measurements=Measurements(
            detected=None if errored else 2,
            false_positive=None if errored else 0,
            missed_call_site=None if errored else 0,
            patch_applied=None if errored else True,
            patch_compiles=None if errored else True,
            unmigrated=None if errored else unmigrated,
            false_positive_edit=None if errored else 0,
            tests_baseline=SuiteResult(status=baseline),  # type: ignore[arg-type]
            tests_after=SuiteResult(status="pass"),
            tests_cover_change=True,
            human_edits=0,
            runtime_seconds=None if errored else 3.0,
        ),
        provenance=Provenance(
            obelize_version="0.8.0",
            exclude_newer="2026-11-30T00:00:00Z",
            sdk_from="0.8.6",
            sdk_to="2.24.0",
            python_used="cpython-3.12.1-linux-x86_64-gnu",
            run_at=run_at,
        ),
        tier=tier,  # type: ignore[arg-type]
        attempt=attempt,
    )


def timed(case: str, *seconds: float) -> Record:
    """``record(case)`` whose steps took these seconds, one step each: what the order of a round's
    cases is read from (``session/ordering.py``)."""
    steps = [
        StepRecord(number=index, name=f"step{index}", argv=["true"], exit_code=0, duration_s=value, timed_out=False)
        for index, value in enumerate(seconds, start=1)
    ]
    return record(case).model_copy(update={"steps": steps})


def write_run(folder: Path, records: Iterable[Record], manifest_data: Mapping[str, Any] | None) -> Path:
    """A run folder holding these records and, unless None, this run.json."""
    folder.mkdir(parents=True, exist_ok=True)
    for each in records:
        (folder / record_file_name(each.case, each.attempt)).write_text(each.to_json(), encoding="utf-8")
    if manifest_data is not None:
        (folder / "run.json").write_text(json.dumps(dict(manifest_data), indent=2), encoding="utf-8")
    return folder


def manifest_data(cases: Iterable[str], run_id: str, version: str = "0.8.0", **overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "run_id": run_id,
        "round": 2,
        "selection": {"k": None, "m": None, "split": None, "lf": False},
        "cases_expected": sorted(cases),
        "cases_recorded": sorted(cases),
        "tool": {"version": version, "commit": None, "pack_sha256": "ab" * 32},
        "exclude_newer": "2026-11-30T00:00:00Z",
        "interpreter_policy": "minor",
        "sandbox": "none",
        "harness_version": "0.1.0",
        "started_at": "2026-12-01T09:00:00Z",
        "ended_at": RECENT,
        "interrupted": False,
    }
    data.update(overrides)
    return data


# -- published through the real publication -------------------------------------------------


def unsupported(case: str, version: str = "0.8.0", control: bool = False) -> Record:
    """A record obelize refused (nothing written): tier unsupported, as tier() computes it."""
    return Record(
        case=case,
        origin="corpus",
        control=control,
        split=None if control else "dev",
        measurements=Measurements(
            detected=1, false_positive=0, missed_call_site=0, patch_applied=False, unmigrated=1, false_positive_edit=0
        ),
        provenance=Provenance(obelize_version=version, pack_sha256="ab" * 32, run_at="2026-12-01T10:00:00Z"),
        tier="unsupported",
    )


def errored(case: str, step: str, reason: str) -> Record:
    return Record(
        case=case,
        origin="corpus",
        control=False,
        split="dev",
        error=ErrorInfo(step=step, reason=reason, detail="it failed"),
        measurements=Measurements(tests_baseline=SuiteResult(), tests_after=SuiteResult()),
        provenance=Provenance(obelize_version="0.8.0", pack_sha256="ab" * 32),
        tier="error",
    )


def make_run(results: Path, case_file: CaseFile, records: list[Record], **manifest: object) -> str:
    run_id = new_run_id()
    folder = run_folder(results, 2, run_id)
    write_manifest(
        folder,
        RunManifest(run=run_id, round=2, cases_expected=sorted(c.id for c in case_file.cases), **manifest),  # type: ignore[arg-type]
    )
    for record in records:
        add_record(folder, record.case, record.to_json())
    return run_id


def all_cases(case_file: CaseFile, **kinds: Record) -> list[Record]:
    return [kinds.get(case.id) or unsupported(case.id, control=case.control) for case in case_file.cases]


def write_ended_run(results: Path, cases: Path, run_id: str) -> Path:
    """A complete, ended run of round 2 of ``cases``, as a session leaves it."""
    case_file = load_case_file(cases)
    folder = results / "round-2" / "runs" / run_id
    for case in case_file.cases:
        add_record(folder, case.id, unsupported(case.id, control=case.control).to_json())
    manifest = RunManifest(
        run=run_id,
        round=2,
        cases_expected=sorted(c.id for c in case_file.cases),
        cases_recorded=sorted(c.id for c in case_file.cases),
        case_file=case_file_ref(case_file, results),
        work_root=portable_path(results.parent / "work", results),
        started_at="2026-12-01T10:00:00Z",
        ended_at="2026-12-01T10:05:00Z",
        digests=folder_digests(folder),
    )
    write_manifest(folder, manifest)
    return folder
