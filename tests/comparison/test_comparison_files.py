"""Round 1's comparison as imported: the record and review unchanged, the block, and the checks on them."""

from __future__ import annotations

import copy
import hashlib
import io
import json
import shutil
from pathlib import Path

import pytest
import yaml

from pytest_obelize_bench.casefile.cases import load_case_file
from pytest_obelize_bench.casefile.promotion_policy import policy_beside
from pytest_obelize_bench.casefile.reviews import ReviewFileError
from pytest_obelize_bench.cli import main
from pytest_obelize_bench.comparison.assemble import ComparisonScore, assemble
from pytest_obelize_bench.comparison.block_text import comparison_blocks, round_facts
from pytest_obelize_bench.comparison.review_file import (
    parse_review,
    read_review,
    review_problems,
)
from pytest_obelize_bench.comparison.rows import (
    ComparisonRecordError,
    parse_comparison,
    read_comparison,
)
from pytest_obelize_bench.comparison.side_by_side import render_comparison_block
from pytest_obelize_bench.report.summarize import summarize
from tests.helpers.project import PROJECT

RECORD = PROJECT / "results" / "comparison" / "round-1.json"
REVIEW = PROJECT / "cases" / "comparison-round-1.yaml"
PROMPT = PROJECT / "cases" / "comparison" / "COMPARISON_PROMPT.md"
SUMS = PROJECT / "tests" / "data" / "upstream" / "comparison" / "SHA256SUMS"


def test_upstreams_files_are_kept_byte_for_byte() -> None:
    sums = {name: digest for digest, name in (line.split("  ", 1) for line in SUMS.read_text().splitlines())}
    for path, upstream in ((RECORD, "round-1.json"), (REVIEW, "comparison.yaml"), (PROMPT, "COMPARISON_PROMPT.md")):
        assert hashlib.sha256(path.read_bytes()).hexdigest() == sums[upstream], path


def _score() -> ComparisonScore:
    cases = {case.id: case for case in load_case_file(PROJECT / "cases" / "cases.yaml").cases}
    record = read_comparison(RECORD)
    return assemble(record, read_review(REVIEW), cases, round_facts(PROJECT / "results", 1, cases))


def test_round_one_under_the_protocols_matching_gives_upstreams_figures() -> None:
    score = _score()
    agent, ours = score.totals["general_agent"], score.totals["obelize"]
    assert (agent.key_rows, agent.cleared, ours.key_rows, ours.cleared) == (174, 154, 174, 17)
    assert agent.cases == ours.cases == 13
    assert agent.runtime_total == 857 and ours.runtime_total is not None and round(ours.runtime_total, 1) == 18.2
    # Two rejected edits: Jarvis's chat history and humanbound's import guard.
    assert agent.corrections == (174 - 154) + 2 and ours.corrections == 174 - 17
    assert agent.tiers["wrong"] == 2 and agent.tiers["verified_success"] == 1
    assert all(one.agrees for one in score.calibration) and len(score.calibration) == 13


def test_the_results_document_holds_the_current_comparison_block() -> None:
    blocks = comparison_blocks(PROJECT / "results", PROJECT / "cases" / "cases.yaml")
    text = (PROJECT / "results" / "BENCHMARK_RESULTS.md").read_text(encoding="utf-8")
    assert "<!-- comparison-round-1:begin" in text
    assert blocks["comparison-round-1"].strip("\n") in text
    assert "| `general_agent` | 13 | 1 of 13" in blocks["comparison-round-1"]


def test_a_bad_record_gets_one_line_naming_the_case_and_the_field() -> None:
    data = json.loads(RECORD.read_text())
    broken = copy.deepcopy(data)
    broken["cases"]["LucasHJin__vit"]["runtime_seconds"] = "slow"
    with pytest.raises(ComparisonRecordError) as caught:
        parse_comparison(broken, "round-1.json")
    assert str(caught.value).startswith("round-1.json: case LucasHJin__vit: runtime_seconds: ")
    assert "\n" not in str(caught.value)
    broken = copy.deepcopy(data)
    broken["cases"]["LucasHJin__vit"]["findings"]["other"] = []
    with pytest.raises(ComparisonRecordError, match="unknown scan 'other'"):
        parse_comparison(broken, "round-1.json")


