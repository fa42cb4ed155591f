"""round_figures.py: a round's figures read directly, on round 1's published records and on hand-built rounds."""

from __future__ import annotations

import dataclasses

import pytest

from pytest_obelize_bench.casefile.cases import Retired, load_case_file
from pytest_obelize_bench.grading.record import ErrorInfo, Provenance, Record, SuiteResult
from pytest_obelize_bench.report.round.block_markdown import BLOCK_SECTIONS, render_round_block, render_sections
from pytest_obelize_bench.report.round.case_entries import CAP_NO_KEY, RoundData
from pytest_obelize_bench.report.round.figures import RoundFigures, round_figures
from pytest_obelize_bench.report.round.round_files import load_round
from pytest_obelize_bench.report.summary_json import OMIT, SUMMARY_PARTS, figures_summary, round_summary
from tests.helpers import runs
from tests.helpers.handbuilt import five_of_twenty, make_case, make_record
from tests.helpers.project import PROJECT

RESULTS = PROJECT / "results"
CASES = PROJECT / "cases" / "cases.yaml"


@pytest.fixture(scope="module")
def round_1() -> RoundFigures:
    return round_figures(load_round(RESULTS, load_case_file(CASES), 1))


# -- round 1, the published records ---------------------------------------------------------------


def test_round_1_counts_and_headline(round_1: RoundFigures) -> None:
    c = round_1.counts
    assert (c.graded, c.dev, c.holdout, c.controls, c.unique_patterns) == (20, 13, 7, 3, 16)
    assert (c.records, c.graded_with_record, c.graded_without_record) == (23, 20, 0)
    assert (c.headline_cases, c.model_arm_cases) == (20, 0)
    assert [(r.scope, r.split, r.rate.k, r.rate.n) for r in round_1.headline] == [
        ("cases", "all", 0, 20),
        ("cases", "dev", 0, 13),
        ("cases", "holdout", 0, 7),
        ("patterns", "all", 0, 16),
        ("patterns", "dev", 0, 10),
        ("patterns", "holdout", 0, 7),
    ]
    everything = round_1.headline_rate("cases", "all")
    assert everything.rate == 0.0 and everything.low == 0.0
    assert everything.high == pytest.approx(0.1611, abs=1e-4)  # Wilson, 0 of 20
    assert all(row.rate.n == 0 and row.rate.rate is None for row in round_1.model_arm)


def test_round_1_tiers_ceiling_controls_and_provenance(round_1: RoundFigures) -> None:
    total = round_1.tiers["total"]
    assert (total["unsupported"], total["partial"], total["patched_unverified"], total["verified_success"]) == (
        14,
        5,
        1,
        0,
    )
    assert sum(round_1.tiers["dev"].values()) == 13 and sum(round_1.tiers["holdout"].values()) == 7
    assert sum(round_1.tiers["model_arm"].values()) == 0
    assert round_1.ceiling.reachable == 0 and round_1.ceiling.graded == 20
    assert round_1.ceiling.in_split("dev") == (0, 13) and round_1.ceiling.in_split("holdout") == (0, 7)
    assert round_1.ceiling.tally == (
        ("no test command", 16),
        ("a row the key marks `manual`", 3),
        ("a row the pack flags rather than edits", 1),
    )
    assert [row.held for row in round_1.control_rows] == [True, True, True]
    assert all(row.pins_counted for row in round_1.control_rows)  # from results/errors/round-1.json
    assert (round_1.controls_held.k, round_1.controls_held.n) == (3, 3)
    assert round_1.errors == () and dict(round_1.errors_by_class) == {"infrastructure": 0, "tool": 0}
    provenance = round_1.provenance
    assert provenance is not None
    assert provenance.obelize_versions == ("0.1.0",) and provenance.schema_versions == (2,)
    assert provenance.sandboxes == ("none",)  # round 1's harness had no sandbox
    assert not round_1.repeatability.repeated and round_1.run


def test_round_1_summary_json_is_the_figures(round_1: RoundFigures) -> None:
    summary = figures_summary(round_1)
    assert summary["counts"]["unique_patterns"] == round_1.counts.unique_patterns
    assert summary["ceiling"]["tally"] == dict(round_1.ceiling.tally)
    assert summary["provenance"]["sandboxes"] == ["none"]
    assert "repeatability" not in summary


# -- hand-built rounds --------------------------------------------------------------------------


def test_rates_carry_n_and_wilson_bounds() -> None:
    cases, records = five_of_twenty()
    f = round_figures(RoundData(round=3, cases=cases, records=records))
    rate = f.headline_rate("cases", "all")
    assert (rate.k, rate.n) == (5, 20)
    assert rate.low == pytest.approx(0.1119, abs=1e-4) and rate.high == pytest.approx(0.4687, abs=1e-4)
    assert (f.headline_rate("cases", "dev").k, f.headline_rate("cases", "dev").n) == (3, 12)
    assert (f.headline_rate("cases", "holdout").k, f.headline_rate("cases", "holdout").n) == (2, 8)


