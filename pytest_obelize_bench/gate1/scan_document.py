"""The Gate 1 block of the results document, rendered from the scan records and the keys alone."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from pytest_obelize_bench._util.charts import RateChart, figures_section
from pytest_obelize_bench._util.markdown import NULL, plain, table
from pytest_obelize_bench._util.stats import Rate, rate_of
from pytest_obelize_bench.casefile.cases import load_case_file
from pytest_obelize_bench.gate1.case_keys import frame_of_cases
from pytest_obelize_bench.gate1.labels import AnswerKey, load_keys
from pytest_obelize_bench.gate1.matching import KeyMatch, Row, match_key, pooled
from pytest_obelize_bench.gate1.recall_chart import gate1_chart
from pytest_obelize_bench.gate1.recall_figures import CLASSIFIED_SINCE_PROTOCOL, sample_figures
from pytest_obelize_bench.measure.frame import Frame, FrameError, load_frame
from pytest_obelize_bench.measure.scanrecord import ScanDocument, load_scan_document

SAMPLE_NAME = "sample.yaml"
LABELS_NAME = "labels"


def load_gate1_inputs(scan: Path, gate1_dir: Path) -> tuple[ScanDocument, Frame, dict[str, AnswerKey], str]:
    """The published scan document, the frame, its keys, and how the block names the frame."""
    frame_path = Path(gate1_dir) / SAMPLE_NAME
    frame = load_frame(frame_path)
    keys = load_keys(Path(gate1_dir) / LABELS_NAME, frame)
    return load_scan_document(scan), frame, keys, f"cases/gate1/{SAMPLE_NAME}"


def gate1_name(frame_label: str) -> str | None:
    """A Gate 1 measurement's name: None for a frame named like the sample's (published as ``gate1``), else
    the stem of the frame or case file it scanned (published beside it, ``gate1/<name>/``)."""
    path = PurePosixPath(frame_label)
    return None if path.name == SAMPLE_NAME else path.stem


def gate1_scan_path(results: Path, name: str | None) -> Path:
    """Where a Gate 1 measurement's scan document is published."""
    folder = Path(results) / "gate1"
    return (folder if name is None else folder / name) / "scan.json"


def gate1_block_name(name: str | None) -> str:
    return "gate1" if name is None else f"gate1-{name}"


def named_gate1_scans(results: Path) -> list[Path]:
    """The scan documents of every Gate 1 measured beside the sample's, by name."""
    folder = Path(results) / "gate1"
    return sorted(path / "scan.json" for path in folder.iterdir() if path.is_dir()) if folder.is_dir() else []


def load_named_gate1_inputs(scan: Path, project_root: Path) -> tuple[ScanDocument, Frame, dict[str, AnswerKey], str]:
    """A named measurement's document, and the frame and keys of what it names as its source (a frame with
    its ``labels/``, or a case file's cases), less the repositories it named out of reach."""
    document = load_scan_document(scan)
    if document.source is None:
        raise FrameError([f"{scan}: source: a Gate 1 published beside the sample's names what it scanned"])
    source = Path(project_root) / document.source
    if document.source_kind == "cases":
        frame, keys = frame_of_cases(load_case_file(source), document.pack)
    else:
        frame = load_frame(source)
        keys = load_keys(source.parent / LABELS_NAME, frame)
    away = set(document.unreachable)
    frame = frame.model_copy(update={"repositories": [r for r in frame.repositories if r.full_name not in away]})
    return document, frame, {name: key for name, key in keys.items() if name not in away}, document.source


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


def _keys_place(document: ScanDocument, frame_label: str) -> str:
    if document.source_kind == "cases":
        return f"of the cases of `{frame_label}` (each case's ground truth)"
    return f"in `{PurePosixPath(frame_label).parent / LABELS_NAME}/`"


def _reach_lines(document: ScanDocument, keys: Mapping[str, AnswerKey]) -> list[str]:
    if not document.unreachable:
        return []
    lines = [
        f"**Measured here: {len(document.scanned)} of {len(document.scanned) + len(document.unreachable)} "
        f"repositories.** The session named {len(document.unreachable)} out of reach when it started "
        "(`--bench-unreachable`); they were not scanned, and no figure below counts them:",
        "",
    ]
    lines += [f"* `{name}`: {plain(reason)}" for name, reason in sorted(document.unreachable.items())]
    return [*lines, ""]


