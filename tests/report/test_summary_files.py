"""The results document's markers and check, summarize on disk, the round-1 figures and document,
the terminal lines and compare."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from pytest_obelize_bench.casefile.cases import (
    load_case_file,
)
from pytest_obelize_bench.grading.record import (
    Provenance,
)
from pytest_obelize_bench.records.results_document import (
    DOCUMENT_NAME,
    begin_marker,
    check_document,
    end_marker,
    render_document,
)
from pytest_obelize_bench.report.round.block_markdown import render_round_block
from pytest_obelize_bench.report.round.case_entries import RoundData
from pytest_obelize_bench.report.round.round_files import (
    load_round,
    round_outputs,
    rounds_on_disk,
    write_round_outputs,
)
from pytest_obelize_bench.report.round.terminal_lines import terminal_lines
from pytest_obelize_bench.report.run_compare import compare_rounds
from pytest_obelize_bench.report.summarize import summarize
from pytest_obelize_bench.report.summary_json import round_summary
from tests.helpers.handbuilt import make_case, make_record
from tests.helpers.project import PROJECT
from tests.helpers.summary_rounds import twenty_five_of_twenty

RESULTS = PROJECT / "results"


OUR_CASES = PROJECT / "cases" / "cases.yaml"


UPSTREAM_CASES = PROJECT.parent / "shared" / "upstream" / "cases.yaml"


def blocks_for(*rounds: int) -> dict[int, str]:
    return {n: render_round_block(RoundData(round=n, cases=[make_case("a")], records={})) for n in rounds}


def copy_round_1(tmp_path: Path) -> Path:
    results = tmp_path / "results"
    shutil.copytree(RESULTS / "round-1", results / "round-1")
    return results


def case_file_path() -> Path:
    if OUR_CASES.exists():
        return OUR_CASES
    if UPSTREAM_CASES.exists():
        return UPSTREAM_CASES
    pytest.skip("no case file to render against")


def round_1() -> RoundData:
    return load_round(RESULTS, load_case_file(case_file_path()), 1)


def test_provenance_cell_ranges_dates_and_lists_interpreters() -> None:
    first = make_record("a")
    second = make_record("b").model_copy(
        update={
            "provenance": Provenance(
                obelize_version="0.8.1",
                pack_sha256="cd" * 32,
                python_used="cpython-3.12.1-linux-x86_64-gnu",
                run_at="2026-10-03T01:00:00Z",
            )
        }
    )
    block = render_round_block(
        RoundData(round=1, cases=[make_case("a"), make_case("b")], records={"a": first, "b": second})
    )
    assert "| obelize | 0.8.0, 0.8.1 |" in block
    assert "| Run on | 2026-10-02 to 2026-10-03 |" in block
    assert "| Interpreters | `cpython-3.12.1-linux-x86_64-gnu` |" in block
    assert "`abababababababab...`, `cdcdcdcdcdcdcdcd...`" in block


def test_render_does_not_depend_on_the_order_of_the_inputs() -> None:
    data = twenty_five_of_twenty()
    shuffled = RoundData(
        round=data.round,
        cases=list(reversed(data.cases)),
        records=dict(reversed(list(data.records.items()))),
    )
    assert render_round_block(shuffled) == render_round_block(data)
    assert round_summary(shuffled) == round_summary(data)
    assert "| `case00` |" in render_round_block(shuffled).split("| `case19` |")[0]


def test_fresh_document_has_intro_markers_and_ascending_rounds(tmp_path: Path) -> None:
    text = render_document(None, blocks_for(2, 1))
    assert text.startswith("# Benchmark results\n")
    assert "obelize-bench summarize --check" in text
    assert text.index(begin_marker(1)) < text.index(end_marker(1)) < text.index(begin_marker(2))
    path = tmp_path / DOCUMENT_NAME
    path.write_text(text)
    assert check_document(path, blocks_for(1, 2)) is None


def test_hand_edit_inside_a_block_fails_the_check(tmp_path: Path) -> None:
    path = tmp_path / DOCUMENT_NAME
    path.write_text(
        render_document(None, blocks_for(1, 2)).replace("| Graded cases (n) | 1 |", "| Graded cases (n) | 9 |", 1)
    )
    reason = check_document(path, blocks_for(1, 2))
    assert reason == "round 1's block differs from a fresh render"
    assert "\n" not in reason


def test_missing_and_extra_blocks_fail_the_check(tmp_path: Path) -> None:
    path = tmp_path / DOCUMENT_NAME
    path.write_text(render_document(None, blocks_for(1)))
    assert check_document(path, blocks_for(1, 3)) == "round 3 has no block"
    path.write_text(render_document(None, blocks_for(1, 2)))
    assert "round 2 has a block" in (check_document(path, blocks_for(1)) or "")
    assert "does not exist" in (check_document(tmp_path / "absent.md", blocks_for(1)) or "")
    path.write_text(render_document(None, blocks_for(1)).replace(end_marker(1), ""))
    assert "round 1" in (check_document(path, blocks_for(1)) or "")


def test_hand_written_text_is_kept_and_blocks_are_replaced_in_place() -> None:
    first = render_document(None, blocks_for(2))
    edited = first.replace("# Benchmark results\n", "# Benchmark results\n\nA note by hand.\n") + "\nTrailing notes.\n"
    fresh = blocks_for(2)
    fresh[2] = fresh[2].replace("### Round 2", "### Round 2 (again)")
    updated = render_document(edited, fresh)
    assert "A note by hand." in updated and "Trailing notes." in updated
    assert "### Round 2 (again)" in updated and updated.count(begin_marker(2)) == 1
    # a missing earlier round goes before the later one, so rounds stay ascending
    with_one = render_document(updated, blocks_for(1))
    assert with_one.index(end_marker(1)) < with_one.index(begin_marker(2))
    assert render_document(with_one, blocks_for(1)) == with_one


def test_every_generated_block_uses_the_one_spelling_of_its_markers() -> None:
    from pytest_obelize_bench.promotion.decision_list import render_decisions, with_decisions
    from pytest_obelize_bench.records.results_document import apply_blocks, block_begin, block_end, stale_block

    text = render_document(None, blocks_for(1))
    decisions = render_decisions([("d.json", {"decision": "promote"})])
    text = apply_blocks(with_decisions(text, decisions), {"gate1": "gate one\n"})
    lines = text.splitlines()
    for name in ("round-1", "decisions", "gate1"):
        assert lines.count(block_begin(name)) == 1 and lines.count(block_end(name)) == 1, name
    assert text.index(block_end("decisions")) < text.index(block_begin("round-1"))
    # a begin line that lost its closing "-->" is no marker: the block counts as malformed, not as found
    broken = text.replace(block_begin("gate1"), "<!-- gate1:begin: edited by hand")
    assert "exactly one begin marker" in (stale_block(broken, {"gate1": "gate one\n"}) or "")
    assert stale_block(text, {"gate1": "gate one\n"}) is None


def test_summarize_writes_then_checks_both_ways(tmp_path: Path) -> None:
    results = copy_round_1(tmp_path)
    cases = case_file_path()
    out = io.StringIO()
    assert summarize(results, cases, check=True, out=out) == 1
    assert "does not exist" in out.getvalue()
    out = io.StringIO()
    assert summarize(results, cases, check=False, out=out) == 0
    assert out.getvalue().startswith(f"wrote {results / DOCUMENT_NAME}")
    out = io.StringIO()
    assert summarize(results, cases, check=True, out=out) == 0, out.getvalue()
    document = results / DOCUMENT_NAME
    document.write_text(document.read_text().replace("| Negative controls | 3 |", "| Negative controls | 4 |", 1))
    out = io.StringIO()
    assert summarize(results, cases, check=True, out=out) == 1
    assert len(out.getvalue().strip().splitlines()) == 1
    assert "round 1's block differs from a fresh render" in out.getvalue()


def test_summarize_reports_a_bad_record_in_one_line(tmp_path: Path) -> None:
    results = copy_round_1(tmp_path)
    (results / "round-1" / "broken.json").write_text("{not json")
    out = io.StringIO()
    assert summarize(results, case_file_path(), check=True, out=out) == 1
    assert "broken.json" in out.getvalue()


def test_rounds_on_disk_and_load_round(tmp_path: Path) -> None:
    results = copy_round_1(tmp_path)
    (results / "round-4").mkdir()
    (results / "round-x").mkdir()
    case_file = load_case_file(case_file_path())
    assert rounds_on_disk(results, case_file) == sorted({1, 4, case_file.round})
    data = load_round(results, case_file, 1)
    assert len(data.records) == 23 and {c.id for c in data.cases} == set(data.records)
    assert load_round(results, case_file, 7).records == {}


def test_write_round_outputs(tmp_path: Path) -> None:
    results = copy_round_1(tmp_path)
    case_file = load_case_file(case_file_path())
    document, summary_path = write_round_outputs(results, case_file, 1)
    assert document == results / DOCUMENT_NAME
    assert summary_path == results / "round-1" / "summary.json"
    outputs = round_outputs(results, case_file, load_round(results, case_file, 1))
    block, charts = outputs.block, outputs.charts
    assert check_document(document, {1: block}) is None
    assert "#### Figures" in block and "](figures/round-1-headline.svg)" in block
    assert sorted(path.name for path in (results / "figures").iterdir()) == sorted(c.file_name for c in charts)
    summary = json.loads(summary_path.read_text())
    assert summary["round"] == 1
    assert summary["headline"][0]["method"] == "wilson" and summary["headline"][0]["confidence"] == 0.95
    # the summary file is not read back as a record
    assert len(load_round(results, case_file, 1).records) == 23


def test_round_1_known_figures() -> None:
    summary = round_summary(round_1())
    counts = summary["counts"]
    assert (counts["graded"], counts["dev"], counts["holdout"], counts["controls"]) == (20, 13, 7, 3)
    assert counts["unique_patterns"] == 16
    assert [(r["scope"], r["split"], r["k"], r["n"]) for r in summary["headline"]] == [
        ("cases", "all", 0, 20),
        ("cases", "dev", 0, 13),
        ("cases", "holdout", 0, 7),
        ("patterns", "all", 0, 16),
        ("patterns", "dev", 0, 10),
        ("patterns", "holdout", 0, 7),
    ]
    assert summary["ceiling"]["reachable"] == 0 and summary["ceiling"]["graded"] == 20
    assert summary["ceiling"]["tally"] == {
        "no test command": 16,
        "a row the key marks `manual`": 3,
        "a row the pack flags rather than edits": 1,
    }
    total = summary["tiers"]["total"]
    assert (total["patched_unverified"], total["partial"], total["unsupported"], total["verified_success"]) == (
        1,
        5,
        14,
        0,
    )
    assert all(c["held"] is True for c in summary["controls"]["cases"])
    assert summary["errors"] == []
    assert summary["provenance"]["obelize_versions"] == ["0.1.0"]


def test_round_1_document_on_disk_matches_a_fresh_render() -> None:
    document = RESULTS / DOCUMENT_NAME
    text = document.read_text(encoding="utf-8")
    data = round_1()
    # round 1's block ends with its error analysis (results/errors/round-1.json is committed)

    block = round_outputs(RESULTS, load_case_file(case_file_path()), data).block
    assert "#### Error analysis" in block
    assert render_document(text, {1: block}) == text
    if OUR_CASES.exists():
        out = io.StringIO()
        assert summarize(RESULTS, OUR_CASES, check=True, out=out) == 0, out.getvalue()


def test_terminal_lines() -> None:
    lines = terminal_lines(round_1(), Path("results"), Path("/tmp/logs"))
    text = "\n".join(lines)
    assert "  cases     all      n=20      0  0.0% [0.0%, 16.1%]" in lines
    assert "tiers: error 0, wrong 0, unsupported 14, partial 5, verified_success 0, patched_unverified 1" in lines
    assert "ceiling: 0 of 20 can reach verified_success (16 no test command;" in text
    assert lines[-3:] == ["results: results/round-1", "summary: results/BENCHMARK_RESULTS.md", "logs:    /tmp/logs"]


def test_compare_rounds_paired_table_and_mcnemar() -> None:
    cases = [make_case(f"c{i}") for i in range(8)] + [make_case("ctl", control=True)]
    a = RoundData(round=1, cases=cases, records={f"c{i}": make_record(f"c{i}", "partial") for i in range(8)})
    b_records = {f"c{i}": make_record(f"c{i}", "verified_success" if i < 5 else "partial") for i in range(7)}
    b_records["ctl"] = make_record("ctl", "unsupported", control=True, detected=0, patch_applied=False)
    b = RoundData(round=2, cases=cases, records=b_records)
    text = "\n".join(compare_rounds(a, b))
    assert "over the 7 graded cases with a record in both (1 in only one round left out)" in text
    assert "success in round 2 only (5): c0, c1, c2, c3, c4" in text
    assert "success in round 1 only (0): --" in text
    assert "exact McNemar p = 0.0625" in text
    assert "round 2: 5 of 7, 71.4% [35.9%, 91.8%]" in text
    # what "no difference" means: the verdict at alpha, and what 7 cases could have shown
    assert "verdict: not told apart at alpha 0.05: p = 0.0625 >= alpha 0.05" in text
    assert "difference (round 2 minus round 1), mean over cases: +71.4 points [" in text
    assert "minimum detectable difference over 7 cases: 7 more of 7 cases (100.0%)" in text
    assert "verdict: told apart at alpha 0.5" in "\n".join(compare_rounds(a, b, alpha=0.5))
    # the policy's min_n binds here as in the gate: 7 cases are fewer than 20
    short = "\n".join(compare_rounds(a, b, alpha=0.5, min_n=20))
    assert "not told apart at alpha 0.5: 7 cases < min_n 20" in short
    assert "no difference over 7 cases can decide" in short


def test_compare_tells_sandboxed_sides_apart() -> None:
    cases = [make_case("c0"), make_case("c1")]
    plain = {case.id: make_record(case.id) for case in cases}
    boxed = {
        case_id: record.model_copy(
            update={"provenance": record.provenance.model_copy(update={"sandbox": "bwrap 0.8.0 (suites offline)"})}
        )
        for case_id, record in plain.items()
    }
    a = RoundData(round=1, cases=cases, records=plain)
    b = RoundData(round=2, cases=cases, records=boxed)
    text = "\n".join(compare_rounds(a, b))
    assert "sandbox: round 1: none; round 2: bwrap 0.8.0 (suites offline)" in text
    assert "the sides ran under different sandboxes" in text
    same = "\n".join(compare_rounds(b, b))
    assert "different sandboxes" not in same
    block = render_round_block(b)
    assert "| Sandbox | bwrap 0.8.0 (suites offline) |" in block
