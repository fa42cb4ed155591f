"""promotion/gate_chart.py: each case's rate on both sides, with the verdict, from a real decision."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pytest_obelize_bench.promotion.decision_list import render_decisions
from pytest_obelize_bench.promotion.gate import run_gate
from pytest_obelize_bench.promotion.gate_chart import decision_chart, decision_charts
from tests.helpers import promotion_runs as pr
from tests.helpers.runs import split_of


def decide(tmp_path: Path, incumbent: dict[int, str], candidate: dict[int, str]) -> tuple[str, dict[str, Any]]:
    project = pr.make_project(tmp_path)
    pr.write_run(project, "old", incumbent)
    pr.write_run(project, "new", candidate, version="0.9.0")
    run_gate(
        project / "cases" / "promotion.yaml",
        "round-2:old",
        ["round-2:new"],
        results_dir=project / "results",
        cases_path=project / "cases" / "cases.yaml",
        out=io.StringIO(),
        now=datetime(2026, 12, 2, 12, 0, tzinfo=UTC),
    )
    (path,) = sorted((project / "results" / "decisions").glob("*.json"))
    return path.name, json.loads(path.read_text(encoding="utf-8"))


def test_a_rejected_decision_charts_every_case_on_both_sides_with_its_rule(tmp_path: Path) -> None:
    before = dict.fromkeys(range(10), "v")
    name, document = decide(tmp_path, before, {**before, 1: "vp", **dict.fromkeys(range(10, 19), "v")})
    chart = decision_chart(name, document)
    assert chart is not None
    assert chart.file_name == "decision-2026-12-02-new.svg"
    assert chart.title.startswith("Decision 2026-12-02-new: reject (") and "case_resolution_regression" in chart.title
    assert len(chart.groups) == 20 and len(chart.series) == 2  # the control is not drawn
    case = pr.case_id(1)
    dropped = {p.series.split(" ")[0]: (p.rate.k, p.rate.n) for p in chart.points if p.group.startswith(case)}
    assert dropped == {"incumbent": (2, 2), "candidate": (1, 2)}
    assert f"({split_of(1)})" in next(g for g in chart.groups if g.startswith(case))
    block = render_decisions([(name, document)]) or ""
    assert "### Figures" in block and "](figures/decision-2026-12-02-new.svg)" in block


def test_a_decision_without_per_case_rates_has_no_chart() -> None:
    old = {"decision": "promote", "case_changes": [{"case": "a", "incumbent": "partial", "candidate": "partial"}]}
    assert decision_chart("d.json", old) is None
    assert decision_charts([("d.json", old), ("e.json", {"decision": "reject"})]) == []
    assert "### Figures" not in (render_decisions([("d.json", old)]) or "")


def test_a_file_name_cannot_leave_the_figures_folder() -> None:
    document = {
        "decision": "promote",
        "case_changes": [
            {
                "case": "a",
                "split": "dev",
                "incumbent_verified": {"k": 0, "n": 2},
                "candidate_verified": {"k": 2, "n": 2},
            }
        ],
    }
    chart = decision_chart("../../x y.json", document)
    assert chart is not None and chart.file_name == "decision-.._.._x_y.svg" and "/" not in chart.file_name


def test_summarize_draws_and_checks_a_decisions_figure(tmp_path: Path) -> None:
    from pytest_obelize_bench.report.summarize import summarize

    before = dict.fromkeys(range(10), "v")
    name, _ = decide(tmp_path, before, dict.fromkeys(range(20), "v"))
    results, cases = tmp_path / "results", Path(__file__).resolve().parents[2] / "cases" / "cases.yaml"
    out = io.StringIO()
    assert summarize(results, cases, check=False, out=out) == 0, out.getvalue()
    figure = results / "figures" / f"decision-{name.removesuffix('.json')}.svg"
    assert figure.is_file()
    assert f"](figures/{figure.name})" in (results / "BENCHMARK_RESULTS.md").read_text(encoding="utf-8")
    assert summarize(results, cases, check=True, out=io.StringIO()) == 0
    figure.write_bytes(figure.read_bytes().replace(b"promote", b"prom0te", 1))
    out = io.StringIO()
    assert summarize(results, cases, check=True, out=out) == 1
    assert f"the figure {figure} differs from a fresh render" in out.getvalue()
