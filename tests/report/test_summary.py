"""The round block, summary.json and terminal lines: hand-built rounds pin each table, and the
round-1 document on disk matches a fresh render."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_obelize_bench.casefile.cases import (
    CaseFile,
    Retired,
)
from pytest_obelize_bench.grading.record import (
    ErrorInfo,
    SuiteResult,
)
from pytest_obelize_bench.report.round.block_markdown import render_round_block
from pytest_obelize_bench.report.round.case_entries import RoundData
from pytest_obelize_bench.report.round.figures import round_figures
from pytest_obelize_bench.report.round.round_files import (
    load_round,
)
from pytest_obelize_bench.report.round.terminal_lines import terminal_lines
from pytest_obelize_bench.report.summary_json import round_summary
from tests.helpers.handbuilt import make_case, make_record
from tests.helpers.summary_rounds import twenty_five_of_twenty


def line_of(block: str, start: str) -> str:
    """The one line of the block that starts with ``start``."""
    found = [line for line in block.splitlines() if line.startswith(start)]
    assert len(found) == 1, (start, found)
    return found[0]


def section(block: str, title: str) -> str:
    """The text of one ``#### title`` section, up to the next heading."""
    after = block.split(f"#### {title}", 1)[1]
    return after.split("\n####", 1)[0]


def test_headline_counts_and_wilson_intervals() -> None:
    block = render_round_block(twenty_five_of_twenty())
    headline = section(block, "Headline")
    assert "| Cases | all | 20 | 5 | 25.0% [11.2%, 46.9%] |" in headline
    assert "| Cases | dev | 12 | 3 | 25.0% [8.9%, 53.2%] |" in headline
    assert "| Cases | holdout | 8 | 2 | 25.0% [7.1%, 59.1%] |" in headline
    assert "| Unique patterns | all | 20 | 5 | 25.0% [11.2%, 46.9%] |" in headline
    assert "n = 0, rate `--`" in headline  # no model arm


def test_no_rate_without_interval() -> None:
    block = render_round_block(twenty_five_of_twenty())
    for line in block.splitlines():
        if "%" in line and "95% Wilson" not in line:
            assert "%]" in line, line


def test_round_with_no_records_is_not_yet_run() -> None:
    data = RoundData(
        round=2, cases=[make_case("a"), make_case("b", "holdout"), make_case("c", control=True)], records={}
    )
    block = render_round_block(data)
    assert block.startswith("### Round 2\n")
    assert "Not yet run" in block
    assert "| Records | not yet run |" in block
    assert "| Provenance | not yet run |" in block
    assert "| dev / holdout | 1 / 1 |" in block
    headline = section(block, "Headline")
    for scope in ("Cases", "Unique patterns"):
        for split in ("all", "dev", "holdout"):
            assert f"| {scope} | {split} | 0 | 0 | -- |" in headline
    assert "%]" not in headline
    # the ceiling is published before the round runs
    assert "| **Total** | dev 1 of 1, holdout 1 of 1 | **2 of 2** | -- |" in block
    assert "| `c` | already-migrated | -- | -- | -- | not yet run |" in block
    summary = round_summary(data)
    assert summary["status"] == "not_run"
    assert summary["provenance"] is None
    assert all(row["rate"] is None and row["low"] is None for row in summary["headline"])


def test_null_human_edits_prints_dashes_never_zero() -> None:
    data = RoundData(
        round=1,
        cases=[make_case("a"), make_case("b")],
        records={
            "a": make_record("a", "patched_unverified", human_edits=None, forbidden_reported=None),
            "b": make_record("b", human_edits=0),
        },
    )
    table = section(render_round_block(data), "Every graded case")
    row_a = line_of(table, "| `a` |").split(" | ")
    row_b = line_of(table, "| `b` |").split(" | ")
    # Case, Split, Arm, Tier, Detected, FP, Missed, Forbidden, Unmigrated, Human edits, Runtime
    assert row_a[7] == "--" and row_a[9] == "--"
    assert row_b[7] == "0" and row_b[9] == "0"


def test_forty_near_identical_cases_are_one_pattern_that_wins_if_any_member_wins() -> None:
    cases = [make_case(f"c{i:02d}") for i in range(40)]
    records = {c.id: make_record(c.id, "partial") for c in cases}
    records["c17"] = make_record("c17", "verified_success")
    data = RoundData(round=1, cases=cases, records=records)
    assert "| Unique patterns (`pattern_key`) | 1 |" in render_round_block(data)
    figures = round_figures(data)
    assert figures.counts.unique_patterns == 1
    assert figures.headline_rate("cases", "all").format() == "2.5% [0.4%, 12.9%]"
    patterns = figures.headline_rate("patterns", "all")
    assert (patterns.k, patterns.n, patterns.format()) == (1, 1, "100.0% [20.7%, 100.0%]")
    records["c17"] = make_record("c17", "partial")
    patterns = round_figures(data).headline_rate("patterns", "all")
    assert (patterns.k, patterns.n, patterns.format()) == (0, 1, "0.0% [0.0%, 79.3%]")


