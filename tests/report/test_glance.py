"""The answer at a glance: drawn from the published summaries and measurements, nothing else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_obelize_bench._util.stats import rate_of
from pytest_obelize_bench.records.results_document import enclose, place_first
from pytest_obelize_bench.report.glance import GateFigure, GlanceInputs, PackFigure, glance_chart, render_glance
from pytest_obelize_bench.report.glance_sources import glance_inputs


def _summary(n_cases: int, won: int, *, published: bool = True, **extra: Any) -> dict[str, Any]:
    return {
        "status": "run",
        "publication": {"run": "r"} if published else None,
        "headline": [{"scope": "cases", "split": "all", "k": won, "n": n_cases}],
        "provenance": {"obelize_versions": ["0.8.0"]},
        "tiers": {"total": {"unsupported": n_cases - won, "verified_success": won}},
        **extra,
    }


ANALYSED: dict[str, Any] = {
    "ceiling": {"cases": [{"case": "a", "split": "dev"}, {"case": "b", "split": "holdout"}]},
    "error_analysis": {
        "cases": [{"case": "a", "migrated": 3, "key_rows": 4}, {"case": "b", "migrated": 0, "key_rows": 6}],
        "causes": [
            {"cause": "small", "rows": 1, "lever": 1, "disposition": "limitation", "recorded": "ADR-1"},
            {"cause": "big", "rows": 5, "lever": 7, "disposition": "rule_change", "recorded": "COVERAGE 2"},
            {"cause": "mid", "rows": 2, "lever": 4, "disposition": "scan_change", "recorded": "COVERAGE 3"},
            {"cause": "tiny", "rows": 1, "lever": 0, "disposition": "limitation", "recorded": "ADR-2"},
        ],
    },
    "publication": {"run": "r", "unreachable": {"a": "no snapshot", "b": "no snapshot", "c": "pin absent"}},
}


def test_each_published_round_s_figures_carry_n_split_and_interval_and_unpublished_ones_none() -> None:
    text = render_glance(GlanceInputs(rounds={2: _summary(10, 1, **ANALYSED), 3: _summary(55, 0, published=False)}))
    assert "| Round 2: `verified_success` (obelize 0.8.0) | all | 10 cases | 10.0% [1.8%, 40.4%] |" in text
    assert "| Round 2: key rows migrated | all | 3 of 10 rows in 2 cases |" in text
    assert "| Round 2: key rows migrated | dev | 3 of 4 rows in 1 cases |" in text
    assert "| Round 2: key rows migrated | holdout | 0 of 6 rows in 1 cases |" in text
    assert "Round 3" not in text


def test_the_largest_causes_come_by_lever_from_the_newest_analysed_round() -> None:
    text = render_glance(GlanceInputs(rounds={1: _summary(5, 0), 2: _summary(10, 1, **ANALYSED)}))
    causes = text.split("#### What stops the migration")[1].split("####")[0]
    assert causes.index("`big`") < causes.index("`mid`") < causes.index("`small`") and "`tiny`" not in causes
    assert "Round 2, by lever" in causes


def test_what_was_not_measured_is_counted_by_reason() -> None:
    text = render_glance(GlanceInputs(rounds={2: _summary(10, 1, **ANALYSED)}))
    assert "* Round 2: 3 rows out of reach, not run (2 no snapshot; 1 pin absent)." in text
    assert "Every row of every published round was measured" in render_glance(GlanceInputs(rounds={2: _summary(3, 0)}))


def test_measurements_decisions_and_the_figure() -> None:
    gate = GateFigure("sample", 5, rate_of(9, 10), rate_of(8, 10), "0.1.0")
    pack = PackFigure("py-pdf/pypdf2-to-pypdf", {"complete": 2, "blocked": 6}, "0.8.0")
    inputs = GlanceInputs(
        rounds={},
        gates=[gate],
        packs=[pack],
        decision=("d.json", "insufficient_evidence", "a to b"),
        history_steps={2: "0.7.0 to 0.8.0: 0 cases improved"},
    )
    text = render_glance(inputs)
    assert "| Gate 1 (sample, obelize 0.1.0): precision | all | 9 of 10 findings |" in text
    assert "| Fix dry run `py-pdf/pypdf2-to-pypdf` (obelize 0.8.0): `complete` | frame | 8 repositories | 25.0%" in text
    assert "* Latest decision (`d.json`): **insufficient_evidence**, a to b." in text
    assert "* Round 2's release history, its last step: 0.7.0 to 0.8.0" in text
    chart = glance_chart(inputs)
    assert chart is not None and [point.series for point in chart.points] == ["precision", "recall", "complete"]
    assert glance_chart(GlanceInputs(rounds={})) is None  # nothing published: no figure to draw


def test_the_glance_goes_before_the_first_block_and_is_replaced_in_place() -> None:
    document = "# Title\n\nintro\n\n" + enclose("round-1", "r1") + "\n"
    once = place_first(document, "glance", "g1\n")
    assert once.index("glance:begin") < once.index("round-1:begin") and once.startswith("# Title\n\nintro\n\n")
    twice = place_first(once, "glance", "g2\n")
    assert "g2" in twice and "g1" not in twice and twice.count("glance:begin") == 1


def test_the_newest_decision_is_named_by_its_tools_runs_and_failed_rules(tmp_path: Path) -> None:
    side = {"tool_version": "0.7.0", "run_id": "r-old"}
    newer = {"decision": "reject", "incumbent": side, "candidate": {"tool_version": "0.8.0", "run_id": "r-new"},
             "failed_rules": ["case_runtime_regression"]}  # fmt: skip
    older = {"decision": "promote", "incumbent": side, "candidate": side, "failed_rules": []}
    inputs = glance_inputs(
        tmp_path / "results", tmp_path / "cases", {}, [("2026-12-08-b.json", newer), ("2026-12-07-a.json", older)]
    )
    assert inputs.decision == (
        "2026-12-08-b.json",
        "reject",
        "obelize 0.7.0 (run `r-old`) to obelize 0.8.0 (run `r-new`); failed rules: `case_runtime_regression`",
    )
