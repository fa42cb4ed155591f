"""The pre-registered promotion decision: does a candidate obelize replace the incumbent?

The policy (``cases/promotion.yaml``) is written before the runs and its sha256 goes into every
decision, so nobody can pick the thresholds after seeing the figures. ``decide`` is pure: two
runs' evidence and the policy in, one of three outcomes out, with every rule it checked as a
``Reason`` naming the figure, its value and the threshold.

* **insufficient_evidence** when the evidence cannot decide: a run without a manifest, one that
  was interrupted, incomplete or holds infrastructure errors; case sets or pins that differ;
  fewer attempts than ``min_runs``; evidence older than ``max_evidence_age_days``; no holdout
  case when the policy needs one; or a better rate that is not distinguishable (either side
  under ``min_n`` runs, 95% Wilson intervals that overlap, or the paired exact McNemar
  ``p >= alpha``). Partial evidence can never promote.
* **reject** with the rule that failed: a per-case tier drop beyond ``max_case_regressions``
  (this rejects even a better rate), a lower rate, an improvement under ``min_improvement``, or,
  at equal quality, a cost that is not lower by enough.
* **promote** when every rule holds and the difference is distinguishable.

Quality before cost: the rate of ``verified_success`` over every graded attempt (errored ones
stay in the denominator) decides first; rows migrated decide only at an equal rate; runtime
decides only at equal rate and rows. A case's tier over several attempts is its worst attempt,
so a candidate that is sometimes worse on a case has regressed on it.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pytest_obelize_bench._util.stats import (
    Rate,
    format_percent,
    intervals_overlap,
    mcnemar_exact,
    rate_of,
)
from pytest_obelize_bench.grading.error_classes import INFRASTRUCTURE, error_class
from pytest_obelize_bench.grading.repeatability import SUCCESS, AttemptFacts
from pytest_obelize_bench.records.evidence import RunEvidence

__all__ = [
    "DECISION_SCHEMA_VERSION",
    "QUALITY_ORDER",
    "Decision",
    "Policy",
    "PolicyError",
    "Reason",
    "decide",
    "load_policy",
    "pareto_front",
    "policy_changed",
]

DECISION_SCHEMA_VERSION = 1
Outcome = Literal["promote", "reject", "insufficient_evidence"]

#: Tiers from worst to best, for "did this case drop a tier": breaking a repository is worse
#: than measuring nothing, which is worse than refusing.
QUALITY_ORDER: tuple[str, ...] = ("wrong", "error", "unsupported", "partial", "patched_unverified", SUCCESS)

#: Steps whose timeout is the network's or the machine's (fetching, building the venv, installing).


class PolicyError(ValueError):
    """A policy file that cannot be used: one line naming the file and the field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MinImprovement(_Strict):
    rate_points: float = Field(default=0.05, ge=0.0, le=1.0)
    rows: int = Field(default=1, ge=1)
    cost_share: float = Field(default=0.10, ge=0.0, le=1.0)


class MaxCaseRegressions(_Strict):
    verified: int = Field(default=0, ge=0)
    other: int | None = Field(default=None, ge=0)


class Policy(_Strict):
    schema_version: Literal[1] = 1
    metric: Literal["verified_success"] = "verified_success"
    secondary: Literal["rows_migrated"] = "rows_migrated"
    cost: Literal["runtime_seconds"] = "runtime_seconds"
    min_runs: int = Field(default=1, ge=1)
    min_n: int = Field(default=10, ge=1)
    min_improvement: MinImprovement = MinImprovement()
    max_case_regressions: MaxCaseRegressions = MaxCaseRegressions()
    alpha: float = Field(default=0.05, gt=0.0, lt=1.0)
    max_evidence_age_days: int = Field(default=30, ge=0)
    require_holdout: bool = True


