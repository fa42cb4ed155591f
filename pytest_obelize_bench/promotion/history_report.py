"""``obelize-bench history``: the history of releases read from a round's runs, written and shown.

``history --round N`` reads every run of the round (``collect_history``), writes
``results/round-N/history.json`` (one file, atomically) and prints one line per release and per
step; ``summarize`` renders the document's history block and chart from that file alone
(``history_block``, ``history_chart``), and ``summarize --check`` fails when they differ from it.
``history --round N --find CASE`` names the first release at which the case's tier or rows changed,
with the two runs that show it, and every later change: the bisection a maintainer does by hand.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from pytest_obelize_bench._util.caps import POLICY_BYTES, RECORD_BYTES
from pytest_obelize_bench._util.charts import RateChart, RatePoint, figures_section
from pytest_obelize_bench._util.documents import load_optional_json
from pytest_obelize_bench._util.first_change import ReleaseChange, change_lines
from pytest_obelize_bench._util.markdown import cell, table
from pytest_obelize_bench._util.safe_io import UntrustedFileError, read_untrusted, write_atomically
from pytest_obelize_bench._util.stats import Rate
from pytest_obelize_bench.casefile.cases import CaseFileError, load_case_file
from pytest_obelize_bench.casefile.promotion_policy import POLICY_FILE_NAME
from pytest_obelize_bench.casefile.reviews import ReviewFileError, load_reviews, reviews_path
from pytest_obelize_bench.promotion.decision import load_policy
from pytest_obelize_bench.promotion.gate import case_keys
from pytest_obelize_bench.promotion.history import (
    HISTORY_NAME,
    Candidate,
    HistoryDocument,
    build_history,
    changes_of,
    select_runs,
    state_text,
)
from pytest_obelize_bench.promotion.metrics import LADDER
from pytest_obelize_bench.records.evidence import EvidenceError, RunEvidence, read_run
from pytest_obelize_bench.records.publication_note import expected_cases
from pytest_obelize_bench.records.runref import round_case_path
from pytest_obelize_bench.records.runs import IMPORTED_KIND, REGRADED_KIND, missing_cases, runs_root

__all__ = ["collect_history", "history_block", "history_blocks", "history_chart", "load_history", "run_history"]

#: history.json holds every case of every release: a few hundred bytes per case and release.
HISTORY_BYTES = 64 * RECORD_BYTES


def _candidate(folder: Path, read: Any, expected: list[str]) -> Candidate:
    """One run folder as a candidate release, with every reason it cannot stand for one. The run
    is read as the gate reads it (a manifest of an older harness leniently)."""
    try:
        run: RunEvidence = read(folder)
    except EvidenceError as exc:
        unread = RunEvidence(label=folder.name, path=str(folder), run_id=folder.name, manifest=None, attempts=())
        # the reason is published: the run's own folder, never this machine's path to it
        said = str(exc).splitlines()[0].replace(str(folder), f"runs/{folder.name}")
        return Candidate(unread, (said,))
    manifest = run.manifest
    if manifest is None:
        return Candidate(run, ("it has no run.json",))
    reasons: list[str] = []
    if manifest.kind == IMPORTED_KIND:
        reasons.append("an imported round: its records come from another harness")
    elif manifest.kind == REGRADED_KIND:
        reasons.append(f"regraded from run {manifest.regraded_from}, which is read under the current keys itself")
    reasons += manifest.unfinished()
    if run.changed:
        reasons.append(f"changed since its session ended: {', '.join(run.changed[:5])}")
    # the rows the run named out of reach when it started are not its to record (casefile/reach.py)
    wanted = [case for case in expected if case not in manifest.unreachable]
    missing = missing_cases(wanted, {attempt.case for attempt in run.attempts})
    if missing is not None:
        reasons.append(missing)
    if len(manifest.tools_recorded) > 1:
        reasons.append(f"its records come from {len(manifest.tools_recorded)} tools")
    if run.tool_version is None:
        reasons.append("it names no tool version")
    return Candidate(run, tuple(reasons))


def collect_history(results: Path, cases_path: Path, number: int, now: datetime | None = None) -> HistoryDocument:
    """Every run of round ``number`` read and chosen (``select_runs``), then the history built.
    ``ValueError`` (one line) when the policy, the case file or the reviews cannot be read. The round is
    read with the case file it was run from (``round_case_path``), ``cases_path`` when it names none."""
    cases_path = round_case_path(results, number, Path(cases_path))
    policy_path = Path(cases_path).parent / POLICY_FILE_NAME
    try:
        policy, policy_sha = load_policy(read_untrusted(policy_path, POLICY_BYTES), str(policy_path))
    except UntrustedFileError as exc:
        raise ValueError(str(exc)) from None
    keys, rows, keys_sha = case_keys(Path(cases_path))
    reviews = load_reviews(reviews_path(Path(cases_path), number))
    expected = expected_cases(load_case_file(Path(cases_path)), number)

    def read(folder: Path) -> RunEvidence:
        return read_run(folder, folder.name, rows, keys=keys, reviews=reviews)

    root = runs_root(results, number)
    folders = sorted(p for p in root.iterdir() if p.is_dir() and p.name[0] != ".") if root.is_dir() else []
    candidates = [_candidate(folder, read, expected) for folder in folders]
    runs, left_out = select_runs(candidates)
    return build_history(
        number, runs, left_out, policy, policy_sha256=policy_sha, keys_sha256=keys_sha, now=now or datetime.now(UTC)
    )


def load_history(round_folder: Path) -> HistoryDocument | None:
    """The round's published history, None when it has none; ValueError (one line) when unreadable."""
    return load_optional_json(Path(round_folder) / HISTORY_NAME, HistoryDocument, HISTORY_BYTES, "history")


