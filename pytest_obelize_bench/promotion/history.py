"""The history of obelize releases on one round: what each release gained and lost, case by case.

Every complete run of the round is a point of the history, one per tool identity (its version,
and its commit for a source checkout): the newest run of that identity, read as the gate reads a
run (``records.evidence.read_run``: every tier recomputed under the current keys and reviews).
Runs that cannot stand for a release are left out, each with its reason: not whole, changed since
its session ended, imported, a regraded copy, another run of the same release, or other pins than
the history's (the newest release's ``exclude_newer`` and interpreter policy).

Per release: cases by tier (a case's tier is its worst attempt's on the tier ladder), key rows
migrated with an interval by case (each case one cluster), cases verified on every attempt, the
median of the cases' median runtimes. Per release against the one before: the cases whose score
under the policy's metric rose or fell (the ladder breaks a tie), and the gate's decision under
the registered policy. Pure but for ``collect_history``'s reading.
"""

from __future__ import annotations

import itertools
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from packaging.version import InvalidVersion, Version

from pytest_obelize_bench._util.stats import rate_of, rate_over_clusters
from pytest_obelize_bench._util.strict_model import StrictModel, committed_json
from pytest_obelize_bench.casefile.promotion_policy import Policy
from pytest_obelize_bench.grading.repeatability import SUCCESS, AttemptFacts, by_case
from pytest_obelize_bench.promotion.case_view import case_side
from pytest_obelize_bench.promotion.decision import decide
from pytest_obelize_bench.promotion.metrics import LADDER, METRICS
from pytest_obelize_bench.records.evidence import RunEvidence
from pytest_obelize_bench.records.published import HISTORY_NAME

__all__ = [
    "HISTORY_NAME",
    "Candidate",
    "CaseChange",
    "HistoryDocument",
    "LeftOut",
    "Release",
    "Step",
    "build_history",
    "changes_of",
    "order_key",
    "release_label",
    "select_runs",
    "state_text",
]

HISTORY_SCHEMA = 1


class CaseState(StrictModel):
    """One case under one release: its tier (worst attempt), rows migrated of its key's, its score."""

    tier: str
    rows_migrated: int | None
    rows_total: int | None
    score: float | None


class Release(StrictModel):
    label: str
    run: str
    tool_version: str | None
    tool_commit: str | None
    started_at: str | None
    cases: int
    attempts_per_case: int
    tiers: dict[str, int]
    rows_migrated: dict[str, Any]
    verified: dict[str, Any]
    runtime_median_seconds: float | None
    states: dict[str, CaseState]


class CaseChange(StrictModel):
    case: str
    before: CaseState
    after: CaseState


class Step(StrictModel):
    """A release against the one before it."""

    before: str
    after: str
    improved: list[CaseChange]
    regressed: list[CaseChange]
    decision: str
    failed_rules: list[str]


class LeftOut(StrictModel):
    run: str
    reason: str


class HistoryDocument(StrictModel):
    schema_version: int = HISTORY_SCHEMA
    round: int
    metric: str
    policy_sha256: str | None
    keys_sha256: str | None
    exclude_newer: str | None
    interpreter_policy: str | None
    releases: list[Release]
    steps: list[Step]
    left_out: list[LeftOut]

    def to_json(self) -> str:
        return committed_json(self)


# -- choosing the runs -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """A run that may stand for its release, with why it may not (empty when it may)."""

    run: RunEvidence
    reasons: tuple[str, ...] = ()


def release_label(run: RunEvidence) -> str:
    """``0.8.0``, or ``0.8.0 @1a2b3c4`` for a source checkout (``+dirty`` when its tree was)."""
    manifest = run.manifest
    version = run.tool_version or "?"
    commit = None if manifest is None else manifest.tool_field("commit")
    if not commit:
        return version
    dirty = manifest is not None and manifest.tool is not None and bool(manifest.tool.tree_dirty)
    return f"{version} @{commit[:7]}" + ("+dirty" if dirty else "")


def order_key(run: RunEvidence) -> tuple[Any, ...]:
    """Releases by version (PEP 440 when it parses), then commits of one version by their date (a
    source checkout's), then by when the run started."""
    manifest = run.manifest
    tool = None if manifest is None else manifest.tool
    started = (_utc(None if tool is None else tool.commit_date), "" if manifest is None else manifest.started_at or "")
    try:
        return (0, Version(run.tool_version or ""), "", started)
    except InvalidVersion:
        return (1, None, run.tool_version or "", started)


def _utc(moment: str | None) -> str:
    """An ISO 8601 time with any offset as UTC, so that times sort as text; empty when unknown."""
    try:
        return "" if not moment else datetime.fromisoformat(moment).astimezone(UTC).isoformat()
    except ValueError:
        return moment or ""


def _pins(run: RunEvidence) -> tuple[str | None, str | None]:
    manifest = run.manifest
    return (None, None) if manifest is None else (manifest.exclude_newer, manifest.interpreter_policy)