def load_policy(data: bytes, source: str) -> tuple[Policy, str]:
    """The policy in a file's bytes and the sha256 of exactly those bytes."""
    digest = hashlib.sha256(data).hexdigest()
    try:
        parsed = yaml.safe_load(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise PolicyError(f"{source}: not UTF-8 (byte {exc.start})") from None
    except yaml.YAMLError as exc:
        raise PolicyError(f"{source}: not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(parsed, dict):
        raise PolicyError(f"{source}: expected a mapping of policy fields")
    try:
        return Policy.model_validate(parsed), digest
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        message = "is not a policy field" if first["type"] == "extra_forbidden" else first["msg"]
        raise PolicyError(f"{source}: field {where}: {message}") from None


@dataclass(frozen=True)
class Reason:
    """One rule as checked: which rule, on which figure, the value seen and the threshold."""

    rule: str
    figure: str
    value: Any
    threshold: Any
    holds: bool
    text: str


@dataclass(frozen=True)
class SideFigures:
    """One run's figures over the graded cases both runs share."""

    label: str
    runs: int
    rate: Rate
    rows_migrated: float | None
    cost_seconds: float | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "runs": self.runs,
            "verified_success": self.rate.as_dict(),
            "rows_migrated": self.rows_migrated,
            "runtime_seconds_mean": self.cost_seconds,
        }


@dataclass(frozen=True)
class Decision:
    candidate: str
    incumbent: str
    outcome: Outcome
    reasons: tuple[Reason, ...]
    incumbent_figures: SideFigures
    candidate_figures: SideFigures
    paired: Mapping[str, Any]
    case_changes: tuple[Mapping[str, Any], ...] = field(default=())

    @property
    def failed(self) -> tuple[Reason, ...]:
        return tuple(r for r in self.reasons if not r.holds)

    def as_dict(self) -> dict[str, Any]:
        return {
            "candidate": self.candidate,
            "incumbent": self.incumbent,
            "decision": self.outcome,
            "reasons": [asdict(r) for r in self.reasons],
            "failed_rules": [r.rule for r in self.failed],
            "figures": {
                "incumbent": self.incumbent_figures.as_dict(),
                "candidate": self.candidate_figures.as_dict(),
            },
            "paired": dict(self.paired),
            "case_changes": [dict(c) for c in self.case_changes],
        }


# -- evidence -----------------------------------------------------------------------------


def _parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _evidence_time(run: RunEvidence) -> datetime | None:
    """When the evidence was made: the run's end, else its last record's start."""
    if run.manifest is not None and (ended := _parse_time(run.manifest.ended_at)) is not None:
        return ended
    times = [t for a in run.attempts if (t := _parse_time(a.run_at)) is not None]
    return max(times) if times else None


def _is_infrastructure(attempt: AttemptFacts) -> bool:
    """The machine's failure, not the tool's, by the rule every other figure uses."""
    if attempt.error_reason is None:
        return False
    return error_class(attempt.error_reason, attempt.error_step or "") == INFRASTRUCTURE


def _completeness(run: RunEvidence) -> list[Reason]:
    who = run.label
    manifest = run.manifest
    if manifest is None:
        return [
            Reason(
                "run_complete",
                f"{who}: run.json",
                None,
                "present",
                False,
                f"{who}: the run has no run.json, so nothing says it is complete",
            )
        ]
    reasons = []
    interrupted = manifest.interrupted
    reasons.append(
        Reason(
            "run_not_interrupted",
            f"{who}: interrupted",
            interrupted,
            False,
            interrupted is False,
            f"{who}: run.json interrupted is {interrupted!r}, must be false",
        )
    )
    if manifest.complete is not None:
        reasons.append(
            Reason(
                "run_complete",
                f"{who}: complete",
                manifest.complete,
                True,
                manifest.complete,
                f"{who}: run.json complete is {manifest.complete}",
            )
        )
    expected = manifest.cases_expected
    recorded = {a.case for a in run.attempts}
    if expected is None:
        reasons.append(
            Reason(
                "run_complete",
                f"{who}: cases_expected",
                None,
                "listed",
                False,
                f"{who}: run.json does not list the cases expected",
            )
        )
    else:
        missing = sorted(set(expected) - recorded)
        extra = sorted(recorded - set(expected))
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        reasons.append(
            Reason(
                "run_complete",
                f"{who}: cases without a record",
                len(missing),
                0,
                not missing,
                f"{who}: {len(expected) - len(missing)} of {len(expected)} expected cases have a record"
                + (f"; missing {shown}" if missing else ""),
            )
        )
        listed = manifest.cases_recorded
        if listed is not None and set(listed) != recorded:
            differ = sorted(set(listed) ^ recorded)
            reasons.append(
                Reason(
                    "run_complete",
                    f"{who}: cases_recorded that disagree with the records on disk",
                    len(differ),
                    0,
                    False,
                    f"{who}: run.json cases_recorded and the record files disagree on {', '.join(differ[:5])}",
                )
            )
        if extra:
            reasons.append(
                Reason(
                    "run_complete",
                    f"{who}: records of unexpected cases",
                    len(extra),
                    0,
                    False,
                    f"{who}: {len(extra)} records are of cases run.json did not expect ({', '.join(extra[:5])})",
                )
            )
    infra = sorted({f"{a.case} ({a.error_reason})" for a in run.attempts if _is_infrastructure(a)})
    reasons.append(
        Reason(
            "no_infrastructure_errors",
            f"{who}: attempts with an infrastructure error",
            len(infra),
            0,
            not infra,
            f"{who}: {len(infra)} attempts errored for a reason outside the tool"
            + (f": {', '.join(infra[:5])}" if infra else ""),
        )
    )
    return reasons


def _by_case(run: RunEvidence) -> dict[str, list[AttemptFacts]]:
    grouped: dict[str, list[AttemptFacts]] = {}
    for attempt in run.attempts:
        grouped.setdefault(attempt.case, []).append(attempt)
    return grouped


def _pins(run: RunEvidence) -> dict[str, set[str | None]]:
    pins: dict[str, set[str | None]] = {}
    for attempt in run.attempts:
        for name, value in attempt.pins:
            pins.setdefault(f"{attempt.case}: {name}", set()).add(value)
    if run.manifest is not None:
        pins["run: interpreter_policy"] = {run.manifest.interpreter_policy}
        pins["run: exclude_newer"] = {run.manifest.exclude_newer}
    return pins


def _comparability(policy: Policy, incumbent: RunEvidence, candidate: RunEvidence, now: datetime) -> list[Reason]:
    reasons = []
    inc_cases, cand_cases = set(_by_case(incumbent)), set(_by_case(candidate))
    differing = sorted(inc_cases ^ cand_cases)
    reasons.append(
        Reason(
            "same_cases",
            "cases in only one run",
            len(differing),
            0,
            not differing,
            f"{len(differing)} cases are in only one run" + (f": {', '.join(differing[:5])}" if differing else ""),
        )
    )
    inc_pins, cand_pins = _pins(incumbent), _pins(candidate)
    pin_problems = sorted(name for name in set(inc_pins) & set(cand_pins) if len(inc_pins[name] | cand_pins[name]) > 1)
    reasons.append(
        Reason(
            "same_pins",
            "pins that differ (exclude_newer, SDK versions, interpreter, interpreter policy)",
            len(pin_problems),
            0,
            not pin_problems,
            f"{len(pin_problems)} pins differ between the runs"
            + (f": {', '.join(pin_problems[:5])}" if pin_problems else ""),
        )
    )
    for run in (incumbent, candidate):
        short = sorted(case for case, attempts in _by_case(run).items() if len(attempts) < policy.min_runs)
        fewest = min((len(a) for a in _by_case(run).values()), default=0)
        reasons.append(
            Reason(
                "min_runs",
                f"{run.label}: fewest attempts of a case",
                fewest,
                policy.min_runs,
                not short and fewest >= policy.min_runs,
                f"{run.label}: the fewest attempts of a case is {fewest}, min_runs is {policy.min_runs}"
                + (f" ({len(short)} cases short)" if short else ""),
            )
        )
        moment = _evidence_time(run)
        if moment is None:
            reasons.append(
                Reason(
                    "evidence_age",
                    f"{run.label}: age in days",
                    None,
                    policy.max_evidence_age_days,
                    False,
                    f"{run.label}: no time is recorded, so its age is unknown",
                )
            )
        else:
            age = (now - moment).total_seconds() / 86400
            reasons.append(
                Reason(
                    "evidence_age",
                    f"{run.label}: age in days",
                    round(age, 2),
                    policy.max_evidence_age_days,
                    -1 < age <= policy.max_evidence_age_days,
                    f"{run.label}: the evidence is {age:.1f} days old, "
                    f"max_evidence_age_days is {policy.max_evidence_age_days}",
                )
            )
    if policy.require_holdout:
        for run in (incumbent, candidate):
            holdout = len({a.case for a in run.attempts if a.split == "holdout" and not a.control})
            reasons.append(
                Reason(
                    "holdout_included",
                    f"{run.label}: holdout cases",
                    holdout,
                    ">= 1",
                    holdout >= 1,
                    f"{run.label}: {holdout} holdout cases; the policy requires the holdout",
                )
            )
    return reasons


# -- quality ------------------------------------------------------------------------------


def _worst(attempts: Sequence[AttemptFacts]) -> str:
    return min((a.tier for a in attempts), key=QUALITY_ORDER.index)


def _case_changes(incumbent: RunEvidence, candidate: RunEvidence) -> list[dict[str, Any]]:
    inc, cand = _by_case(incumbent), _by_case(candidate)
    changes = []
    for case in sorted(set(inc) & set(cand)):
        before, after = _worst(inc[case]), _worst(cand[case])
        step = QUALITY_ORDER.index(after) - QUALITY_ORDER.index(before)
        changes.append(
            {
                "case": case,
                "split": inc[case][0].split,
                "control": inc[case][0].control,
                "incumbent": before,
                "candidate": after,
                "change": "regression" if step < 0 else "improvement" if step > 0 else "same",
                # The case's own rate on each side, over its attempts: what the decision's figure draws.
                "incumbent_verified": {"k": sum(a.succeeded for a in inc[case]), "n": len(inc[case])},
                "candidate_verified": {"k": sum(a.succeeded for a in cand[case]), "n": len(cand[case])},
            }
        )
    return changes


def _regression_reasons(policy: Policy, changes: Sequence[Mapping[str, Any]]) -> list[Reason]:
    limits = policy.max_case_regressions
    verified = [c["case"] for c in changes if c["change"] == "regression" and c["incumbent"] == SUCCESS]
    other = [c["case"] for c in changes if c["change"] == "regression" and c["incumbent"] != SUCCESS]
    reasons = [
        Reason(
            "max_case_regressions.verified",
            "cases the incumbent verified that dropped a tier",
            len(verified),
            limits.verified,
            len(verified) <= limits.verified,
            f"{len(verified)} cases the incumbent verified dropped a tier (at most {limits.verified} allowed)"
            + (f": {', '.join(verified[:5])}" if verified else ""),
        )
    ]
    if limits.other is not None:
        reasons.append(
            Reason(
                "max_case_regressions.other",
                "other cases that dropped a tier",
                len(other),
                limits.other,
                len(other) <= limits.other,
                f"{len(other)} other cases dropped a tier (at most {limits.other} allowed)"
                + (f": {', '.join(other[:5])}" if other else ""),
            )
        )
    return reasons


def _graded(run: RunEvidence, cases: set[str]) -> list[AttemptFacts]:
    return [a for a in run.attempts if not a.control and a.case in cases]


def _rows(attempts: Sequence[AttemptFacts]) -> float | None:
    """Rows migrated: per case the mean over its attempts, summed over cases."""
    per_case: dict[str, list[int]] = {}
    for attempt in attempts:
        if attempt.rows_migrated is None:
            return None
        per_case.setdefault(attempt.case, []).append(attempt.rows_migrated)
    return math.fsum(sum(v) / len(v) for v in per_case.values()) if per_case else None


def _cost(attempts: Sequence[AttemptFacts]) -> float | None:
    known = [a.runtime_seconds for a in attempts if a.runtime_seconds is not None]
    return math.fsum(known) / len(known) if known else None


def _figures(run: RunEvidence, cases: set[str]) -> SideFigures:
    graded = _graded(run, cases)
    return SideFigures(
        label=run.label,
        runs=len(graded),
        rate=rate_of(sum(a.succeeded for a in graded), len(graded)),
        rows_migrated=_rows(graded),
        cost_seconds=_cost(graded),
    )


def _paired(incumbent: RunEvidence, candidate: RunEvidence, cases: set[str]) -> dict[str, Any]:
    inc = {(a.case, a.attempt): a.succeeded for a in _graded(incumbent, cases)}
    cand = {(a.case, a.attempt): a.succeeded for a in _graded(candidate, cases)}
    pairs = sorted(set(inc) & set(cand))
    incumbent_only = sum(inc[p] and not cand[p] for p in pairs)
    candidate_only = sum(cand[p] and not inc[p] for p in pairs)
    return {
        "pairs": len(pairs),
        "both": sum(inc[p] and cand[p] for p in pairs),
        "incumbent_only": incumbent_only,
        "candidate_only": candidate_only,
        "neither": sum(not inc[p] and not cand[p] for p in pairs),
        "mcnemar_p": mcnemar_exact(incumbent_only, candidate_only),
    }


def _points(value: Fraction) -> str:
    return f"{float(value) * 100:+.1f} points"


def _quality(
    policy: Policy, inc: SideFigures, cand: SideFigures, paired: Mapping[str, Any]
) -> tuple[Outcome, list[Reason]]:
    """The metric, then the secondary figure, then cost; distinguishability before a promote."""
    wanted = policy.min_improvement
    diff = Fraction(cand.rate.k, max(cand.rate.n, 1)) - Fraction(inc.rate.k, max(inc.rate.n, 1))
    rate_text = f"verified_success rate {inc.rate.format()} -> {cand.rate.format()} ({_points(diff)})"
    if diff < 0:
        return "reject", [
            Reason(
                "metric",
                "verified_success rate change",
                float(diff),
                ">= 0",
                False,
                f"{rate_text}: the candidate is worse, whatever it costs",
            )
        ]
    if diff > 0:
        enough = diff >= Fraction(wanted.rate_points).limit_denominator(10**6)
        reasons = [
            Reason(
                "min_improvement.rate_points",
                "verified_success rate change",
                float(diff),
                wanted.rate_points,
                enough,
                f"{rate_text}; min_improvement is {wanted.rate_points * 100:.1f} points",
            )
        ]
        if not enough:
            return "reject", reasons
        return _distinguishable(policy, inc, cand, paired, reasons)
    reasons = [
        Reason(
            "metric",
            "verified_success rate change",
            0.0,
            "> 0, or equal and better on rows or cost",
            True,
            f"{rate_text}: equal, so rows migrated decide",
        )
    ]
    if inc.rows_migrated is None or cand.rows_migrated is None:
        reasons.append(
            Reason(
                "secondary",
                "rows migrated",
                None,
                wanted.rows,
                False,
                "rows migrated are unknown for some attempt (a case missing from the case file)",
            )
        )
        return "insufficient_evidence", reasons
    rows = cand.rows_migrated - inc.rows_migrated
    rows_text = f"rows migrated {inc.rows_migrated:g} -> {cand.rows_migrated:g} ({rows:+g})"
    if rows < 0:
        reasons.append(
            Reason(
                "secondary", "rows migrated change", rows, ">= 0", False, f"{rows_text}: fewer rows at an equal rate"
            )
        )
        return "reject", reasons
    if rows > 0:
        enough = rows >= wanted.rows
        reasons.append(
            Reason(
                "min_improvement.rows",
                "rows migrated change",
                rows,
                wanted.rows,
                enough,
                f"{rows_text}; min_improvement is {wanted.rows} rows",
            )
        )
        return ("promote" if enough else "reject"), reasons
    reasons.append(
        Reason(
            "secondary",
            "rows migrated change",
            0.0,
            "> 0, or equal and cheaper",
            True,
            f"{rows_text}: equal quality, so cost decides",
        )
    )
    if inc.cost_seconds is None or cand.cost_seconds is None or inc.cost_seconds <= 0:
        reasons.append(
            Reason(
                "cost",
                "runtime_seconds mean",
                cand.cost_seconds,
                wanted.cost_share,
                False,
                "runtime is not known on both sides, so cost cannot decide",
            )
        )
        return "insufficient_evidence", reasons
    saving = (inc.cost_seconds - cand.cost_seconds) / inc.cost_seconds
    enough = saving >= wanted.cost_share
    reasons.append(
        Reason(
            "min_improvement.cost_share",
            "runtime_seconds saving",
            round(saving, 4),
            wanted.cost_share,
            enough,
            f"mean runtime {inc.cost_seconds:.2f} s -> {cand.cost_seconds:.2f} s ({format_percent(saving)} saved); "
            f"min_improvement is {format_percent(wanted.cost_share)}",
        )
    )
    return ("promote" if enough else "reject"), reasons


def _distinguishable(
    policy: Policy, inc: SideFigures, cand: SideFigures, paired: Mapping[str, Any], reasons: list[Reason]
) -> tuple[Outcome, list[Reason]]:
    fewest = min(inc.runs, cand.runs)
    reasons.append(
        Reason(
            "min_n",
            "graded runs on the smaller side",
            fewest,
            policy.min_n,
            fewest >= policy.min_n,
            f"{inc.runs} and {cand.runs} graded runs; min_n is {policy.min_n}",
        )
    )
    if inc.rate.low is None or inc.rate.high is None or cand.rate.low is None or cand.rate.high is None:
        overlap = True
    else:
        overlap = intervals_overlap((inc.rate.low, inc.rate.high), (cand.rate.low, cand.rate.high))
    reasons.append(
        Reason(
            "intervals_apart",
            "95% Wilson intervals overlap",
            overlap,
            False,
            not overlap,
            f"intervals {inc.rate.format()} and {cand.rate.format()} {'overlap' if overlap else 'are apart'}",
        )
    )
    p = paired["mcnemar_p"]
    reasons.append(
        Reason(
            "alpha",
            "paired exact McNemar p",
            p,
            policy.alpha,
            p < policy.alpha,
            f"exact McNemar p = {p:.4f} over {paired['pairs']} paired runs "
            f"({paired['incumbent_only']} only the incumbent verified, {paired['candidate_only']} only the candidate); "
            f"alpha is {policy.alpha}",
        )
    )
    if all(r.holds for r in reasons):
        return "promote", reasons
    return "insufficient_evidence", reasons


def decide(policy: Policy, incumbent: RunEvidence, candidate: RunEvidence, *, now: datetime) -> Decision:
    """The decision for one candidate against the incumbent (see the module docstring)."""
    evidence = [
        *_completeness(incumbent),
        *_completeness(candidate),
        *_comparability(policy, incumbent, candidate, now),
    ]
    cases = {a.case for a in incumbent.attempts} & {a.case for a in candidate.attempts}
    inc_figures, cand_figures = _figures(incumbent, cases), _figures(candidate, cases)
    paired = _paired(incumbent, candidate, cases)
    changes = _case_changes(incumbent, candidate)
    regressions = _regression_reasons(policy, changes)
    outcome: Outcome
    quality: list[Reason]
    if not all(r.holds for r in evidence):
        outcome, quality = "insufficient_evidence", []
    elif not all(r.holds for r in regressions):
        outcome, quality = "reject", []
    else:
        outcome, quality = _quality(policy, inc_figures, cand_figures, paired)
    return Decision(
        candidate=candidate.label,
        incumbent=incumbent.label,
        outcome=outcome,
        reasons=(*evidence, *regressions, *quality),
        incumbent_figures=inc_figures,
        candidate_figures=cand_figures,
        paired=paired,
        case_changes=tuple(changes),
    )


def pareto_front(figures: Sequence[SideFigures]) -> list[str]:
    """The variants no other beats on every objective: rate and rows up, runtime down.

    An unknown figure counts as the worst value, so missing evidence never earns a place.
    """

    def objectives(f: SideFigures) -> tuple[float, float, float]:
        rate = -math.inf if f.rate.rate is None else f.rate.rate
        rows = -math.inf if f.rows_migrated is None else f.rows_migrated
        cost = -math.inf if f.cost_seconds is None else -f.cost_seconds
        return rate, rows, cost

    def dominates(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
        return all(x >= y for x, y in zip(a, b, strict=True)) and any(x > y for x, y in zip(a, b, strict=True))

    scored = [(f.label, objectives(f)) for f in figures]
    return [label for label, mine in scored if not any(dominates(other, mine) for _, other in scored)]


def policy_changed(
    prior: Sequence[Mapping[str, Any]], policy_sha256: str, incumbent_run: str, candidate_run: str
) -> str | None:
    """Why the policy is refused, or None: an earlier decision on these runs used other bytes.

    The policy is registered before the runs; judging the same evidence again under edited
    thresholds is exactly what pre-registration forbids.
    """

    def run_id(side: Any) -> Any:
        return side.get("run_id") if isinstance(side, Mapping) else None

    for document in prior:
        inc, cand = run_id(document.get("incumbent")), run_id(document.get("candidate"))
        sha = document.get("policy_sha256")
        if inc == incumbent_run and cand == candidate_run and sha != policy_sha256:
            return (
                f"the policy changed after these runs were judged: an earlier decision on incumbent {inc} and "
                f"candidate {cand} used policy sha256 {str(sha)[:16]}..., this policy is {policy_sha256[:16]}..."
            )
    return None