def test_a_pattern_spanning_both_sides_counts_on_both() -> None:
    cases = [make_case("d", "dev"), make_case("h", "holdout")]
    records = {"d": make_record("d", "verified_success", "dev"), "h": make_record("h", "partial", "holdout")}
    figures = round_figures(RoundData(round=1, cases=cases, records=records))
    patterns = {row.split: (row.rate.k, row.rate.n) for row in figures.headline if row.scope == "patterns"}
    assert patterns == {"all": (1, 1), "dev": (1, 1), "holdout": (0, 1)}


def test_model_arm_is_never_in_the_headline() -> None:
    cases = [make_case("rules1"), make_case("rules2"), make_case("model1", pattern=("google.generativeai.x",))]
    records = {
        "rules1": make_record("rules1", "partial"),
        "rules2": make_record("rules2", "partial"),
        "model1": make_record("model1", "verified_success", llm_tokens_in=1200),
    }
    data = RoundData(round=1, cases=cases, records=records)
    block = render_round_block(data)
    headline_table = section(block, "Headline").split("Model arm")[0]
    assert "| Cases | all | 2 | 0 | 0.0% [0.0%, 65.8%] |" in headline_table
    assert "| Unique patterns | all | 1 | 0 |" in headline_table
    model_table = section(block, "Headline").split("Model arm")[1]
    assert "| Cases | all | 1 | 1 | 100.0% [20.7%, 100.0%] |" in model_table
    assert "| `model1` | dev | model | `verified_success` |" in block
    tiers = section(block, "Outcome tiers")
    assert "| `verified_success` | 0 | 0 | 0 | 1 |" in tiers
    summary = round_summary(data)
    assert summary["counts"]["headline_cases"] == 2
    assert summary["counts"]["model_arm_cases"] == 1
    assert summary["model_arm"][0] == {
        "scope": "cases",
        "split": "all",
        "k": 1,
        "n": 1,
        "rate": 1.0,
        "low": pytest.approx(0.2065, abs=1e-4),
        "high": 1.0,
        "method": "wilson",
        "confidence": 0.95,
    }
    lines = terminal_lines(data, Path("results"), None)
    assert any(line.startswith("model arm (never in the headline): n=1") for line in lines)


def test_splits_come_from_the_rounds_records_not_the_case_file() -> None:
    # The case file (a later round) moved m to dev; this round's record says holdout.
    cases = [make_case("m", "dev"), make_case("s", "dev"), make_case("unrun", "holdout")]
    records = {"m": make_record("m", "verified_success", "holdout"), "s": make_record("s", "partial", "dev")}
    block = render_round_block(RoundData(round=1, cases=cases, records=records))
    assert "| dev / holdout | 1 / 2 |" in block
    assert "| Cases | holdout | 1 | 1 |" in block
    assert "| Cases | dev | 1 | 0 |" in block
    assert "| `m` | holdout | yes | -- |" in block
    assert "| `unrun` | holdout | yes | -- |" in block  # no record: the case file's split
    assert "| no record | 0 | 1 | 1 | -- |" in block


def test_control_flag_comes_from_the_record() -> None:
    cases = [make_case("x", "dev"), make_case("y", "dev")]
    records = {
        "x": make_record("x", "unsupported", control=True, detected=0, manifest_reported=0, patch_applied=False),
        "y": make_record("y"),
    }
    block = render_round_block(RoundData(round=1, cases=cases, records=records))
    assert "| Graded cases (n) | 1 |" in block
    assert "| Negative controls | 1 |" in block
    assert "| `x` | -- | 0 | 0 | `unsupported` | yes |" in block


def test_ceiling_table_and_tally() -> None:
    cases = [
        make_case("a"),
        make_case("b", test_cmd=None),
        make_case("c", "holdout", test_cmd=None),
        make_case("d", "holdout", retired=Retired(reason="gone", round=5)),
        make_case("e", "holdout", retired=Retired(reason="gone", round=1)),
    ]
    block = render_round_block(RoundData(round=2, cases=cases, records={}))
    ceiling = section(block, "Ceiling")
    assert "| `a` | dev | yes | -- |" in ceiling
    assert "| `b` | dev | no | no test command |" in ceiling
    assert "| `d` | holdout | yes | -- |" in ceiling  # retired only from round 5 on
    assert "| `e` | holdout | no | the case is retired |" in ceiling
    assert (
        "| **Total** | dev 1 of 2, holdout 1 of 3 | **2 of 5** | 2 no test command; 1 the case is retired |" in ceiling
    )


