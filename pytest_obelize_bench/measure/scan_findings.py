"""The findings of an ``obelize scan`` run folder, read as untrusted input: every row checked and
no evidence kept. Gate 1 measures them against its keys; the comparison scans each arm's tree."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench._util.validation import problem_text
from pytest_obelize_bench.measure.scanrecord import ScanCounts, ScanFinding, dump_row
from pytest_obelize_bench.tool.run_documents import path_problem
from pytest_obelize_bench.tool.runfolder import read_run_document


def _unreadable(detail: str) -> CaseError:
    return CaseError("scan", "run_folder_unreadable", detail[:500])


def read_findings(folder: Path) -> tuple[ScanCounts, list[ScanFinding]]:
    """findings.json of a scan run folder, as untrusted input: every row checked, no evidence kept."""
    data = read_run_document(folder, "findings.json", "scan")
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("findings"), list)
        or not isinstance(data.get("counts"), dict)
    ):
        raise _unreadable("findings.json: expected an object with findings[] and counts")
    try:
        counts = ScanCounts.model_validate({key: data["counts"].get(key) for key in ScanCounts.model_fields})
    except ValidationError as exc:
        raise _unreadable(f"findings.json: counts.{problem_text(exc.errors()[0])}") from None
    rows = []
    for index, row in enumerate(data["findings"]):
        if not isinstance(row, dict):
            raise _unreadable(f"findings.json: findings[{index}]: expected an object")
        try:
            finding = ScanFinding.model_validate(dump_row(row))
        except ValidationError as exc:
            raise _unreadable(f"findings.json: findings[{index}].{problem_text(exc.errors()[0])}") from None
        bad_path = path_problem(finding.path)
        if bad_path is not None:
            raise _unreadable(f"findings.json: findings[{index}].path {finding.path[:100]!r} {bad_path}")
        rows.append(finding)
    return counts, rows


__all__ = ["read_findings"]
