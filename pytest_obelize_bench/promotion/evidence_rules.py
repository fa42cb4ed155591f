"""Whole and comparable evidence, or no decision.

Each run must be complete (a manifest, not interrupted, a record for every expected case, no
infrastructure error) and the two runs must have measured the same thing: the same cases, pins,
sandbox, harness version and commit, case-file keys, machine class and attempts per case. Any
check that fails makes the decision ``insufficient_evidence`` and names the field. Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from pytest_obelize_bench.casefile.promotion_policy import Policy
from pytest_obelize_bench.grading.error_classes import INFRASTRUCTURE
from pytest_obelize_bench.grading.repeatability import by_case
from pytest_obelize_bench.promotion.case_view import is_infrastructure
from pytest_obelize_bench.promotion.reasons import Reason, reason
from pytest_obelize_bench.records.evidence import RunEvidence
from pytest_obelize_bench.records.manifest import INTERRUPTED

__all__ = ["ENVIRONMENT_FIELDS", "comparability", "completeness", "same_measurement"]


def _shown(items: list[str], most: int = 5) -> str:
    return ", ".join(items[:most]) + (" ..." if len(items) > most else "")


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


def completeness(run: RunEvidence) -> list[Reason]:
    """Whether this run is whole: manifest, not interrupted, every expected case, no machine error."""
    who, manifest = run.label, run.manifest
    if manifest is None:
        return [reason("run_complete", f"{who}: run.json", None, "present", False, f"{who}: the run has no run.json")]
    interrupted = manifest.interrupted
    unfinished = [why for why in manifest.unfinished() if why != INTERRUPTED]
    reasons = [
        reason(
            "run_not_interrupted",
            f"{who}: interrupted",
            interrupted,
            False,
            not interrupted,
            f"{who}: run.json interrupted is {interrupted!r}, must be false",
        ),
        reason(
            "run_complete",
            f"{who}: run.json",
            unfinished,
            [],
            not unfinished,
            f"{who}: run.json says the run is whole"
            if not unfinished
            else f"{who}: run.json says the run is not whole: {'; '.join(unfinished)}",
        ),
    ]
    reasons.append(
        reason(
            "run_unchanged",
            f"{who}: files changed since its session ended",
            len(run.changed),
            0,
            not run.changed,
            f"{who}: the run folder is as its session left it"
            if not run.changed
            else f"{who}: {len(run.changed)} files changed since its session ended: {_shown(list(run.changed))}",
        )
    )
    recorded = {a.case for a in run.attempts}
    expected = manifest.cases_expected
    if not expected:
        reasons.append(
            reason("run_complete", f"{who}: cases_expected", None, "listed", False, f"{who}: no cases_expected")
        )
    else:
        missing, extra = sorted(set(expected) - recorded), sorted(recorded - set(expected))
        reasons.append(
            reason(
                "run_complete",
                f"{who}: cases without a record",
                len(missing),
                0,
                not missing,
                f"{who}: {len(expected) - len(missing)} of {len(expected)} expected cases have a record"
                + (f"; missing {_shown(missing)}" if missing else ""),
            )
        )
        listed = manifest.cases_recorded
        if listed and set(listed) != recorded:
            differ = sorted(set(listed) ^ recorded)
            reasons.append(
                reason(
                    "run_complete",
                    f"{who}: cases_recorded that disagree with the records on disk",
                    len(differ),
                    0,
                    False,
                    f"{who}: run.json cases_recorded and the record files disagree on {_shown(differ)}",
                )
            )
        if extra:
            reasons.append(
                reason(
                    "run_complete",
                    f"{who}: records of unexpected cases",
                    len(extra),
                    0,
                    False,
                    f"{who}: {len(extra)} records are of cases run.json did not expect ({_shown(extra)})",
                )
            )
    infra = sorted({f"{a.case} ({a.error_reason})" for a in run.attempts if is_infrastructure(a)})
    reasons.append(
        reason(
            "no_infrastructure_errors",
            f"{who}: attempts with an infrastructure error",
            len(infra),
            0,
            not infra,
            f"{who}: {len(infra)} attempts errored for a reason outside the tool"
            + (f": {_shown(infra)}" if infra else ""),
        )
    )
    return reasons


def _pins(run: RunEvidence) -> dict[str, set[str | None]]:
    pins: dict[str, set[str | None]] = {}
    for attempt in run.attempts:
        for name, value in attempt.pins:
            if value is None and attempt.tier == "error":
                continue  # a step that never ran (the new SDK after a crashed fix) pins nothing
            pins.setdefault(f"{attempt.case}: {name}", set()).add(value)
    if run.manifest is not None:
        pins["run: interpreter_policy"] = {run.manifest.interpreter_policy}
        pins["run: exclude_newer"] = {run.manifest.exclude_newer}
    return pins


def _one(values: set[str | None]) -> str | None:
    return ", ".join(sorted(str(v) for v in values)) if values else None


def _records_say(name: str) -> Callable[[RunEvidence], str | None]:
    def read(run: RunEvidence) -> str | None:
        return _one({getattr(a, name) for a in run.attempts})

    return read


def _manifest_or_records(field: str, fallback: Callable[[RunEvidence], str | None]) -> Callable[[RunEvidence], Any]:
    def read(run: RunEvidence) -> Any:
        value = None if run.manifest is None else run.manifest.field(field)
        return fallback(run) if value is None else value

    return read


def _attempt_counts(run: RunEvidence) -> dict[str, int]:
    return {case: len(attempts) for case, attempts in by_case(run.attempts).items()}


#: What both runs must agree on, and where each is read: the manifest, else the records.
ENVIRONMENT_FIELDS: dict[str, Callable[[RunEvidence], Any]] = {
    "sandbox": _manifest_or_records("sandbox", _records_say("sandbox")),
    "harness.version": _manifest_or_records("harness.version", lambda run: None),
    "harness.commit": _manifest_or_records("harness.commit", lambda run: None),
    "case_keys_sha256": _manifest_or_records("case_keys_sha256", lambda run: None),
    "machine_class": _manifest_or_records("machine_class", _records_say("machine")),
}


def _environment(incumbent: RunEvidence, candidate: RunEvidence, keys_sha256: str | None) -> list[Reason]:
    reasons = []
    for name, read in ENVIRONMENT_FIELDS.items():
        first, second = read(incumbent), read(candidate)
        holds = first == second
        text = f"{name}: {first!r} and {second!r}" + ("" if holds else ": the runs differ")
        if holds and name == "case_keys_sha256" and keys_sha256 is not None and first != keys_sha256:
            holds, text = False, f"{name}: the runs registered {first!r}, the case file now hashes to {keys_sha256!r}"
        reasons.append(reason("same_environment", name, [first, second], "equal", holds, text))
    inc, cand = _attempt_counts(incumbent), _attempt_counts(candidate)
    differ = sorted(f"{c} ({inc[c]} vs {cand[c]})" for c in set(inc) & set(cand) if inc[c] != cand[c])
    reasons.append(
        reason(
            "same_attempts",
            "attempts per case",
            len(differ),
            0,
            not differ,
            f"{len(differ)} cases ran a different number of attempts" + (f": {_shown(differ)}" if differ else ""),
        )
    )
    return reasons


def comparability(
    policy: Policy, incumbent: RunEvidence, candidate: RunEvidence, now: datetime, keys_sha256: str | None = None
) -> list[Reason]:
    """Whether the two runs measured the same thing (see the module docstring)."""
    inc_cases, cand_cases = set(_attempt_counts(incumbent)), set(_attempt_counts(candidate))
    differing = sorted(inc_cases ^ cand_cases)
    reasons = [
        reason(
            "same_cases",
            "cases in only one run",
            len(differing),
            0,
            not differing,
            f"{len(differing)} cases are in only one run" + (f": {_shown(differing)}" if differing else ""),
        )
    ]
    inc_pins, cand_pins = _pins(incumbent), _pins(candidate)
    pin_problems = sorted(n for n in set(inc_pins) & set(cand_pins) if len(inc_pins[n] | cand_pins[n]) > 1)
    reasons.append(
        reason(
            "same_pins",
            "pins that differ (exclude_newer, SDK versions, interpreter, interpreter policy)",
            len(pin_problems),
            0,
            not pin_problems,
            f"{len(pin_problems)} pins differ between the runs" + (f": {_shown(pin_problems)}" if pin_problems else ""),
        )
    )
    reasons.extend(_environment(incumbent, candidate, keys_sha256))
    for run in (incumbent, candidate):
        counts = _attempt_counts(run)
        fewest = min(counts.values(), default=0)
        reasons.append(
            reason(
                "min_runs",
                f"{run.label}: fewest attempts of a case",
                fewest,
                policy.min_runs,
                fewest >= policy.min_runs,
                f"{run.label}: the fewest attempts of a case is {fewest}, min_runs is {policy.min_runs}",
            )
        )
        moment = _evidence_time(run)
        age = None if moment is None else (now - moment).total_seconds() / 86400
        reasons.append(
            reason(
                "evidence_age",
                f"{run.label}: age in days",
                None if age is None else round(age, 2),
                policy.max_evidence_age_days,
                age is not None and -1 < age <= policy.max_evidence_age_days,
                f"{run.label}: no time is recorded, so its age is unknown"
                if age is None
                else f"{run.label}: the evidence is {age:.1f} days old, "
                f"max_evidence_age_days is {policy.max_evidence_age_days}",
            )
        )
        if policy.require_holdout:
            holdout = len({a.case for a in run.attempts if a.split == "holdout" and not a.control})
            reasons.append(
                reason(
                    "holdout_included",
                    f"{run.label}: holdout cases",
                    holdout,
                    ">= 1",
                    holdout >= 1,
                    f"{run.label}: {holdout} holdout cases; the policy requires the holdout",
                )
            )
    return reasons


def _tree_states(run: RunEvidence) -> list[str]:
    """What of a run's code is not a commit: a dirty or unknown harness tree, a dirty tool checkout."""
    manifest = run.manifest
    if manifest is None:
        return []
    problems = []
    if manifest.harness.tree_dirty is not False:
        state = "dirty" if manifest.harness.tree_dirty else "not recorded"
        problems.append(f"{run.label}: the harness tree is {state}")
    tool = manifest.tool
    if tool is not None and tool.source == "checkout" and tool.tree_dirty is not False:
        state = "dirty" if tool.tree_dirty else "not recorded"
        problems.append(f"{run.label}: the tool checkout's tree is {state}")
    return problems


