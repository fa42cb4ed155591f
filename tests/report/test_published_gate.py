"""What the results document gains: a repeatability block per repeated round, and the decisions."""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import pytest

from pytest_obelize_bench.grading.attempts import record_file_name
from pytest_obelize_bench.promotion.decision_list import (
    check_decisions,
    render_decisions,
    with_decisions,
)
from pytest_obelize_bench.report.repeat_render import render_repeatability
from pytest_obelize_bench.report.round.block_markdown import render_round_block
from pytest_obelize_bench.report.round.round_files import load_round
from pytest_obelize_bench.report.summarize import summarize
from pytest_obelize_bench.report.summary_json import round_summary
from tests.helpers import runs
from tests.helpers.project import PROJECT


def flaky_round() -> list[object]:
    return [
        runs.facts("a", "verified_success", attempt=1),
        runs.facts("a", "patched_unverified", attempt=2, baseline="fail", touched=("x.py", "y.py")),
        runs.facts("a", "verified_success", attempt=3),
        *(runs.facts("b", "partial", attempt=n) for n in (1, 2, 3)),
    ]


def test_no_block_when_every_case_ran_once() -> None:
    assert render_repeatability([runs.facts("a", "partial"), runs.facts("b", "verified_success")]) == []


def test_the_block_shows_stability_pass_hat_k_and_flaky_cases() -> None:
    lines = render_repeatability(flaky_round())  # type: ignore[arg-type]
    text = "\n".join(lines)
    assert lines[0] == "#### Repeatability"
    assert "counts the first attempt of each case only" in text
    # mean over a (2 of 3) and b (0 of 3): k=1 (2/3 + 0) / 2 = 33.3%, k=2 (1/3) / 2 = 16.7%, k=3 0
    assert "| pass^1 | 33.3% |" in lines and "| pass^2 | 16.7% |" in lines and "| pass^3 | 0.0% |" in lines
    assert "| Flaky cases | `a` |" in lines and "| Flaky baselines | `a` |" in lines
    row = next(line for line in lines if line.startswith("| `a` |"))
    assert "verified_success 2, patched_unverified 1" in row
    assert "k=1 66.7%, k=2 33.3%, k=3 0.0%" in row
    assert "baseline suite differs: pass / fail / pass" in row
    assert "files touched: 1 / 2 / 1" in row
    stable = next(line for line in lines if line.startswith("| `b` |"))
    assert stable.endswith("| no | -- |")


def test_the_round_document_and_summary_json_gain_the_block_only_when_repeated(tmp_path: Path) -> None:
    from pytest_obelize_bench.casefile.cases import load_case_file

    project = PROJECT / "cases" / "cases.yaml"
    case_file = load_case_file(project)
    first = case_file.cases[0]
    folder = tmp_path / "round-2"
    folder.mkdir()
    for attempt, tier in ((1, "verified_success"), (2, "partial")):
        record = runs.record(first.id, tier, attempt=attempt, split=first.split or "dev")
        (folder / record_file_name(first.id, attempt)).write_text(record.to_json(), encoding="utf-8")
    data = load_round(tmp_path, case_file, 2)
    assert [r.tier for r in data.records.values()] == ["verified_success"]  # the headline: attempt 1
    assert [a.attempt for a in data.attempts] == [1, 2]
    block = render_round_block(data)
    assert "#### Repeatability" in block and f"`{first.id}`" in block.split("#### Repeatability")[1]
    summary = round_summary(data)
    assert summary["repeatability"]["flaky"] == [first.id]
    (folder / record_file_name(first.id, 2)).unlink()
    single = load_round(tmp_path, case_file, 2)
    assert "#### Repeatability" not in render_round_block(single)
    assert "repeatability" not in round_summary(single)


def decision_document(decision: str = "promote", candidate: str = "new") -> dict[str, object]:
    return {
        "schema_version": 1,
        "evaluated_at": "2026-12-02T12:00:00Z",
        "decision": decision,
        "failed_rules": [] if decision == "promote" else ["intervals_apart", "alpha"],
        "policy_sha256": "c0ffee" * 10 + "abcd",
        "incumbent": {"run_id": "old", "tool_version": "0.7.0"},
        "candidate": {"run_id": candidate, "tool_version": "0.8.0"},
        "figures": {
            "incumbent": {"verified_success": {"k": 2, "n": 20}},
            "candidate": {"verified_success": {"k": 18, "n": 20}},
        },
    }


def test_the_decisions_list() -> None:
    assert render_decisions([]) is None
    block = render_decisions(
        [
            ("2026-12-02-new.json", decision_document()),
            ("2026-12-01-a.json", decision_document("insufficient_evidence", "a")),
        ]
    )
    assert block is not None
    lines = block.splitlines()
    assert lines[0].startswith("<!-- decisions:begin") and lines[-1] == "<!-- decisions:end -->"
    rows = [line for line in lines if line.startswith("| 2026")]
    assert rows[0].startswith(
        "| 2026-12-02 | a (obelize 0.8.0) | old (obelize 0.7.0) | `insufficient_evidence` "
        "| 2 of 20 -> 18 of 20 | intervals_apart, alpha |"
    )
    assert rows[1].endswith("| `2026-12-02-new.json` |")


