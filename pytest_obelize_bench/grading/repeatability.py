"""How far repeated attempts of one case agree: tier stability, pass^k, flakiness.

Under ``--bench-repeat=K`` every case runs K times from the same bytes, each in a fresh tree.
A deterministic tool on a deterministic suite gives K identical attempts; anything else is
either the harness, the machine or the repository's suite, and it has to be visible rather than
averaged away. So, per case:

* the tiers the attempts reached, and how many reached each;
* pass^k for k = 1..K (``stats.pass_hat_k``): the chance that k attempts all reach
  ``verified_success``; an errored attempt is a run that did not succeed and stays in n;
* ``flaky`` when the attempts disagree on the tier, or the baseline suite's status differs
  between attempts (a flaky baseline is reported on its own: it is the repository's suite, not
  the tool, and it never silently counts as a success or a failure);
* the protocol's repeatability comparison: files touched, lines changed and rows migrated, which
  a rerun from the same bytes must reproduce.

Pure: the facts come in already read (``attempt_facts`` builds them from a record and its stored
graded facts), nothing here touches the disk.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_obelize_bench._util.stats import pass_hat_k_series
from pytest_obelize_bench.grading.grade import landed_positions
from pytest_obelize_bench.grading.graded_facts import Artefacts
from pytest_obelize_bench.grading.record import TIERS, Record
from pytest_obelize_bench.grading.tiers import control_held, tier

__all__ = [
    "SUCCESS",
    "AttemptFacts",
    "CaseRepeatability",
    "RoundRepeatability",
    "attempt_facts",
    "by_case",
    "case_repeatability",
    "round_repeatability",
]

SUCCESS = "verified_success"


@dataclass(frozen=True)
class AttemptFacts:
    """What one attempt of one case showed, as far as repeatability and promotion need it.

    ``rows_migrated`` is the key's rows minus ``unmigrated``, 0 for an errored attempt (it
    migrated nothing that was measured), None when the key's row count is not known.
    ``files_touched`` and ``lines_changed`` come from the stored graded facts, None without them.
    """

    case: str
    attempt: int
    tier: str
    control: bool
    split: str | None
    error_reason: str | None
    baseline_status: str
    after_status: str
    unmigrated: int | None
    rows_migrated: int | None
    files_touched: tuple[str, ...] | None
    lines_changed: int | None
    runtime_seconds: float | None
    run_at: str | None = None
    pins: tuple[tuple[str, str | None], ...] = ()
    error_step: str | None = None
    #: What the scan and the patch did wrong, for the promotion's controls veto; None unmeasured.
    false_positive: int | None = None
    forbidden_reported: int | None = None
    false_positive_edit: int | None = None
    #: ``tiers.control_held`` of a negative control (None for a case, or when not known).
    control_held: bool | None = None
    #: The run's identity, for comparing two runs: ``provenance.sandbox``, ``machine`` and ``os``.
    sandbox: str | None = None
    machine: str | None = None
    #: sha256 of the patch obelize wrote (``patch.diff``); None when not recorded.
    patch_sha256: str | None = None
    #: The rows the key asks to migrate (None when not known), for a per-case share of rows.
    rows_total: int | None = None
    #: A patch whose tier waits on a review: nobody answered for this patch, and an answer
    #: (no edits, correct) would move its tier. Missing evidence, never a result.
    review_pending: bool = False
    #: ``llm_tokens_in`` of the record: a model's attempt belongs to another arm.
    llm_tokens_in: int | None = None

    @property
    def succeeded(self) -> bool:
        return self.tier == SUCCESS


def attempt_facts(record: Record, *, rows_total: int | None, artefacts: Artefacts | None) -> AttemptFacts:
    """The facts of one record; ``rows_total`` is the number of rows its key asks to migrate."""
    m = record.measurements
    if rows_total is None:
        migrated = None
    elif record.error is not None or m.unmigrated is None:
        migrated = 0
    else:
        migrated = max(0, rows_total - m.unmigrated)
    touched = None if artefacts is None else tuple(sorted(set(artefacts.written)))
    lines = None if artefacts is None else len(set(landed_positions(artefacts)))
    p = record.provenance
    pins = (
        ("exclude_newer", p.exclude_newer),
        ("sdk_from", p.sdk_from),
        ("sdk_to", p.sdk_to),
        ("python", p.python_used or p.python),
    )
    return AttemptFacts(
        case=record.case,
        attempt=record.attempt_number,
        tier=record.tier,
        control=record.control,
        split=record.split,
        error_reason=None if record.error is None else record.error.reason,
        baseline_status=m.tests_baseline.status,
        after_status=m.tests_after.status,
        unmigrated=m.unmigrated,
        rows_migrated=migrated,
        files_touched=touched,
        lines_changed=lines,
        runtime_seconds=m.runtime_seconds,
        run_at=p.run_at,
        pins=pins,
        error_step=None if record.error is None else record.error.step,
        false_positive=m.false_positive,
        forbidden_reported=m.forbidden_reported,
        false_positive_edit=m.false_positive_edit,
        control_held=control_held(record.error, m) if record.control else None,
        sandbox=p.sandbox,
        machine=None if p.machine is None and p.os is None else f"{p.os or '?'} {p.machine or '?'}",
        patch_sha256=p.patch_sha256,
        rows_total=rows_total,
        review_pending=review_pending(record),
        llm_tokens_in=m.llm_tokens_in,
    )


def review_pending(record: Record) -> bool:
    """Whether the record's tier waits on a review of its patch (see ``AttemptFacts``)."""
    m = record.measurements
    if record.error is not None or m.patch_applied is not True:
        return False
    if m.human_edits is not None and m.patch_correct is not None:
        return False
    answered = m.model_copy(update={"human_edits": 0, "patch_correct": True})
    return tier(None, answered) != record.tier