# -- the block and the chart -----------------------------------------------------------------------


def _changes(changes: list[Any]) -> str:
    return ", ".join(f"`{c.case}` ({state_text(c.before)} -> {state_text(c.after)})" for c in changes) or "none"


def history_block(history: HistoryDocument) -> str:
    """The document's history block for the round (markers are the caller's)."""
    n = history.round
    lines = [
        f"### History of obelize releases, round {n}",
        "",
        f"Written by `obelize-bench history --round {n}` from the round's runs, one per release (the newest",
        "complete run of each), every tier recomputed under the current case file and reviews. A case's",
        "tier is its worst attempt's; key rows migrated count a case's rows over its attempts, with the",
        "interval by case; `wrong` and errored attempts migrate nothing. Pins: "
        f"`exclude_newer` {cell(history.exclude_newer)}, interpreter {cell(history.interpreter_policy)}.",
        "",
    ]
    tiers = [tier for tier in reversed(LADDER)]
    header = ["Release", "Run", "Cases", *[f"`{t}`" for t in tiers], "Key rows migrated", "Verified, every attempt",
              "Median runtime"]  # fmt: skip
    rows = []
    for release in history.releases:
        migrated, verified = Rate.from_dict(release.rows_migrated), Rate.from_dict(release.verified)
        runtime = None if release.runtime_median_seconds is None else f"{release.runtime_median_seconds:.1f} s"
        rows.append([
            release.label, f"`{release.run}`", f"{release.cases} (x{release.attempts_per_case})",
            *[release.tiers.get(t, 0) for t in tiers],
            f"{migrated.counted('rows', 'cases')}, {migrated.format()}",
            f"{verified.k} of {verified.n}, {verified.format()}", runtime,
        ])  # fmt: skip
    lines += table(header, ["---", "---", "--:", *["--:"] * len(tiers), "---", "---", "--:"], rows)
    if history.steps:
        lines += [
            "",
            f"Each release against the one before; the gate's decision under the policy (metric `{history.metric}`).",
            "",
        ]
        steps = [
            [s.after, s.before, len(s.improved), len(s.regressed), f"`{s.decision}`", ", ".join(s.failed_rules) or None]
            for s in history.steps
        ]
        lines += table(["Release", "Before", "Improved", "Regressed", "Decision", "Rules that stopped it"],
                       ["---", "---", "--:", "--:", "---", "---"], steps)  # fmt: skip
        lines.append("")
        for step in history.steps:
            lines.append(f"* **{step.after}** against {step.before}: improved {_changes(step.improved)}; "
                         f"regressed {_changes(step.regressed)}.")  # fmt: skip
    if history.left_out:
        lines += ["", "Runs left out:", ""]
        lines += [f"* `{item.run}`: {cell(item.reason)}" for item in history.left_out]
    chart = history_chart(history)
    lines += figures_section([chart] if chart is not None else [], heading="#### Figure")
    return "\n".join(lines) + "\n"


