"""A pack's written history is held to its kept releases: a release kept after it was written is seen."""

from __future__ import annotations

import shutil
from pathlib import Path

from pytest_obelize_bench.dryrun.outcomes import DryRunDocument, DryRunRecord
from pytest_obelize_bench.dryrun.release_files import collect_frame_history, frame_histories, pack_folder
from pytest_obelize_bench.measure.measure_publication import write_measurement
from pytest_obelize_bench.report.measurement_blocks import check_measurements
from tests.helpers.project import PROJECT

PACK = "py-pdf/pypdf2-to-pypdf"


def _keep(results: Path, version: str, outcome: str) -> None:
    records = [DryRunRecord(full_name=f"o/{n}", sha="a" * 40, band="b", outcome=outcome) for n in ("x", "y")]  # type: ignore[arg-type]
    document = DryRunDocument(pack=PACK, frame="f.yaml", term="PyPDF2", obelize_version=version,
                              pack_sha256=None, run_at="2026-12-07T10:00:00Z", records=records)  # fmt: skip
    target = pack_folder(results, PACK) / "releases" / version / "dryrun.json"
    write_measurement(results, target, document.to_json(), measurement="dryrun", pack=PACK, session=version,
                      run_at=document.run_at, repositories=2, infrastructure=0, block=None)  # fmt: skip


def test_a_release_kept_after_the_history_was_written_makes_the_check_fail(tmp_path: Path) -> None:
    results, cases = tmp_path / "results", tmp_path / "cases"
    cases.mkdir()
    shutil.copy(PROJECT / "cases" / "promotion.yaml", cases / "promotion.yaml")
    _keep(results, "0.7.0", "held")
    history = collect_frame_history(results, PACK, cases)
    (pack_folder(results, PACK) / "history.json").write_text(history.to_json(), encoding="utf-8")
    assert frame_histories(results, cases, recheck=True) == ([history], [])
    _keep(results, "0.8.0", "complete")
    written, stale = frame_histories(results, cases, recheck=True)
    assert written == [history] and len(stale) == 1
    assert "history.json differs from what its releases give" in stale[0] and f"--frame {PACK}" in stale[0]
    (results / "BENCHMARK_RESULTS.md").write_text("# Benchmark results\n", encoding="utf-8")
    reason = check_measurements(results / "BENCHMARK_RESULTS.md", results, cases / "cases.yaml")
    assert reason is not None and "history.json differs" in reason
