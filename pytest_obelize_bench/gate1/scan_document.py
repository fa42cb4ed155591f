"""The Gate 1 block of the results document, rendered from the scan records and the keys alone."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pytest_obelize_bench._util.charts import RateChart, figures_section
from pytest_obelize_bench._util.markdown import NULL, table
from pytest_obelize_bench._util.stats import Rate, rate_of
from pytest_obelize_bench.gate1.labels import AnswerKey, load_keys
from pytest_obelize_bench.gate1.matching import KeyMatch, Row, match_key, pooled
from pytest_obelize_bench.gate1.recall_chart import gate1_chart
from pytest_obelize_bench.gate1.recall_figures import CLASSIFIED_SINCE_PROTOCOL, sample_figures
from pytest_obelize_bench.measure.frame import Frame, load_frame
from pytest_obelize_bench.measure.scanrecord import ScanDocument, load_scan_document

SAMPLE_NAME = "sample.yaml"
LABELS_NAME = "labels"


def load_gate1_inputs(scan: Path, gate1_dir: Path) -> tuple[ScanDocument, Frame, dict[str, AnswerKey], str]:
    """The published scan document, the frame, its keys, and how the block names the frame."""
    frame_path = Path(gate1_dir) / SAMPLE_NAME
    frame = load_frame(frame_path)
    keys = load_keys(Path(gate1_dir) / LABELS_NAME, frame)
    return load_scan_document(scan), frame, keys, f"cases/gate1/{SAMPLE_NAME}"


def key_matches(document: ScanDocument, keys: Mapping[str, AnswerKey]) -> dict[str, KeyMatch | None]:
    """Each labelled repository's match, or None when the document has no usable scan of it."""
    scanned = {repo.full_name: repo for repo in document.scanned}
    out: dict[str, KeyMatch | None] = {}
    for name in sorted(keys, key=str.lower):
        repo = scanned.get(name)
        usable = repo is not None and repo.error is None and repo.sha == keys[name].sha
        out[name] = match_key(keys[name], repo.findings) if usable and repo is not None else None
    return out


def _rate(rate: Rate) -> str:
    return rate.format()


def _row_text(row: Row) -> str:
    path, line, kind, symbol = row
    return f"`{path}:{line}` {kind} `{symbol}`" if symbol else f"`{path}:{line}` {kind}"