def test_a_planted_decision_cannot_break_the_table() -> None:
    hostile = {
        "decision": "promote | injected\n\n# heading",
        "candidate": "not a mapping",
        "figures": [1],
        "failed_rules": "x",
    }
    block = render_decisions([("2026-12-09-x.json", hostile)])
    assert block is not None
    row = next(line for line in block.splitlines() if "injected" in line)
    assert row.count(" | ") == 9 and "\\|" in row and "# heading" in row


def test_the_block_goes_before_the_rounds_is_replaced_and_removed() -> None:
    document = "# Results\n\nintro\n\n<!-- round-1:begin x -->\nround one\n<!-- round-1:end -->\n"
    block = render_decisions([("d.json", decision_document())])
    assert block is not None
    placed = with_decisions(document, block)
    assert placed.index("<!-- decisions:begin") < placed.index("<!-- round-1:begin")
    assert with_decisions(placed, block) == placed
    other = render_decisions([("d.json", decision_document("reject"))])
    assert other is not None and "`reject`" in with_decisions(placed, other)
    assert with_decisions(placed, None) == document
    assert with_decisions("no rounds yet\n", block).endswith(block)


def test_check_decisions(tmp_path: Path) -> None:
    path = tmp_path / "doc.md"
    block = render_decisions([("d.json", decision_document())])
    path.write_text("intro\n", encoding="utf-8")
    assert check_decisions(path, None) is None
    assert check_decisions(path, block) == "the decisions in results/decisions/ are not listed"
    path.write_text(with_decisions("intro\n", block), encoding="utf-8")
    assert check_decisions(path, block) is None
    assert check_decisions(path, None) is not None and "no longer holds" in str(check_decisions(path, None))
    changed = render_decisions([("d.json", decision_document("reject"))])
    assert check_decisions(path, changed) == "the decisions block differs from a fresh render"


def test_summarize_lists_decisions_and_check_holds_them_to_the_files(tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(PROJECT / "results", results)
    cases = PROJECT / "cases" / "cases.yaml"
    assert summarize(results, cases, check=True, out=io.StringIO()) == 0
    decisions = results / "decisions"
    decisions.mkdir(exist_ok=True)  # the project's own decisions may be there already
    (decisions / "2026-12-02-new.json").write_text(json.dumps(decision_document()), encoding="utf-8")
    out = io.StringIO()
    assert summarize(results, cases, check=True, out=out) == 1
    # a new decision is missing from the list, or the list the project published differs from it
    assert "not listed" in out.getvalue() or "the decisions block differs from a fresh render" in out.getvalue()
    assert summarize(results, cases, check=False, out=io.StringIO()) == 0
    text = (results / "BENCHMARK_RESULTS.md").read_text(encoding="utf-8")
    assert "## Promotion decisions" in text and text.index("## Promotion decisions") < text.index("<!-- round-1:begin")
    assert summarize(results, cases, check=True, out=io.StringIO()) == 0
    (decisions / "2026-12-02-new.json").write_text(json.dumps(decision_document("reject")), encoding="utf-8")
    out = io.StringIO()
    assert summarize(results, cases, check=True, out=out) == 1 and "differs from a fresh render" in out.getvalue()


def test_summarize_refuses_a_symlinked_decision(tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(PROJECT / "results", results)
    (results / "decisions").mkdir(exist_ok=True)  # the project's own decisions may be there already
    planted = tmp_path / "planted.json"
    planted.write_text(json.dumps(decision_document()), encoding="utf-8")
    os.symlink(planted, results / "decisions" / "2026-12-02-new.json")
    out = io.StringIO()
    assert summarize(results, PROJECT / "cases" / "cases.yaml", check=True, out=out) == 1
    assert "symlinked decision document is refused" in out.getvalue()


@pytest.mark.parametrize("check", [True, False])
def test_a_symlinked_graded_facts_file_is_one_line_not_a_traceback(tmp_path: Path, check: bool) -> None:
    results = tmp_path / "results"
    shutil.copytree(PROJECT / "results", results)
    from pytest_obelize_bench.casefile.cases import load_case_file

    case = load_case_file(PROJECT / "cases" / "cases.yaml").cases[0]
    folder = results / "round-2"
    (folder / "artefacts").mkdir(parents=True, exist_ok=True)  # round 2 is published: its folder may be there
    (folder / f"{case.id}.json").write_text(runs.record(case.id, split=case.split or "dev").to_json(), encoding="utf-8")
    (folder / "artefacts" / f"{case.id}.json").unlink(missing_ok=True)
    os.symlink(tmp_path / "elsewhere.json", folder / "artefacts" / f"{case.id}.json")
    out = io.StringIO()
    assert summarize(results, PROJECT / "cases" / "cases.yaml", check=check, out=out) == 1
    assert "symlink" in out.getvalue() and out.getvalue().count("\n") == 1