def select_runs(candidates: Sequence[Candidate]) -> tuple[list[RunEvidence], list[LeftOut]]:
    """The newest acceptable run of each release, oldest release first, and every run left out."""
    left = [LeftOut(run=c.run.run_id, reason="; ".join(c.reasons)) for c in candidates if c.reasons]
    usable = sorted((c.run for c in candidates if not c.reasons), key=lambda r: (order_key(r), r.run_id))
    if usable:
        wanted = _pins(usable[-1])
        for run in [r for r in usable if _pins(r) != wanted]:
            usable.remove(run)
            have = _pins(run)
            left.append(
                LeftOut(
                    run=run.run_id,
                    reason=f"its pins (exclude_newer {have[0]}, interpreter {have[1]}) are not the history's "
                    f"(exclude_newer {wanted[0]}, interpreter {wanted[1]})",
                )
            )
    newest: dict[str, RunEvidence] = {}
    for run in usable:  # ordered by start: a later run of one release replaces the earlier
        earlier = newest.get(release_label(run))
        if earlier is not None:
            left.append(LeftOut(run=earlier.run_id, reason=f"an earlier run of obelize {release_label(run)}: "
                                f"run {run.run_id} stands for it"))  # fmt: skip
        newest[release_label(run)] = run
    chosen = sorted(newest.values(), key=lambda r: (order_key(r), r.run_id))
    return chosen, sorted(left, key=lambda item: item.run)


# -- the figures -----------------------------------------------------------------------------------


def _case_state(attempts: Sequence[AttemptFacts], metric: str) -> CaseState:
    worst = min((a.tier for a in attempts), key=LADDER.index)
    side = case_side(attempts, METRICS[metric])
    migrated = [0 if a.tier in ("wrong", "error") else a.rows_migrated for a in attempts]
    totals = [a.rows_total for a in attempts]
    known = None not in migrated and None not in totals
    return CaseState(
        tier=worst,
        rows_migrated=sum(m or 0 for m in migrated) if known else None,
        rows_total=sum(t or 0 for t in totals) if known else None,
        score=float(side.rate) if side.known else None,
    )


def _release(run: RunEvidence, metric: str) -> Release:
    cases = {case: list(attempts) for case, attempts in by_case(run.attempts).items() if not attempts[0].control}
    states = {case: _case_state(attempts, metric) for case, attempts in sorted(cases.items())}
    clusters = [(s.rows_migrated or 0, s.rows_total or 0) for s in states.values() if s.rows_total is not None]
    verified = sum(all(a.tier == SUCCESS for a in attempts) for attempts in cases.values())
    runtimes = [r for attempts in cases.values() if (r := case_side(attempts).runtime) is not None]
    manifest = run.manifest
    return Release(
        label=release_label(run),
        run=run.run_id,
        tool_version=run.tool_version,
        tool_commit=None if manifest is None else manifest.tool_field("commit"),
        started_at=None if manifest is None else manifest.started_at,
        cases=len(states),
        attempts_per_case=max((len(a) for a in cases.values()), default=0),
        tiers=dict(sorted(Counter(s.tier for s in states.values()).items(), key=lambda kv: LADDER.index(kv[0]))),
        rows_migrated=rate_over_clusters(clusters).as_dict(),
        verified=rate_of(verified, len(states)).as_dict(),
        runtime_median_seconds=statistics.median(runtimes) if runtimes else None,
        states=states,
    )


def _direction(before: CaseState, after: CaseState) -> int:
    """1 improved, -1 regressed, 0 neither: the metric's score first, the tier ladder on a tie."""
    if before.score is not None and after.score is not None and before.score != after.score:
        return 1 if after.score > before.score else -1
    rung = LADDER.index(after.tier) - LADDER.index(before.tier)
    return (rung > 0) - (rung < 0)


def _step(
    before: Release, after: Release, runs: tuple[RunEvidence, RunEvidence], policy: Policy, shas: dict[str, Any]
) -> Step:
    improved: list[CaseChange] = []
    regressed: list[CaseChange] = []
    for case in sorted(set(before.states) & set(after.states)):
        old, new = before.states[case], after.states[case]
        direction = _direction(old, new)
        if direction:
            (improved if direction > 0 else regressed).append(CaseChange(case=case, before=old, after=new))
    decision = decide(policy, runs[0], runs[1], now=shas["now"], policy_sha256=shas["policy"],
                      keys_sha256=shas["keys"])  # fmt: skip
    return Step(
        before=before.label,
        after=after.label,
        improved=improved,
        regressed=regressed,
        decision=decision.outcome,
        failed_rules=list(dict.fromkeys(r.rule for r in decision.failed)),
    )


def build_history(
    number: int,
    runs: Sequence[RunEvidence],
    left_out: Sequence[LeftOut],
    policy: Policy,
    *,
    policy_sha256: str | None,
    keys_sha256: str | None,
    now: datetime,
) -> HistoryDocument:
    """The history over ``runs`` (one per release, oldest first, as ``select_runs`` gives them)."""
    releases = [_release(run, policy.metric) for run in runs]
    shas = {"now": now, "policy": policy_sha256, "keys": keys_sha256}
    steps = [_step(releases[i - 1], releases[i], (runs[i - 1], runs[i]), policy, shas) for i in range(1, len(releases))]
    pins = _pins(runs[-1]) if runs else (None, None)
    return HistoryDocument(
        round=number,
        metric=policy.metric,
        policy_sha256=policy_sha256,
        keys_sha256=keys_sha256,
        exclude_newer=pins[0],
        interpreter_policy=pins[1],
        releases=releases,
        steps=steps,
        left_out=list(left_out),
    )


def changes_of(history: HistoryDocument, case: str) -> list[tuple[Release, Release]]:
    """Every pair of consecutive releases between which ``case``'s tier or rows changed, oldest first."""
    with_case = [r for r in history.releases if case in r.states]
    return [
        (before, after)
        for before, after in itertools.pairwise(with_case)
        if (before.states[case].tier, before.states[case].rows_migrated)
        != (after.states[case].tier, after.states[case].rows_migrated)
    ]


def state_text(state: CaseState) -> str:
    """``partial, 2/3 rows``."""
    rows = "rows unknown" if state.rows_total is None else f"{state.rows_migrated}/{state.rows_total} rows"
    return f"{state.tier}, {rows}"