def test_a_bad_review_gets_one_line_naming_the_arm_the_case_and_the_field() -> None:
    data = yaml.safe_load(REVIEW.read_text())
    del data["reviews"]["obelize"]["dongxnb__gupiao"]["reviewed"]
    with pytest.raises(ReviewFileError) as caught:
        parse_review(data, "review.yaml")
    assert str(caught.value) == "review.yaml: arm obelize: case dongxnb__gupiao: reviewed: a value is required"


def test_the_check_names_missing_reviews_and_wrong_entries_on_unchanged_files() -> None:
    record = read_comparison(RECORD)
    data = yaml.safe_load(REVIEW.read_text())
    assert review_problems(record, parse_review(data, "r")) == []
    del data["reviews"]["general_agent"]["000wan__ara-ai-bot"]
    data["reviews"]["obelize"]["dongxnb__gupiao"]["wrong"] = [{"path": "tests/test_gemini.py", "why": "x"}]
    problems = review_problems(record, parse_review(data, "r"))
    assert problems == [
        "general_agent: 000wan__ara-ai-bot: no review",
        "obelize: dongxnb__gupiao: wrong names tests/test_gemini.py, a file the arm did not change",
    ]


def _project(tmp_path: Path) -> tuple[Path, Path]:
    results, cases = tmp_path / "results", tmp_path / "cases"
    shutil.copytree(PROJECT / "results", results)
    shutil.copytree(PROJECT / "cases", cases)
    return results, cases / "cases.yaml"


def test_comparison_check_on_the_command_line(tmp_path: Path) -> None:
    out = io.StringIO()
    assert main(["comparison", "check", "--round", "1"], out) == 0
    assert out.getvalue() == "comparison round 1: 13 cases reviewed for general_agent and obelize\n"
    results, case_file = _project(tmp_path)
    data = yaml.safe_load((case_file.parent / "comparison-round-1.yaml").read_text())
    del data["reviews"]["obelize"]["LucasHJin__vit"]
    (case_file.parent / "comparison-round-1.yaml").write_text(yaml.safe_dump(data))
    out = io.StringIO()
    args = ["comparison", "check", "--round", "1", "--results", str(results), "--cases", str(case_file)]
    assert main(args, out) == 1
    assert out.getvalue() == "obelize-bench comparison check: round 1: obelize: LucasHJin__vit: no review\n"


def test_summarize_check_covers_the_comparison_block(tmp_path: Path) -> None:
    results, case_file = _project(tmp_path)
    out = io.StringIO()
    assert summarize(results, case_file, check=True, out=out) == 0, out.getvalue()
    document = results / "BENCHMARK_RESULTS.md"
    text = document.read_text(encoding="utf-8")
    document.write_text(text.replace("| 174 | 154 |", "| 174 | 160 |"), encoding="utf-8")
    out = io.StringIO()
    assert summarize(results, case_file, check=True, out=out) == 1
    assert "the comparison-round-1 block differs from a fresh render" in out.getvalue()
    assert summarize(results, case_file, check=False, out=io.StringIO()) == 0
    assert document.read_text(encoding="utf-8") == text


def test_a_case_where_obelizes_scan_and_plan_disagree_is_flagged_in_the_block() -> None:
    cases = {case.id: case for case in load_case_file(PROJECT / "cases" / "cases.yaml").cases}
    data = json.loads(RECORD.read_text())
    # Put one cleared row back into obelize's tree: the scan now says 2 where the plan says 3.
    data["cases"]["ashishkumar5de__PDF-QL"]["findings"]["obelize"] = [["app.py", 9, "import", "google.generativeai"]]
    record = parse_comparison(data, "round-1.json")
    score = assemble(record, read_review(REVIEW), cases, round_facts(PROJECT / "results", 1, cases))
    flagged = [one for one in score.calibration if one.agrees is False]
    assert [(one.case, one.scan_cleared, one.plan_migrated) for one in flagged] == [("ashishkumar5de__PDF-QL", 2, 3)]
    block = render_comparison_block(score, policy_beside(PROJECT / "cases" / "cases.yaml"))
    assert "they agree on 12 of 13 cases" in block
    assert "**Flagged: the scan and the plan disagree.**" in block and "| ashishkumar5de__PDF-QL | 2 | 3 |" in block