@dataclass(frozen=True)
class CaseRepeatability:
    """One case over its attempts (see the module docstring)."""

    case: str
    control: bool
    attempts: tuple[AttemptFacts, ...]
    tier_counts: Mapping[str, int]
    successes: int
    pass_hat: tuple[float | None, ...]
    flaky: bool
    flaky_reasons: tuple[str, ...]
    baseline_flaky: bool
    differences: tuple[str, ...]

    @property
    def n(self) -> int:
        return len(self.attempts)

    def stability(self) -> str:
        """``verified_success 2, patched_unverified 1``: each tier reached, most often first."""
        ordered = sorted(self.tier_counts.items(), key=lambda item: (-item[1], TIERS.index(item[0])))
        return ", ".join(f"{tier} {count}" for tier, count in ordered)

    def as_dict(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "control": self.control,
            "attempts": self.n,
            "tiers": [a.tier for a in self.attempts],
            "tier_counts": dict(self.tier_counts),
            "verified_success": self.successes,
            "pass_hat_k": {str(k): value for k, value in enumerate(self.pass_hat, start=1)},
            "flaky": self.flaky,
            "flaky_reasons": list(self.flaky_reasons),
            "baseline_flaky": self.baseline_flaky,
            "differences": list(self.differences),
        }


def _differing(label: str, values: Sequence[Any]) -> str | None:
    """``label: 3 / 3 / 4`` when the attempts' values differ (unknowns are not a difference)."""
    known = [v for v in values if v is not None]
    if len(set(known)) <= 1:
        return None
    if all(isinstance(v, tuple) for v in known) and len({len(v) for v in known}) == 1:
        return f"{label}: same count, different files"
    shown = " / ".join("--" if v is None else (str(len(v)) if isinstance(v, tuple) else str(v)) for v in values)
    return f"{label}: {shown}"