def test_a_pattern_wins_when_any_member_does_and_counts_on_both_sides() -> None:
    cases = [make_case(f"c{i}") for i in range(5)] + [make_case("h", "holdout")]
    records = {c.id: make_record(c.id, "partial", c.split) for c in cases}
    records["c3"] = make_record("c3", "verified_success")
    f = round_figures(RoundData(round=1, cases=cases, records=records))
    assert f.counts.unique_patterns == 1
    assert (f.headline_rate("patterns", "all").k, f.headline_rate("patterns", "all").n) == (1, 1)
    assert (f.headline_rate("patterns", "dev").k, f.headline_rate("patterns", "dev").n) == (1, 1)
    assert (f.headline_rate("patterns", "holdout").k, f.headline_rate("patterns", "holdout").n) == (0, 1)
    assert (f.headline_rate("cases", "all").k, f.headline_rate("cases", "all").n) == (1, 6)


def test_the_model_arm_is_apart_from_the_headline() -> None:
    cases = [make_case("rules"), make_case("model", pattern=("google.generativeai.x",))]
    records = {"rules": make_record("rules", "partial"), "model": make_record("model", llm_tokens_in=1200)}
    f = round_figures(RoundData(round=1, cases=cases, records=records))
    assert [e.id for e in f.headline_cases] == ["rules"] and [e.id for e in f.model_arm_cases] == ["model"]
    assert (f.headline_rate("cases", "all").k, f.headline_rate("cases", "all").n) == (0, 1)
    assert (f.model_arm[0].rate.k, f.model_arm[0].rate.n) == (1, 1)
    assert f.tiers["total"]["verified_success"] == 0 and f.tiers["model_arm"]["verified_success"] == 1


def test_split_and_control_come_from_the_record_and_unrun_cases_from_the_case_file() -> None:
    cases = [make_case("moved", "dev"), make_case("flagged", "dev"), make_case("unrun", "holdout")]
    records = {
        "moved": make_record("moved", split="holdout"),
        "flagged": make_record("flagged", "unsupported", control=True, detected=0, patch_applied=False),
    }
    f = round_figures(RoundData(round=1, cases=cases, records=records))
    assert {e.id: e.split for e in f.graded} == {"moved": "holdout", "unrun": "holdout"}
    assert [e.id for e in f.controls] == ["flagged"]
    assert dict(f.without_record) == {"dev": 0, "holdout": 1, "total": 1}
    assert f.counts.graded_without_record == 1 and f.counts.graded_with_record == 1


def test_ceiling_rows_respect_the_rounds_retirements() -> None:
    cases = [
        make_case("a"),
        make_case("b", test_cmd=None),
        make_case("later", "holdout", retired=Retired(reason="gone", round=5)),
        make_case("gone", "holdout", retired=Retired(reason="gone", round=1)),
    ]
    f = round_figures(RoundData(round=2, cases=cases, records={}))
    caps = {row.case: row.cap for row in f.ceiling.cases}
    assert caps == {"a": None, "b": "no test command", "later": None, "gone": "the case is retired"}
    assert f.ceiling.in_split("dev") == (1, 2) and f.ceiling.in_split("holdout") == (1, 2)
    assert f.ceiling.tally == (("no test command", 1), ("the case is retired", 1))
    assert not f.run and f.provenance is None


def test_a_record_without_a_case_file_row_is_its_own_pattern_and_capped() -> None:
    f = round_figures(RoundData(round=1, cases=[make_case("a")], records={"stray": make_record("stray")}))
    assert [row.cap for row in f.ceiling.cases if row.case == "stray"] == [CAP_NO_KEY]
    assert f.counts.unique_patterns == 2


def test_control_rows_say_why_a_control_cannot_show_it_held() -> None:
    cases = [make_case(name, control=True) for name in ("held", "pin", "old", "boom", "unrun")]

    def control(
        name: str, tier: str = "unsupported", error: ErrorInfo | None = None, pins: int | None = None
    ) -> Record:
        return make_record(
            name,
            tier,
            control=True,
            error=error,
            detected=0,
            false_positive_edit=0,
            patch_applied=False,
            manifest_reported=pins,
        )

    records = {
        "held": control("held", pins=0),
        "pin": control("pin", pins=1),
        "old": control("old"),
        "boom": control("boom", "error", ErrorInfo(step="fix", reason="obelize_failed", detail="x")),
    }
    f = round_figures(RoundData(round=1, cases=cases, records=records))
    rows = {row.case: row for row in f.control_rows}
    assert rows["held"].held is True and rows["pin"].held is False
    assert rows["old"].held is None and not rows["old"].pins_counted
    assert rows["boom"].held is None and rows["boom"].errored
    assert rows["unrun"].held is None and not rows["unrun"].has_record and rows["unrun"].tier is None
    assert (f.controls_held.k, f.controls_held.n) == (1, 4)


