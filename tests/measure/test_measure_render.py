"""The Gate 1 and dry-run blocks of the results document, and summarize --check over them."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest

from pytest_obelize_bench.dryrun.outcomes import DryRunDocument
from pytest_obelize_bench.dryrun.pack_block import render_dryrun_block
from pytest_obelize_bench.gate1.scan_document import load_gate1_inputs, render_gate1_block
from pytest_obelize_bench.records.results_document import apply_blocks, stale_block
from pytest_obelize_bench.report.measurement_blocks import measurement_blocks
from pytest_obelize_bench.report.summarize import summarize
from tests.helpers.project import PROJECT

#: The Gate 1 scan as round 1 published it, kept here so that publishing a new scan breaks no unit test.
SCAN_DATA = PROJECT / "tests" / "data" / "gate1" / "scan.json"


def _gate1_block(scan: Path = PROJECT / "results" / "gate1" / "scan.json") -> str:
    return render_gate1_block(*load_gate1_inputs(scan, PROJECT / "cases" / "gate1"))


def test_the_upstream_gate1_records_render_the_upstream_figures() -> None:
    block = _gate1_block(SCAN_DATA)
    pooled = next(line for line in block.splitlines() if line.startswith("| **All labelled**"))
    cells = [cell.strip() for cell in pooled.strip("|").split("|")]
    labelled, findings, tp, fp, missed = (int(cells[i]) for i in range(1, 6))
    assert (labelled, tp, fp, missed) == (64, 63, 0, 1) and findings == 63
    assert cells[6].startswith("100.0% [") and cells[7].startswith("98.4% [")
    misses = re.findall(r"^\| `[^`]+` \| missed \| (.+) \|$", block, re.MULTILINE)
    assert misses == ["`utils.py:124` attribute `google.generativeai.ChatSession.last`"]
    assert "`fbe82d40afea4894fb756e0128f21889e08c210a2a5b0d2cfe7db0dae8187175`" in block
    assert "| obelize | 0.1.0 |" in block


def test_the_results_document_holds_the_current_gate1_block() -> None:
    text = (PROJECT / "results" / "BENCHMARK_RESULTS.md").read_text(encoding="utf-8")
    assert stale_block(text, {"gate1": _gate1_block()}) is None


def test_blocks_are_replaced_in_place_and_text_around_them_is_kept() -> None:
    text = apply_blocks("# Title\n\nhand-written\n", {"gate1": "old\n", "dryrun-a__b": "dry\n"})
    assert text.index("gate1:begin") < text.index("dryrun-a__b:begin")
    again = apply_blocks(text.replace("hand-written", "kept by hand"), {"gate1": "new\n"})
    assert "kept by hand" in again and "\nnew\n" in again and "\nold\n" not in again and "\ndry\n" in again
    assert stale_block(again, {"gate1": "new\n"}) is None
    assert stale_block(again, {"gate1": "newer\n"}) == "the gate1 block differs from a fresh render"
    broken = again.replace("<!-- gate1:end -->", "")
    assert "exactly one begin marker" in (stale_block(broken, {"gate1": "new\n"}) or "")
    with pytest.raises(ValueError, match="not a measurement block name"):
        apply_blocks(text, {"round-1": "x"})


def _copy_project(tmp_path: Path) -> tuple[Path, Path]:
    shutil.copytree(PROJECT / "results", tmp_path / "results")
    shutil.copytree(PROJECT / "cases", tmp_path / "cases", ignore=shutil.ignore_patterns("fixtures", "dryrun-fixtures"))
    return tmp_path / "results", tmp_path / "cases" / "cases.yaml"


def test_summarize_check_fails_on_a_stale_gate1_block_and_summarize_repairs_it(tmp_path: Path) -> None:
    results, cases = _copy_project(tmp_path)
    out = io.StringIO()
    assert summarize(results, cases, check=True, out=out) == 0, out.getvalue()
    document = results / "BENCHMARK_RESULTS.md"
    document.write_text(document.read_text(encoding="utf-8").replace("98.4% [", "99.9% ["), encoding="utf-8")
    out = io.StringIO()
    assert summarize(results, cases, check=True, out=out) == 1
    assert "the gate1 block differs from a fresh render" in out.getvalue()
    assert summarize(results, cases, check=False, out=io.StringIO()) == 0
    assert summarize(results, cases, check=True, out=io.StringIO()) == 0


def test_summarize_check_reports_an_unreadable_scan_document_in_one_line(tmp_path: Path) -> None:
    results, cases = _copy_project(tmp_path)
    (results / "gate1" / "scan.json").write_text("{", encoding="utf-8")
    out = io.StringIO()
    assert summarize(results, cases, check=True, out=out) == 1
    (line,) = out.getvalue().splitlines()
    assert "a measurement cannot be rendered" in line and "scan.json: top level: (file): not JSON" in line


def _pypdf2_document(records: list[dict[str, object]]) -> DryRunDocument:
    return DryRunDocument.model_validate(
        {
            "pack": "py-pdf/pypdf2-to-pypdf",
            "frame": "frames/pypdf2.yaml",
            "term": "PyPDF2",
            "obelize_version": "0.8.0",
            "pack_sha256": "c" * 64,
            "records": records,
        }
    )


def _dryrun_document() -> DryRunDocument:
    def record(name: str, outcome: str | None, **extra: object) -> dict[str, object]:
        return {"full_name": name, "sha": "b" * 40, "band": "size:<1000", "outcome": outcome, **extra}

    withheld = [{"path": "a.py", "line": 3, "symbol": "PyPDF2.PdfReader", "bail": "legacy_version_unsupported"}]
    return _pypdf2_document(
        [
            record(
                "o/blocked",
                "blocked",
                blocked="legacy_version_unsupported",
                files_planned=0,
                usages=1,
                withheld=withheld,
            ),
            record("o/none", "none", files_planned=0, usages=0),
            record("o/done", "complete", files_planned=2, usages=3),
            record("o/done2", "complete", files_planned=1, usages=1),
            record("o/gone", None, error="fetch_failed: HEAD is not the pin"),
        ]
    )


def test_the_dryrun_block_counts_outcomes_with_intervals_reasons_and_bails() -> None:
    block = render_dryrun_block(_dryrun_document())
    assert "n = 4 repositories with an outcome." in block
    assert "| `complete` | 2 | 50.0% [15.0%, 85.0%] |" in block
    assert "| `held` | 0 | 0.0% [0.0%, 49.0%] |" in block
    assert "| `legacy_version_unsupported` | 1 |" in block  # the blocked reason
    assert "| `legacy_version_unsupported` | 1 | 1 |" in block  # the bail: rows, repositories
    assert "Could not be run: fetch_failed 1." in block
    assert "| Files the plans would write | 3 |" in block


def test_measurement_blocks_render_each_published_dryrun(tmp_path: Path) -> None:
    folder = tmp_path / "results" / "dryrun" / "py-pdf__pypdf2-to-pypdf"
    folder.mkdir(parents=True)
    (folder / "dryrun.json").write_text(_dryrun_document().to_json(), encoding="utf-8")
    blocks = measurement_blocks(tmp_path / "results", tmp_path / "cases")
    assert list(blocks) == ["dryrun-py-pdf__pypdf2-to-pypdf"]
    assert blocks["dryrun-py-pdf__pypdf2-to-pypdf"] == render_dryrun_block(_dryrun_document())


def test_a_grown_frame_s_rule_and_biases_stand_in_its_block_and_its_document() -> None:
    plain_document = _dryrun_document()
    assert "draw_rule" not in plain_document.to_json() and "biases" not in plain_document.to_json()
    assert "How the frame was drawn" not in render_dryrun_block(plain_document)
    grown = plain_document.model_copy(
        update={"draw_rule": "every candidate, in order", "biases": ["ranked by relevance", "no size bands"]}
    )
    block = render_dryrun_block(grown)
    assert "How the frame was drawn: every candidate, in order" in block
    assert "* ranked by relevance\n* no size bands" in block
    again = DryRunDocument.model_validate_json(grown.to_json())
    assert again.biases == ["ranked by relevance", "no size bands"] and again.draw_rule == "every candidate, in order"


def test_each_committed_real_frame_of_fifty_states_its_rule_and_biases() -> None:
    from pytest_obelize_bench.measure.frame import load_frame

    for pack in ("gemini__google-generativeai-to-google-genai", "openai__openai-0-to-1", "py-pdf__pypdf2-to-pypdf"):
        frame = load_frame(PROJECT / "cases" / "dryrun" / pack / "frame.yaml")
        assert len(frame.repositories) >= 50 and frame.draw_rule and len(frame.biases) >= 4
        assert len({repo.owner for repo in frame.repositories}) == len(frame.repositories)


def test_hostile_names_and_errors_in_a_dry_run_stay_inert_in_its_block() -> None:
    """The records are read as untrusted: a name, bail, blocked reason or error can hold a tag, a
    backtick or a pipe, and none of them reaches the page as markup or breaks the table."""
    hostile = "x`<img src=x onerror=alert(1)>|[a](javascript:alert(1))"
    withheld = [{"path": "a.py", "line": 3, "symbol": "s", "bail": hostile}]
    document = _pypdf2_document(
        [
            {"full_name": "o/" + hostile, "sha": "b" * 40, "band": hostile, "outcome": "blocked",
             "blocked": hostile, "files_planned": 0, "usages": 1, "withheld": withheld},
            {"full_name": "o/gone", "sha": "b" * 40, "band": "b", "outcome": None, "error": f"{hostile}: x"},
        ]
    )  # fmt: skip
    block = render_dryrun_block(document)
    assert "<img" not in block and "](javascript" not in block
    for line in block.splitlines():
        if line.startswith("|") and "o/" in line:  # a repository's row: six cells, whatever its values
            assert line.replace("\\|", "").count("|") == 7, line
            assert line.count("`") % 2 == 0, line  # every code span closed where it opened
    assert "&#60;img" in block and "&#96;" in block