def case_repeatability(attempts: Sequence[AttemptFacts]) -> CaseRepeatability:
    """The repeatability of one case from its attempts (any order; one case only)."""
    if not attempts:
        raise ValueError("a case needs at least one attempt")
    cases = {a.case for a in attempts}
    if len(cases) != 1:
        raise ValueError(f"attempts of several cases given together: {sorted(cases)}")
    ordered = tuple(sorted(attempts, key=lambda a: a.attempt))
    numbers = [a.attempt for a in ordered]
    if len(set(numbers)) != len(numbers):
        raise ValueError(f"{ordered[0].case}: attempt numbers repeat: {numbers}")
    counts = Counter(a.tier for a in ordered)
    successes = counts.get(SUCCESS, 0)
    n = len(ordered)
    reasons = []
    if len(counts) > 1:
        reasons.append("tiers differ: " + " / ".join(a.tier for a in ordered))
    baselines = [a.baseline_status for a in ordered]
    baseline_flaky = len(set(baselines)) > 1
    if baseline_flaky:
        reasons.append("baseline suite differs: " + " / ".join(baselines))
    differences = [
        text
        for text in (
            _differing("files touched", [a.files_touched for a in ordered]),
            _differing("lines changed", [a.lines_changed for a in ordered]),
            _differing("rows migrated", [a.rows_migrated for a in ordered]),
        )
        if text is not None
    ]
    return CaseRepeatability(
        case=ordered[0].case,
        control=ordered[0].control,
        attempts=ordered,
        tier_counts=dict(counts),
        successes=successes,
        pass_hat=pass_hat_k_series(successes, n, n),
        flaky=bool(reasons),
        flaky_reasons=tuple(reasons),
        baseline_flaky=baseline_flaky,
        differences=tuple(differences),
    )


@dataclass(frozen=True)
class RoundRepeatability:
    """Every case of a round over its attempts, and pass^k over the graded cases."""

    cases: tuple[CaseRepeatability, ...]
    most_attempts: int
    pass_hat: tuple[float | None, ...]
    graded_cases: int

    @property
    def repeated(self) -> bool:
        """Whether any case ran more than once: only then is there anything to report."""
        return self.most_attempts > 1

    @property
    def flaky(self) -> tuple[CaseRepeatability, ...]:
        return tuple(c for c in self.cases if c.flaky)

    @property
    def baseline_flaky(self) -> tuple[CaseRepeatability, ...]:
        return tuple(c for c in self.cases if c.baseline_flaky)

    def as_dict(self) -> dict[str, Any]:
        return {
            "most_attempts": self.most_attempts,
            "graded_cases": self.graded_cases,
            "pass_hat_k": {str(k): value for k, value in enumerate(self.pass_hat, start=1)},
            "flaky": [c.case for c in self.flaky],
            "baseline_flaky": [c.case for c in self.baseline_flaky],
            "cases": [c.as_dict() for c in self.cases],
        }


def by_case(attempts: Iterable[AttemptFacts]) -> dict[str, list[AttemptFacts]]:
    """Each case's attempts, in the order given: the unit of evidence is the case, not the attempt."""
    grouped: dict[str, list[AttemptFacts]] = {}
    for attempt in attempts:
        grouped.setdefault(attempt.case, []).append(attempt)
    return grouped


def round_repeatability(attempts: Iterable[AttemptFacts]) -> RoundRepeatability:
    """Group attempts by case; pass^k is the mean over graded cases (controls have no rate).

    A case with fewer than k attempts has no pass^k estimate and is left out of that k's mean,
    never counted as 0.
    """
    grouped = by_case(attempts)
    cases = tuple(case_repeatability(grouped[case]) for case in sorted(grouped))
    most = max((c.n for c in cases), default=0)
    graded = [c for c in cases if not c.control]
    means: list[float | None] = []
    for k in range(1, most + 1):
        estimates = [value for c in graded if len(c.pass_hat) >= k and (value := c.pass_hat[k - 1]) is not None]
        means.append(math.fsum(estimates) / len(estimates) if estimates else None)
    return RoundRepeatability(cases=cases, most_attempts=most, pass_hat=tuple(means), graded_cases=len(graded))
