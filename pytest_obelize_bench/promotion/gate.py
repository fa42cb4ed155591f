"""``obelize-bench gate``: the promotion decision as a command a CI job can gate on.

Reads the policy, the case file's keys, the review answers (``cases/reviews/round-N.yaml``) and
the runs (``evidence``, every tier recomputed), decides each candidate (``decision.decide``),
writes one decision document per candidate to ``results/decisions/<date>-<candidate>.json`` and
prints a short table. Exit status: 0 when a candidate is promoted, 1 when every candidate is
rejected, 3 when the evidence cannot decide, 2 when the input cannot be used at all (a policy
or run that cannot be read, or a policy other than the one the runs registered at their start,
or than an earlier decision on them used), in which case nothing is written. A decision over a
run that is not whole (``run_complete``, ``run_not_interrupted``) is printed but not written: it
would become a published result, and partial evidence is not one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from pytest_obelize_bench._util.caps import POLICY_BYTES
from pytest_obelize_bench._util.clock import UTC_FORMAT
from pytest_obelize_bench._util.safe_io import UntrustedFileError, read_untrusted, write_atomically
from pytest_obelize_bench._util.strict_model import committed_json
from pytest_obelize_bench.casefile.cases import CaseFileError, load_case_file
from pytest_obelize_bench.casefile.keys_digest import keys_sha256
from pytest_obelize_bench.casefile.reviews import ReviewFileError, load_reviews, reviews_path
from pytest_obelize_bench.casefile.schema import Case
from pytest_obelize_bench.grading.grade import expected_rows
from pytest_obelize_bench.promotion.case_view import SideFigures
from pytest_obelize_bench.promotion.decision import (
    DECISION_SCHEMA_VERSION,
    Decision,
    PolicyError,
    decide,
    load_policy,
    pareto_front,
    policy_changed,
    registration,
)
from pytest_obelize_bench.records.evidence import (
    EvidenceError,
    RunEvidence,
    read_decision_documents,
    read_run,
    resolve_run,
)

__all__ = ["DECISIONS_FOLDER", "EXIT_CODES", "case_keys", "run_gate"]

DECISIONS_FOLDER = "decisions"
EXIT_CODES = {"promote": 0, "reject": 1, "insufficient_evidence": 3}
EXIT_UNUSABLE = 2
#: Rules that say a run is not whole: a decision they stop is printed, never kept as a result.
PARTIAL_RULES = frozenset({"run_complete", "run_not_interrupted", "run_unchanged"})
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def case_keys(cases_path: Path) -> tuple[dict[str, Case], dict[str, int], str | None]:
    """The cases by id, each key's row count and the keys' sha256; all empty without a case file."""
    if not cases_path.exists():
        return {}, {}, None
    cases = load_case_file(cases_path).cases
    rows = {case.id: 0 if case.control else len(expected_rows(case)) for case in cases}
    return {case.id: case for case in cases}, rows, keys_sha256(cases)


def _round_of(spec: str, folder: Path) -> int | None:
    """The round a run belongs to: ``round-N/runs/<id>`` in its path."""
    parent = folder.parent.parent.name if folder.parent.name == "runs" else ""
    return int(parent.removeprefix("round-")) if re.fullmatch(r"round-[1-9][0-9]*", parent) else None


def _name(run: RunEvidence) -> str:
    return _UNSAFE.sub("-", run.run_id).strip("-.") or "candidate"


def _document(
    decision: Decision,
    *,
    incumbent: RunEvidence,
    candidate: RunEvidence,
    policy_path: Path,
    policy_sha: str,
    policy_values: dict[str, Any],
    evaluated_at: datetime,
    front: list[str],
    considered: list[str],
) -> dict[str, Any]:
    return {
        **decision.as_dict(),
        "schema_version": DECISION_SCHEMA_VERSION,
        "kind": "obelize-bench promotion decision",
        "evaluated_at": evaluated_at.strftime(UTC_FORMAT),
        "policy": {"path": str(policy_path), "values": policy_values},
        "policy_sha256": policy_sha,
        "incumbent": incumbent.identity(),
        "candidate": candidate.identity(),
        "pareto_front": front,
        "variants_considered": considered,
    }


def _table(decisions: Sequence[Decision], front: Sequence[str]) -> list[str]:
    def cost(value: float | None) -> str:
        return "--" if value is None else f"{value:.1f}s"

    def rows(value: float | None) -> str:
        return "--" if value is None else f"{value:g}"

    def cases(f: SideFigures) -> str:
        return f"{f.cases_resolved.k}/{f.cases} cases {f.rate.format()} ({f.attempts_resolved}/{f.attempts} attempts)"

    def score(f: SideFigures) -> str:
        return f"{float(f.resolution):.4g} of {f.cases}"

    lines = []
    if decisions:
        inc = decisions[0].incumbent_figures
        lines.append(
            f"incumbent  {inc.label}: {inc.metric} {score(inc)} cases; verified_success {cases(inc)}, "
            f"rows {rows(inc.rows_migrated)}, runtime {cost(inc.runtime_median)}"
        )
    metric = decisions[0].incumbent_figures.metric if decisions else "metric"
    header = (
        f"{'candidate':<28} {'decision':<22} {metric:>20} {'verified_success':<54} {'rows':>6} {'runtime':>9}"
        "  failed rules"
    )
    lines.append(header)
    for d in decisions:
        c = d.candidate_figures
        failed = ", ".join(dict.fromkeys(r.rule for r in d.failed)) or "--"
        lines.append(
            f"{d.candidate:<28} {d.outcome:<22} {score(c):>20} {cases(c):<54} "
            f"{rows(c.rows_migrated):>6} {cost(c.runtime_median):>9}  {failed}"
        )
    for d in decisions:
        for r in d.failed:
            lines.append(f"  {d.candidate}: {r.rule}: {r.text}")
        lines.append(
            f"  {d.candidate}: paired test by case on {d.paired['metric']}: {d.paired['verdict']} "
            f"(p = {d.paired['p']:.4f}; mean per-case difference {d.paired['difference_text']})"
        )
        lines.append(f"  {d.candidate}: minimum detectable difference: {d.paired['minimum_detectable_text']}")
    lines.append("pareto front (resolution, rows up; runtime down): " + (", ".join(front) or "--"))
    return lines


def _label(run_id: str, spec: str, taken: set[str]) -> str:
    label = run_id if run_id not in taken else spec
    taken.add(label)
    return label


def run_gate(
    policy_path: Path,
    incumbent_spec: str,
    candidate_specs: Sequence[str],
    *,
    results_dir: Path,
    cases_path: Path,
    out: TextIO,
    now: datetime | None = None,
) -> int:
    """Decide every candidate, write the decision documents, print the table; the exit status."""
    moment = now or datetime.now(UTC)
    try:
        policy, policy_sha = load_policy(read_untrusted(policy_path, POLICY_BYTES), str(policy_path))
        keys, rows, keys_sha = case_keys(cases_path)
        taken: set[str] = set()
        specs = [incumbent_spec, *candidate_specs]
        loaded = []
        for spec in specs:
            folder = resolve_run(spec, results_dir)
            number = _round_of(spec, folder)
            # with a case file, only answers keyed to a record's patch apply: none when the round is unknown
            reviews = None if not keys else {} if number is None else load_reviews(reviews_path(cases_path, number))
            run = read_run(folder, spec, rows, keys=keys or None, reviews=reviews)
            loaded.append(replace(run, label=_label(run.run_id, spec, taken)))
        prior = [data for _, data in read_decision_documents(Path(results_dir) / DECISIONS_FOLDER)]
    except (PolicyError, EvidenceError, UntrustedFileError, ReviewFileError) as exc:
        print(f"obelize-bench gate: {exc}", file=out)
        return EXIT_UNUSABLE
    except CaseFileError as exc:
        print(f"obelize-bench gate: {exc.problems[0] if exc.problems else cases_path}", file=out)
        return EXIT_UNUSABLE
    incumbent, candidates = loaded[0], loaded[1:]
    refusal = registration(policy_sha, loaded)[1]
    for candidate in candidates:
        refusal = refusal or policy_changed(prior, policy_sha, incumbent.run_id, candidate.run_id)
    if refusal is not None:
        print(f"obelize-bench gate: refused: {policy_path}: {refusal}", file=out)
        return EXIT_UNUSABLE
    decisions = [
        decide(policy, incumbent, candidate, now=moment, policy_sha256=policy_sha, keys_sha256=keys_sha)
        for candidate in candidates
    ]
    figures = [decisions[0].incumbent_figures, *(d.candidate_figures for d in decisions)] if decisions else []
    front = pareto_front(figures)
    considered = [f.label for f in figures]
    folder = Path(results_dir) / DECISIONS_FOLDER
    written: list[Path] = []
    partial: list[str] = []
    for decision, candidate in zip(decisions, candidates, strict=True):
        if any(r.rule in PARTIAL_RULES and not r.holds for r in decision.reasons):
            partial.append(decision.candidate)  # a decision over a partial run is not a result to keep
            continue
        document = _document(
            decision,
            incumbent=incumbent,
            candidate=candidate,
            policy_path=policy_path,
            policy_sha=policy_sha,
            policy_values=policy.model_dump(mode="json"),
            evaluated_at=moment,
            front=front,
            considered=considered,
        )
        stem = f"{moment.strftime('%Y-%m-%d')}-{_name(candidate)}"
        path = folder / f"{stem}.json"
        copy = 2
        while path in written or path.exists():  # a decision is never overwritten: each gets its own file
            path, copy = folder / f"{stem}-{copy}.json", copy + 1
        write_atomically(path, committed_json(document))
        written.append(path)
    for line in _table(decisions, front):
        print(line, file=out)
    for path in written:
        print(f"decision written: {path}", file=out)
    for label in partial:
        print(
            f"decision not written for {label}: a run is not whole (a -k selection, an interrupted or unfinished "
            "session) or changed since its session ended, and a decision over such runs is not a result",
            file=out,
        )
    outcomes = {d.outcome for d in decisions}
    if "promote" in outcomes:
        return EXIT_CODES["promote"]
    if "insufficient_evidence" in outcomes:
        return EXIT_CODES["insufficient_evidence"]
    return EXIT_CODES["reject"]