def _baseline_lines(
    matches: Mapping[str, KeyMatch | None], baseline: tuple[ScanDocument, Mapping[str, AnswerKey]] | None
) -> list[str]:
    """Each repository this measurement and the sample's published Gate 1 both matched, side by side."""
    if baseline is None:
        return []
    then = key_matches(*baseline)
    shared = [name for name, match in matches.items() if match is not None and then.get(name) is not None]
    if not shared:
        return []
    version = baseline[0].obelize_version or NULL
    lines = [
        "",
        f"#### Against the sample's published Gate 1 (obelize {version})",
        "",
        "The same repositories at the same pins and keys, matched by the published `results/gate1/scan.json`.",
        "",
    ]
    rows = []
    for name in shared:
        now, before = matches[name], then[name]
        assert now is not None and before is not None
        changed = [
            f"{what} {getattr(before, what.replace(' ', '_'))} to {getattr(now, what.replace(' ', '_'))}"
            for what in ("findings", "true positive", "false positive", "missed")
            if getattr(before, what.replace(" ", "_")) != getattr(now, what.replace(" ", "_"))
        ]
        rows.append(
            (
                f"`{name}`",
                f"{before.true_positive} / {before.false_positive} / {before.missed}",
                f"{now.true_positive} / {now.false_positive} / {now.missed}",
                "; ".join(changed) or "no change",
            )
        )
    return lines + table(
        ["Repository", f"TP / FP / missed, {version}", "TP / FP / missed, now", "Changed"], ["---"] * 4, rows
    )


def render_gate1_block(
    document: ScanDocument,
    frame: Frame,
    keys: Mapping[str, AnswerKey],
    frame_label: str,
    baseline: tuple[ScanDocument, Mapping[str, AnswerKey]] | None = None,
) -> str:
    """The block of the sample's Gate 1, or of one measured beside it (the document names its source), which
    then names what was out of reach and, given the sample's published scan, what changed per repository."""
    matches = key_matches(document, keys)
    measured = [m for m in matches.values() if m is not None]
    precision, recall = pooled(measured)
    figures = sample_figures(document.scanned)
    labelled_rows = sum(m.labelled for m in measured)
    beside = document.name
    where = gate1_scan_path(Path("results"), beside).as_posix()
    lines = [
        "### Gate 1: scan precision and recall" + ("" if beside is None else f", over `{frame_label}`"),
        "",
        (
            f"From `{where}` ({len(document.scanned)} scan records) and the {len(keys)} answer keys "
            f"{_keys_place(document, frame_label)}, written before the scans were read. A finding matches a key row "
            "when path, line, kind and fully qualified symbol are equal, counted as multisets over the actionable "
            "kinds (import, call, method_call, attribute) only; the right line with the wrong symbol is one false "
            "positive and one miss. Precision is `--` when a repository has no finding, never 100%."
        ),
        "",
        *_reach_lines(document, keys),
    ]
    bands = ", ".join(f"`{band.band}` {band.population}" for band in frame.bands) or NULL
    lines += table(
        ["Figure", "Value"],
        ["---", "---"],
        [
            (
                ("Frame", f"`{frame_label}`: code search for `{frame.term}`, queried {frame.queried_at or NULL}")
                if document.source_kind != "cases"
                else ("Frame", f"the cases of `{frame_label}` (controls aside), each at its pin")
            ),
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
    lines += _baseline_lines(matches, baseline)
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
    lines += figures_section([gate1_chart(matches, precision, recall, beside)])
    return "\n".join(lines) + "\n"


def gate1_charts(
    document: ScanDocument, frame: Frame, keys: Mapping[str, AnswerKey], frame_label: str
) -> list[RateChart]:
    """The block's charts, from the same inputs as ``render_gate1_block`` (the frame is not drawn)."""
    matches = key_matches(document, keys)
    precision, recall = pooled([m for m in matches.values() if m is not None])
    return [gate1_chart(matches, precision, recall, document.name)]


__all__ = [
    "gate1_block_name",
    "gate1_charts",
    "gate1_name",
    "gate1_scan_path",
    "key_matches",
    "load_gate1_inputs",
    "load_named_gate1_inputs",
    "named_gate1_scans",
    "render_gate1_block",
]
