"""A record's measurements that reach verified_success, for tests that break one ingredient each."""

from __future__ import annotations

from typing import Any

from pytest_obelize_bench.grading.record import Measurements, SuiteResult

PASS = SuiteResult(status="pass", passed=3, failed=0, skipped=0)


def verified(**changes: Any) -> Measurements:
    """A record that reaches verified_success; each test breaks one ingredient."""
    fields: dict[str, Any] = {
        "detected": 3,
        "false_positive": 0,
        "missed_call_site": 0,
        "forbidden_reported": 0,
        "patch_applied": True,
        "patch_compiles": True,
        "unmigrated": 0,
        "false_positive_edit": 0,
        "tests_baseline": PASS,
        "tests_after": PASS,
        "tests_cover_change": True,
        "human_edits": 0,
        "patch_correct": True,
        "runtime_seconds": 1.5,
        "llm_tokens_in": 0,
        "llm_tokens_out": 0,
        "llm_cost_usd": 0.0,
    }
    fields.update(changes)
    return Measurements(**fields)


__all__ = ["PASS", "verified"]
