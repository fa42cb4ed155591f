"""Hand-built case rows and records, for tests of a round's figures and their renderings."""

from __future__ import annotations

from pytest_obelize_bench.casefile.cases import CallSite, Case, GroundTruth, Retired, Review
from pytest_obelize_bench.grading.record import ErrorInfo, Measurements, Provenance, Record

PATTERN = ("google.generativeai", "google.generativeai.configure")


def make_case(
    case_id: str,
    split: str | None = "dev",
    pattern: tuple[str, ...] = PATTERN,
    *,
    control: bool = False,
    test_cmd: str | None = "python -m pytest -q",
    retired: Retired | None = None,
) -> Case:
    """A key that can reach verified_success unless test_cmd is None (or it is a control)."""
    rows = [CallSite(path="app.py", line=i + 1, kind="import", symbol=s, label="auto") for i, s in enumerate(pattern)]
    return Case(
        id=case_id,
        origin="corpus",
        control=control,
        control_shape="already-migrated" if control else None,
        split=None if control else split,  # type: ignore[arg-type]
        provider="gemini",
        change="google-generativeai-to-google-genai",
        pattern_key=() if control else pattern,
        test_cmd=None if control else test_cmd,
        ground_truth=GroundTruth(call_sites=[] if control else rows, tests_cover_change=True),
        review=Review(human_edits=0, patch_correct=True),
        retired=retired,
    )


def make_record(
    case_id: str,
    tier: str = "verified_success",
    split: str | None = "dev",
    *,
    control: bool = False,
    error: ErrorInfo | None = None,
    schema_version: int = 3,
    **measurements: object,
) -> Record:
    values: dict[str, object] = {
        "detected": 2,
        "false_positive": 0,
        "missed_call_site": 0,
        "forbidden_reported": 0,
        "patch_applied": True,
        "patch_compiles": True,
        "unmigrated": 0,
        "false_positive_edit": 0,
        "human_edits": 0,
        "runtime_seconds": 1.5,
        "llm_tokens_in": 0,
    }
    values.update(measurements)
    return Record(
        schema_version=schema_version,
        case=case_id,
        origin="corpus",
        control=control,
        split=None if control else split,  # type: ignore[arg-type]
        error=error,
        measurements=Measurements(**values),  # type: ignore[arg-type]
        provenance=Provenance(
            obelize_version="0.8.0",
            pack_sha256="ab" * 32,
            python="cpython-3.12.1-linux-x86_64-gnu",
            run_at="2026-10-02T09:00:00Z",
        ),
        tier=tier,  # type: ignore[arg-type]
    )


def five_of_twenty() -> tuple[list[Case], dict[str, Record]]:
    """Twenty cases, twelve dev and eight holdout, each of its own pattern; five won (three dev, two
    holdout), the rest partial: a round whose rates a reader can check by hand."""
    cases = [make_case(f"c{i:02d}", "dev" if i < 12 else "holdout", (f"sym{i}",)) for i in range(20)]
    won = {0, 1, 2, 12, 13}
    records = {
        c.id: make_record(c.id, "verified_success" if i in won else "partial", c.split) for i, c in enumerate(cases)
    }
    return cases, records
