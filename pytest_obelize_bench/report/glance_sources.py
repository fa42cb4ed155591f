"""What the glance is drawn from, read from ``results/``: every published Gate 1 and dry run, the newest
decision and each round's release history. The rounds' summaries are the ones ``summarize`` has just
computed, handed in, never read twice."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_obelize_bench._util.charts import RateChart
from pytest_obelize_bench._util.safe_io import write_atomically
from pytest_obelize_bench.casefile.cases import CaseFile, CaseFileError
from pytest_obelize_bench.dryrun.outcomes import DOCUMENT_NAME, DryRunRecordError, load_dryrun_document
from pytest_obelize_bench.gate1.labels import LabelError
from pytest_obelize_bench.gate1.matching import pooled
from pytest_obelize_bench.gate1.scan_document import (
    key_matches,
    load_gate1_inputs,
    load_named_gate1_inputs,
    named_gate1_scans,
)
from pytest_obelize_bench.measure.frame import FrameError
from pytest_obelize_bench.measure.scanrecord import ScanRecordError
from pytest_obelize_bench.records.evidence import read_decision_documents
from pytest_obelize_bench.records.published import HISTORY_NAME, read_bounded_text
from pytest_obelize_bench.records.results_document import DOCUMENT_NAME as DOCUMENT_NAME_MD
from pytest_obelize_bench.records.results_document import place_first
from pytest_obelize_bench.report.chart_files import write_figures
from pytest_obelize_bench.report.glance import (
    GLANCE_BLOCK,
    GateFigure,
    GlanceInputs,
    PackFigure,
    glance_chart,
    render_glance,
)
from pytest_obelize_bench.report.measurement_blocks import MeasurementError

__all__ = ["current_glance", "glance_inputs", "refresh_glance", "rendered_glance"]


def _gates(results: Path, cases_dir: Path) -> list[GateFigure]:
    found = []
    sample = results / "gate1" / "scan.json"
    inputs = []
    if sample.is_file():
        inputs.append(("sample", load_gate1_inputs(sample, cases_dir / "gate1")))
    for named in named_gate1_scans(results):
        loaded = load_named_gate1_inputs(named, cases_dir.parent)
        inputs.append((str(loaded[0].name), loaded))
    for name, (document, _, keys, _) in inputs:
        matches = [match for match in key_matches(document, keys).values() if match is not None]
        precision, recall = pooled(matches)
        found.append(GateFigure(name, len(document.scanned), precision, recall, document.obelize_version))
    return found


def _packs(results: Path) -> list[PackFigure]:
    folder = results / "dryrun"
    found = []
    for path in sorted(folder.glob(f"*/{DOCUMENT_NAME}")) if folder.is_dir() else []:
        document = load_dryrun_document(path)
        outcomes: Counter[str] = Counter(record.outcome for record in document.records if record.outcome is not None)
        found.append(PackFigure(document.pack, dict(outcomes), document.obelize_version))
    return found


def _history_step(results: Path, n: int) -> str | None:
    path = results / f"round-{n}" / HISTORY_NAME
    if not path.is_file():
        return None
    data: dict[str, Any] = json.loads(read_bounded_text(path))
    steps = data.get("steps") or []
    if not steps:
        return None
    last = steps[-1]
    failed = ", ".join(f"`{rule}`" for rule in last.get("failed_rules") or []) or "none"
    return (
        f"{last['before']} to {last['after']}: {len(last.get('improved') or [])} cases improved, "
        f"{len(last.get('regressed') or [])} regressed; the gate: **{last['decision']}** (failed rules: {failed})."
    )


def _side(side: Any) -> str:
    """One side of a decision as a reader names it: the tool and the run."""
    if not isinstance(side, Mapping):
        return str(side)
    tool = f"obelize {side.get('tool_version')}" if side.get("tool_version") else "a source checkout"
    return f"{tool} (run `{side.get('run_id')}`)"


def glance_inputs(
    results: Path,
    cases_dir: Path,
    summaries: Mapping[int, Mapping[str, Any]],
    decisions: Sequence[tuple[str, Mapping[str, Any]]],
) -> GlanceInputs:
    """Every source of the glance; a measurement that cannot be read raises as its own block's render does."""
    results = Path(results)
    try:
        gates, packs = _gates(results, Path(cases_dir)), _packs(results)
    except (FrameError, LabelError, ScanRecordError, DryRunRecordError, CaseFileError) as exc:
        raise MeasurementError(str(exc).splitlines()[0]) from None
    decision = None
    if decisions:
        name, document = sorted(decisions, key=lambda item: item[0])[-1]
        failed = ", ".join(f"`{rule}`" for rule in document.get("failed_rules") or []) or "none"
        pair = f"{_side(document.get('incumbent'))} to {_side(document.get('candidate'))}; failed rules: {failed}"
        decision = (name, str(document.get("decision")), pair)
    steps = {n: step for n in summaries if (step := _history_step(results, n)) is not None}
    return GlanceInputs(
        rounds=summaries,
        gates=gates,
        packs=packs,
        decision=decision,
        history_steps=steps,
    )


def current_glance(results: Path, case_file: CaseFile) -> tuple[str, RateChart | None] | None:
    """The glance and its figure as ``summarize`` renders them, every round's summary computed the same way;
    None when a measurement cannot be read (its own block's check names it)."""
    # the round renderers: loaded with the publication's writers and the site's, which call this
    from pytest_obelize_bench.report.round.round_files import (
        load_round,
        round_case_files,
        round_outputs,
        rounds_on_disk,
    )

    results = Path(results)
    rounds = rounds_on_disk(results, case_file)
    files = round_case_files(results, case_file, rounds)
    summaries = {n: round_outputs(results, files[n], load_round(results, files[n], n)).summary for n in rounds}
    decisions = [(path.name, data) for path, data in read_decision_documents(results / "decisions")]
    return rendered_glance(results, Path(case_file.path).parent, summaries, decisions)


def rendered_glance(
    results: Path,
    cases_dir: Path,
    summaries: Mapping[int, Mapping[str, Any]],
    decisions: Sequence[tuple[str, Mapping[str, Any]]],
) -> tuple[str, RateChart | None] | None:
    """The glance and its figure from rounds' summaries already computed (``summarize`` has them, the
    publication computes them); None when a measurement cannot be read (its own block's check names it)."""
    try:
        inputs = glance_inputs(results, cases_dir, summaries, decisions)
    except MeasurementError:
        return None
    return render_glance(inputs), glance_chart(inputs)


def refresh_glance(results: Path, case_file: CaseFile) -> None:
    """The glance block and figure rewritten in place after a publication changed what they stand on (a
    round published): the caller holds the document's lock."""
    glance = current_glance(results, case_file)
    if glance is None:
        return
    text, chart = glance
    document = Path(results) / DOCUMENT_NAME_MD
    existing = document.read_text(encoding="utf-8") if document.exists() else ""
    write_figures(Path(results), [chart] if chart is not None else [], prune=False)
    write_atomically(document, place_first(existing, GLANCE_BLOCK, text))