def _reruns(run: RunEvidence) -> tuple[list[str], list[str]]:
    """The attempts a rerun replaced: tool errors (which a rerun may not hide) and the others."""
    tool: list[str] = []
    other: list[str] = []
    for rerun in [] if run.manifest is None else run.manifest.reruns:
        for replaced in rerun.replaced:
            what = f"{replaced.case} ({replaced.reason or replaced.tier}, {rerun.kind} at {rerun.at})"
            (other if replaced.error_class == INFRASTRUCTURE else tool).append(what)
    return tool, other


def _tool_key(run: RunEvidence) -> tuple[str | None, str | None, str | None]:
    identity = run.identity()
    return identity["tool_version"], identity["tool_commit"], identity["pack_sha256"]


def same_measurement(incumbent: RunEvidence, candidate: RunEvidence) -> list[Reason]:
    """What makes a comparison meaningless or unfair, whatever the figures say.

    Code that is not a commit cannot be named; a rerun that replaced a tool error chose which
    measurement to keep; a model's edits belong to another arm (the protocol's headline measures
    the rules alone); and a candidate that is the incumbent (same version, commit and pack
    digest) has nothing to be compared with.
    """
    reasons = []
    for run in (incumbent, candidate):
        trees = _tree_states(run)
        reasons.append(
            reason("clean_trees", f"{run.label}: uncommitted code", len(trees), 0, not trees,
                   "; ".join(trees) if trees else f"{run.label}: the harness and tool trees are commits"),
        )  # fmt: skip
        tool_reruns, infra_reruns = _reruns(run)
        reasons.append(
            reason("no_rerun_tool_errors", f"{run.label}: tool errors a rerun replaced", len(tool_reruns), 0,
                   not tool_reruns,
                   f"{run.label}: {len(tool_reruns)} tool errors replaced by a rerun"
                   + (f": {_shown(tool_reruns)}" if tool_reruns else "")
                   + (f"; {len(infra_reruns)} infrastructure errors rerun: {_shown(infra_reruns)}" if infra_reruns
                      else "; no infrastructure error was rerun")),
        )  # fmt: skip
        used = sorted({a.case for a in run.attempts if (a.llm_tokens_in or 0) > 0})
        reasons.append(
            reason("no_model", f"{run.label}: cases whose tool used a model", len(used), 0, not used,
                   f"{run.label}: {len(used)} cases used a model (llm_tokens_in > 0)"
                   + (f": {_shown(used)}; a model's edits are another arm" if used else "")),
        )  # fmt: skip
    ours = _tool_key(candidate)
    same = _tool_key(incumbent) == ours and ours[0] is not None
    version, commit, pack = ours
    reasons.append(
        reason("distinct_candidate", "tool version, commit and pack sha256 of both runs", same, False, not same,
               f"the candidate is the incumbent's tool (version {version}, commit {commit}, pack sha256 "
               f"{(pack or 'null')[:16]}): two runs of one tool measure the harness, not a change"
               if same else f"the candidate's tool (version {version}, pack sha256 {(pack or 'null')[:16]}) "
               "differs from the incumbent's"),
    )  # fmt: skip
    return reasons