def history_chart(history: HistoryDocument) -> RateChart | None:
    """Rows migrated and cases verified per release, with intervals; a release that regressed a
    case on the one before is marked ``▼k``."""
    if not history.releases:
        return None
    regressed = {step.after: len(step.regressed) for step in history.steps}
    points = []
    for release in history.releases:
        group = release.label + (f" ▼{regressed[release.label]}" if regressed.get(release.label) else "")
        points += [
            RatePoint(group, "key rows migrated", Rate.from_dict(release.rows_migrated)),
            RatePoint(group, "cases verified on every attempt", Rate.from_dict(release.verified)),
        ]
    return RateChart(
        file_name=f"round-{history.round}-history.svg",
        title=f"Round {history.round}: obelize releases",
        caption="Key rows migrated (95% interval by case) and cases verified on every attempt (95% Wilson), "
        "per release, oldest first; ▼k: k cases regressed against the release before",
        points=tuple(points),
    )


def history_blocks(results: Path, rounds: list[int]) -> tuple[dict[str, str], list[RateChart]]:
    """The history block (named ``history-round-N``) and chart of every round that has a
    history.json; ValueError (one line) when one cannot be read."""
    blocks: dict[str, str] = {}
    charts: list[RateChart] = []
    for number in rounds:
        history = load_history(Path(results) / f"round-{number}")
        if history is None:
            continue
        if history.round != number:
            raise ValueError(f"{Path(results) / f'round-{number}' / HISTORY_NAME}: field round says {history.round}")
        blocks[f"history-round-{number}"] = history_block(history)
        chart = history_chart(history)
        if chart is not None:
            charts.append(chart)
    return blocks, charts


# -- the command -----------------------------------------------------------------------------------


def _find(history: HistoryDocument, case: str, out: TextIO) -> int:
    changes = changes_of(history, case)
    if not any(case in release.states for release in history.releases):
        print(f"obelize-bench history: no release of round {history.round} has a record of {case}", file=out)
        return 1
    if not changes:
        labels = ", ".join(r.label for r in history.releases if case in r.states)
        print(f"{case}: the same tier and rows under every release ({labels})", file=out)
        return 0
    said = [
        ReleaseChange(
            before=before.label,
            before_at=f"run {before.run}",
            was=state_text(before.states[case]),
            after=after.label,
            after_at=f"run {after.run}",
            now=state_text(after.states[case]),
        )
        for before, after in changes
    ]
    for line in change_lines(case, said):
        print(line, file=out)
    return 0


def run_history(results: Path, cases_path: Path, number: int, *, find: str | None, out: TextIO) -> int:
    """``history --round N [--find CASE]``: 0 when written (or found), 1 with a one-line reason."""
    try:
        history = collect_history(results, cases_path, number)
    except (ValueError, CaseFileError, ReviewFileError) as exc:
        print(f"obelize-bench history: {str(exc).splitlines()[0]}", file=out)
        return 1
    for item in history.left_out:
        print(f"left out: run {item.run}: {item.reason}", file=out)
    if not history.releases:
        print(f"obelize-bench history: round {number} has no complete run to make a history of", file=out)
        return 1
    if find is not None:
        return _find(history, find, out)
    for release in history.releases:
        rows = Rate.from_dict(release.rows_migrated)
        print(f"obelize {release.label}: run {release.run}, {release.cases} cases, key rows migrated "
              f"{rows.counted('rows', 'cases')}, {rows.format()}", file=out)  # fmt: skip
    for step in history.steps:
        print(f"{step.after} against {step.before}: {len(step.improved)} improved, {len(step.regressed)} "
              f"regressed; gate: {step.decision}", file=out)  # fmt: skip
    path = Path(results) / f"round-{number}" / HISTORY_NAME
    write_atomically(path, history.to_json())
    print(f"history written: {path}; `obelize-bench summarize` puts its block into the results document", file=out)
    return 0