def test_controls_suites_and_errors() -> None:
    cases = [make_case("ok"), make_case("boom"), make_case("ctl1", control=True), make_case("ctl2", control=True)]
    records = {
        "ok": make_record(
            "ok",
            tests_baseline=SuiteResult(status="pass", passed=3, failed=0, skipped=1),
            tests_after=SuiteResult(status="pass", passed=None, failed=None, skipped=None),
        ),
        "boom": make_record(
            "boom", "error", error=ErrorInfo(step="install", reason="install_failed", detail="exit 1 | see log")
        ),
        "ctl1": make_record(
            "ctl1",
            "unsupported",
            control=True,
            detected=0,
            manifest_reported=0,
            false_positive_edit=0,
            patch_applied=False,
        ),
        "ctl2": make_record("ctl2", "wrong", control=True, detected=2, false_positive_edit=1),
    }
    block = render_round_block(RoundData(round=1, cases=cases, records=records))
    suites = section(block, "What the suites did")
    assert "| `ok` | `pass` | 3 / 0 / 1 | `pass` | -- |" in suites
    assert "`boom`" not in suites
    controls = section(block, "Negative controls")
    assert "| `ctl1` | already-migrated | 0 | 0 | `unsupported` | yes |" in controls
    assert "| `ctl2` | already-migrated | 2 | 1 | `wrong` | no |" in controls
    assert "Held: 1 of 2 controls with a record, 50.0% [9.5%, 90.5%] (95% Wilson)." in controls
    errors = section(block, "What errored")
    assert "| `boom` | install | install_failed | infrastructure | exit 1 &#124; see log |" in errors
    assert "| Cases | all | 2 | 1 |" in block  # an errored case stays in n


def test_a_control_that_reports_a_pin_did_not_hold_and_an_uncounted_one_is_unknown() -> None:
    cases = [make_case("pin", control=True), make_case("old", control=True)]
    records = {
        "pin": make_record(
            "pin",
            "unsupported",
            control=True,
            detected=0,
            manifest_reported=1,
            false_positive_edit=0,
            patch_applied=False,
        ),
        "old": make_record("old", "unsupported", control=True, detected=0, false_positive_edit=0, patch_applied=False),
    }
    controls = section(render_round_block(RoundData(round=1, cases=cases, records=records)), "Negative controls")
    assert "| `pin` | already-migrated | 0 | 0 | `unsupported` | no |" in controls
    assert "| `old` | already-migrated | 0 | 0 | `unsupported` | unknown (pins not counted) |" in controls
    assert "Held: 0 of 2 controls with a record" in controls


def test_round_1_pins_come_from_its_collected_file(tmp_path: Path) -> None:

    (tmp_path / "round-1").mkdir()
    record = make_record("ctl", "unsupported", control=True, detected=0, false_positive_edit=0, patch_applied=False)
    (tmp_path / "round-1" / "ctl.json").write_text(record.to_json(), encoding="utf-8")
    case_file = CaseFile(
        path=tmp_path / "c.yaml",
        sha256="0" * 64,
        round=2,
        from_version="0.8.6",
        to_version="2.24.0",
        cases=(make_case("ctl", control=True),),
        split_moves=(),
    )
    assert load_round(tmp_path, case_file, 1).records["ctl"].measurements.manifest_reported is None
    (tmp_path / "errors").mkdir()
    finding = {"path": "requirements.txt", "line": 1, "kind": "manifest", "symbol": "google-generativeai",
               "scan_status": "eligible", "bail": None, "confidence_reason": None}  # fmt: skip
    entry = {"run_id": "r", "exit_code": 0, "applied": [], "findings": [finding], "withheld": []}
    collected = {"round": 1, "schema_version": 1, "obelize_version": [], "pack_sha256": [], "cases": {"ctl": entry}}
    (tmp_path / "errors" / "round-1.json").write_text(json.dumps(collected))
    loaded = load_round(tmp_path, case_file, 1)
    assert loaded.records["ctl"].measurements.manifest_reported == 1
    assert loaded.facts["ctl"].held is False and loaded.facts["ctl"].collected_name == "results/errors/round-1.json"
    held = line_of(section(render_round_block(loaded), "Negative controls"), "| `ctl` |")
    assert held.endswith("| no, pins counted in `results/errors/round-1.json` |"), held
    assert json.loads((tmp_path / "round-1" / "ctl.json").read_text())["measurements"].get("manifest_reported") is None


def test_no_suite_table_when_no_suite_ran() -> None:
    data = RoundData(round=1, cases=[make_case("a")], records={"a": make_record("a", "patched_unverified")})
    assert "What the suites did" not in render_round_block(data)


def test_schema_2_fields_print_dashes() -> None:
    record = make_record("a", "partial", schema_version=2, forbidden_reported=None)
    block = render_round_block(RoundData(round=1, cases=[make_case("a")], records={"a": record}))
    assert "| Records | 1 (schema_version 2) |" in block
    assert line_of(section(block, "Every graded case"), "| `a` |").split(" | ")[7] == "--"