def test_errors_by_class_count_controls_too() -> None:
    cases = [make_case("infra"), make_case("tool"), make_case("ctl", control=True)]
    records = {
        "infra": make_record("infra", "error", error=ErrorInfo(step="install", reason="install_failed", detail="1")),
        "tool": make_record("tool", "error", error=ErrorInfo(step="fix", reason="obelize_failed", detail="2")),
        "ctl": make_record(
            "ctl", "error", control=True, error=ErrorInfo(step="fetch", reason="fetch_failed", detail="")
        ),
    }
    f = round_figures(RoundData(round=1, cases=cases, records=records))
    assert [(row.case, row.error_class) for row in f.errors] == [
        ("ctl", "infrastructure"),
        ("infra", "infrastructure"),
        ("tool", "tool"),
    ]
    assert dict(f.errors_by_class) == {"infrastructure": 2, "tool": 1}
    assert f.headline_rate("cases", "all").n == 2  # errored cases stay in n


def test_provenance_lists_every_sandbox_and_interpreter() -> None:
    plain = make_record("a")
    boxed = make_record("b").model_copy(
        update={
            "provenance": Provenance(
                obelize_version="0.8.1",
                pack_sha256="cd" * 32,
                python_used="cpython-3.13.0-linux-x86_64-gnu",
                run_at="2026-10-03T01:00:00Z",
                sandbox="bwrap 0.8.0 (suites offline)",
            )
        }
    )
    f = round_figures(RoundData(round=1, cases=[make_case("a"), make_case("b")], records={"a": plain, "b": boxed}))
    p = f.provenance
    assert p is not None
    assert p.sandboxes == ("bwrap 0.8.0 (suites offline)", "none")
    assert p.interpreters == ("cpython-3.12.1-linux-x86_64-gnu", "cpython-3.13.0-linux-x86_64-gnu")
    assert (p.run_at_first, p.run_at_last) == ("2026-10-02T09:00:00Z", "2026-10-03T01:00:00Z")
    assert p.obelize_versions == ("0.8.0", "0.8.1") and p.records == 2


def test_suites_list_only_cases_whose_suite_ran() -> None:
    ran = make_record("ran", tests_baseline=SuiteResult(status="pass", passed=3, failed=0, skipped=1))
    f = round_figures(RoundData(round=1, cases=[make_case("ran"), make_case("idle")], records={"ran": ran}))
    assert [(row.case, row.baseline.passed, row.after.status) for row in f.suites] == [("ran", 3, "not_run")]


def test_repeatability_and_publication_are_figures() -> None:
    attempts = [runs.facts("a", "verified_success", attempt=1), runs.facts("a", "partial", attempt=2)]
    note = {"run": "r-2", "infrastructure_errors": 0, "with_infrastructure_errors": False}
    data = RoundData(
        round=2, cases=[make_case("a")], records={"a": make_record("a")}, attempts=attempts, publication=note
    )
    f = round_figures(data)
    assert f.repeatability.repeated and [c.case for c in f.repeatability.flaky] == ["a"]
    assert f.publication == note
    assert round_summary(data)["repeatability"]["flaky"] == ["a"]


def test_figures_are_frozen() -> None:
    f = round_figures(RoundData(round=1, cases=[make_case("a")], records={}))
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.round = 2  # type: ignore[misc]  # the assignment is the point: it must be refused


# -- the extension points ------------------------------------------------------------------------


def test_a_new_section_plugs_into_the_block() -> None:
    data = RoundData(round=1, cases=[make_case("a")], records={"a": make_record("a")})
    f = round_figures(data)
    base = render_round_block(data)
    assert render_sections(f) == base
    assert render_sections(f, [*BLOCK_SECTIONS, lambda figures: []]) == base  # left out: no trace

    def extra(figures: RoundFigures) -> list[str]:
        return ["#### Extra", "", f"{figures.counts.graded} graded", ""]

    assert render_sections(f, [*BLOCK_SECTIONS, extra]) == base + "\n#### Extra\n\n1 graded\n"


def test_a_new_part_plugs_into_summary_json(monkeypatch: pytest.MonkeyPatch) -> None:
    data = RoundData(round=1, cases=[make_case("a")], records={"a": make_record("a")})
    parts = [*SUMMARY_PARTS, ("extra", lambda f: f.counts.graded), ("absent", lambda f: OMIT)]
    monkeypatch.setattr("pytest_obelize_bench.report.summary_json.SUMMARY_PARTS", parts)
    summary = round_summary(data)
    assert summary["extra"] == 1 and "absent" not in summary