def render_gate1_block(document: ScanDocument, frame: Frame, keys: Mapping[str, AnswerKey], frame_label: str) -> str:
    matches = key_matches(document, keys)
    measured = [m for m in matches.values() if m is not None]
    precision, recall = pooled(measured)
    figures = sample_figures(document.scanned)
    labelled_rows = sum(m.labelled for m in measured)
    lines = [
        "### Gate 1: scan precision and recall",
        "",
        (
            f"From `results/gate1/scan.json` ({len(document.scanned)} scan records) and the {len(keys)} answer keys in "
            "`cases/gate1/labels/`, written before the scans were read. A finding matches a key row when path, line, "
            "kind and fully qualified symbol are equal, counted as multisets over the actionable kinds (import, call, "
            "method_call, attribute) only; the right line with the wrong symbol is one false positive and one miss. "
            "Precision is `--` when a repository has no finding, never 100%."
        ),
        "",
    ]
    bands = ", ".join(f"`{band.band}` {band.population}" for band in frame.bands) or NULL
    lines += table(
        ["Figure", "Value"],
        ["---", "---"],
        [
            ("Frame", f"`{frame_label}`: code search for `{frame.term}`, queried {frame.queried_at or NULL}"),
            ("Population by band", f"{bands} (total {frame.population if frame.population is not None else NULL})"),
            ("Drawn / rejected", f"{len(frame.repositories)} / {len(frame.rejected)}"),
            (
                "Repositories scanned",
                f"{figures.scanned}" + (f" ({figures.errored} could not be scanned)" if figures.errored else ""),
            ),
            ("Labelled repositories", f"{len(measured)} of {len(keys)} keys have a scan of the pinned commit"),
            ("obelize", document.obelize_version),
            ("Pack", f"`{document.pack}`"),
            ("Pack sha256", f"`{document.pack_sha256}`" if document.pack_sha256 else None),
            (
                "Interpreter",
                " ".join(part for part in (document.python, document.machine, document.os) if part) or None,
            ),
        ],
    )
    lines += ["", "#### Precision and recall", ""]
    rows: list[tuple[object, ...]] = [
        (
            "**All labelled**",
            labelled_rows,
            precision.n,
            precision.k,
            precision.n - precision.k,
            recall.n - recall.k,
            _rate(precision),
            _rate(recall),
        ),
    ]
    for name, m in matches.items():
        if m is None:
            rows.append((f"`{name}`", len(keys[name].call_sites), "not scanned", NULL, NULL, NULL, NULL, NULL))
            continue
        rows.append(
            (
                f"`{name}`",
                m.labelled,
                m.findings,
                m.true_positive,
                m.false_positive,
                m.missed,
                _rate(m.precision),
                _rate(m.recall),
            )
        )
    lines += table(
        [
            "Repository",
            "Labelled rows",
            "Findings",
            "TP",
            "FP",
            "Missed",
            "Precision [95%]",
            "Recall [95%]",
        ],
        ["---", "---:", "---:", "---:", "---:", "---:", "---", "---"],
        rows,
    )
    lines += [
        "",
        f"n: precision over {precision.counted('actionable findings')}, recall over "
        f"{recall.counted('labelled rows')}. A row of one repository is not independent of "
        "the others there (one bail withholds a whole file), so the pooled intervals are by repository: Wilson's "
        "at the effective n of the ratio estimator (Kish design effect); each repository's own row is Wilson's "
        "over its rows.",
    ]
    wrong = [(name, "missed", row) for name, m in matches.items() if m for row in m.actionable.missing]
    wrong += [(name, "false positive", row) for name, m in matches.items() if m for row in m.actionable.unexpected]
    lines += ["", "#### Misses and false positives", ""]
    if wrong:
        lines += table(
            ["Repository", "What", "Row"],
            ["---", "---", "---"],
            [(f"`{name}`", what, _row_text(row)) for name, what, row in wrong],
        )
    else:
        lines.append("None.")
    lines += [
        "",
        "#### Other kinds and forbidden positions",
        "",
        (
            "Rows of the other kinds (text_mention, manifest, dynamic, star_import, parse_error) against each key's "
            "`expected_other`, and findings of any kind at a `must_not_report` position."
        ),
        "",
    ]
    lines += table(
        [
            "Repository",
            "Expected, reported",
            "Expected, not reported",
            "Reported, not expected",
            "Forbidden positions reported",
        ],
        ["---", "---:", "---:", "---:", "---:"],
        [
            (f"`{name}`", len(m.other.matched), len(m.other.missing), len(m.other.unexpected), len(m.forbidden))
            for name, m in matches.items()
            if m is not None
        ],
    )
    extra = [(name, row) for name, m in matches.items() if m for row in (*m.other.unexpected, *m.forbidden)]
    if extra:
        lines += [
            "",
            "Reported beyond the keys: " + "; ".join(f"`{name}` {_row_text(row)}" for name, row in extra) + ".",
        ]
    declared = ", ".join(f"`{text}` {n}" for text, n in figures.declared.items()) or "none"
    declaring = rate_of(sum(figures.declared.values()), figures.scanned - figures.not_asked)
    unresolved = ", ".join(f"`{reason}` {n}" for reason, n in figures.unresolved_reasons.items()) or "none"
    lines += ["", "#### Sample-wide figures", "", f"Over the {figures.scanned} repositories scanned.", ""]
    lines += table(
        ["Figure", "n", "Count", "Share [95%]", "Detail"],
        ["---", "---:", "---:", "---", "---"],
        [
            (
                "Repositories with a zero-bail file",
                figures.zero_bail.n,
                figures.zero_bail.k,
                _rate(figures.zero_bail),
                f"{figures.zero_bail_files} zero-bail files",
            ),
            (
                "Unresolved share of usages",
                figures.unresolved_share.n,
                figures.unresolved_share.k,
                _rate(figures.unresolved_share),
                f"{figures.unresolved_share.counted('usages')}, interval by repository; by reason: {unresolved}; "
                f"{figures.not_a_usage} findings are not a usage",
            ),
            (
                "Repositories declaring a Python",
                declaring.n,
                declaring.k,
                _rate(declaring),
                f"{declared}; {figures.declares_nothing} declare nothing; {figures.blocked} blocked by it"
                + (f"; {figures.not_asked} not asked" if figures.not_asked else ""),
            ),
        ],
    )
    since = ", ".join(f"`{reason}` as {where}" for reason, where in sorted(CLASSIFIED_SINCE_PROTOCOL.items()))
    lines += ["", f"Reasons obelize added after the protocol was written, classified here: {since}."]
    if figures.unknown_reasons:
        unknown = ", ".join(f"`{reason}` {n}" for reason, n in figures.unknown_reasons.items())
        lines.append(f"confidence_reason values in no set (left out of the share): {unknown}.")
    lines += figures_section([gate1_chart(matches, precision, recall)])
    return "\n".join(lines) + "\n"


def gate1_charts(
    document: ScanDocument, frame: Frame, keys: Mapping[str, AnswerKey], frame_label: str
) -> list[RateChart]:
    """The block's charts, from the same inputs as ``render_gate1_block`` (the frame is not drawn)."""
    matches = key_matches(document, keys)
    precision, recall = pooled([m for m in matches.values() if m is not None])
    return [gate1_chart(matches, precision, recall)]


__all__ = ["gate1_charts", "key_matches", "load_gate1_inputs", "render_gate1_block"]
