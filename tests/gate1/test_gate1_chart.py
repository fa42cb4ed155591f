"""gate1/recall_chart.py: Gate 1's chart is the table's precision and recall, pooled first."""

from __future__ import annotations

from pytest_obelize_bench.gate1.matching import pooled
from pytest_obelize_bench.gate1.recall_chart import POOLED, gate1_chart
from pytest_obelize_bench.gate1.scan_document import gate1_charts, key_matches, load_gate1_inputs
from tests.helpers.project import PROJECT

SCAN_DATA = PROJECT / "tests" / "data" / "gate1" / "scan.json"


def test_each_scanned_key_gets_its_precision_and_recall_with_n() -> None:
    document, frame, keys, label = load_gate1_inputs(SCAN_DATA, PROJECT / "cases" / "gate1")
    (chart,) = gate1_charts(document, frame, keys, label)
    matches = key_matches(document, keys)
    assert chart.groups[0] == POOLED
    assert chart.groups[1:] == tuple(name for name, m in matches.items() if m is not None)
    for name, match in matches.items():
        if match is not None:
            recall = next(p.rate for p in chart.points if (p.group, p.series) == (name, "recall"))
            assert (recall.k, recall.n) == (match.true_positive, match.labelled)
    precision, recall = pooled([m for m in matches.values() if m is not None])
    assert f"{POOLED}, precision: {precision.k} of {precision.n}" in chart.alt


def test_an_unscanned_key_has_no_mark() -> None:
    document, _, keys, _ = load_gate1_inputs(SCAN_DATA, PROJECT / "cases" / "gate1")
    matches = dict(key_matches(document, keys))
    gone = next(iter(matches))
    matches[gone] = None
    chart = gate1_chart(matches, *pooled([m for m in matches.values() if m is not None]))
    assert gone not in chart.groups
