"""From a comparison record, its review and the round's records to both arms' scores; pure.

The record holds what the arms did and the three scans; the review says which edits were wrong;
the round's published records (same checkout, same obelize) give what the record does not carry
for round 1: the baseline suite, and obelize's runtime, compile check, after-run and the rows its
plan migrated.  A record this harness writes carries all of these itself and wins.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pytest_obelize_bench.casefile.cases import Case
from pytest_obelize_bench.comparison.review_file import ReviewFile, changed_files, patch_correct
from pytest_obelize_bench.comparison.rows import BASE, OBELIZE, CaseComparison, ComparisonRecord
from pytest_obelize_bench.comparison.score import (
    ArmCase,
    ArmInputs,
    ArmTotals,
    arm_totals,
    cleared_rows,
    key_triples,
    score_arm,
)
from pytest_obelize_bench.grading.record import SuiteResult


@dataclass(frozen=True)
class RoundFacts:
    """One case's facts from the round's published record, for what the comparison record lacks."""

    baseline: SuiteResult = field(default_factory=SuiteResult)
    obelize_after: SuiteResult | None = None
    obelize_runtime: float | None = None
    obelize_compiles: bool | None = None
    #: key rows minus the record's ``unmigrated``: what obelize's plan and withheld list say it migrated.
    obelize_migrated: int | None = None


@dataclass(frozen=True)
class Calibration:
    """Obelize's scan-cleared rows against what its plan and withheld list say, on one case."""

    case: str
    scan_cleared: int
    plan_migrated: int | None

    @property
    def agrees(self) -> bool | None:
        return None if self.plan_migrated is None else self.scan_cleared == self.plan_migrated


@dataclass(frozen=True)
class RepeatRow:
    case: str
    files: tuple[int, int]
    lines: tuple[int, int]
    cleared: tuple[int, int]


@dataclass(frozen=True)
class ComparisonScore:
    record: ComparisonRecord
    agent: str
    scores: Mapping[str, list[ArmCase]]
    totals: Mapping[str, ArmTotals]
    calibration: list[Calibration]
    repeats: list[RepeatRow]
    reviewed: bool


def _arm_inputs(
    record: ComparisonRecord, review: ReviewFile | None, arm: str, case: str, facts: RoundFacts
) -> ArmInputs:
    row: CaseComparison = record.cases[case]
    changed = sorted(changed_files(record, arm, case))
    one = review.of(arm, case) if review is not None else None
    error = next((f"{e.step}: {e.reason}" for e in row.errors if e.arm == arm), None)
    own = row.obelize
    if arm != OBELIZE:
        compiles, deleted, runtime = row.compiles, list(row.missing_key_files), row.runtime_seconds
        after = row.tests_after.suite() if row.tests_after is not None else None
    elif own is not None:
        compiles, deleted, runtime = own.compiles, list(own.missing_key_files), own.runtime_seconds
        after = own.tests_after if own.tests_after is not None else facts.obelize_after
    else:
        compiles, deleted, runtime, after = facts.obelize_compiles, [], facts.obelize_runtime, facts.obelize_after
    return ArmInputs(
        findings=row.findings.get(arm),
        changed=changed,
        compiles=compiles,
        missing_key_files=deleted,
        runtime_seconds=runtime,
        tests_after=after,
        patch_correct=patch_correct(one, set(changed)),
        rejected=len(one.wrong) if one is not None else 0,
        error=error,
    )


def _lines(changes: list[tuple[int | None, int | None]]) -> int:
    return sum((added or 0) + (removed or 0) for added, removed in changes)


def assemble(
    record: ComparisonRecord,
    review: ReviewFile | None,
    cases: Mapping[str, Case],
    facts: Mapping[str, RoundFacts],
) -> ComparisonScore:
    """Score both arms on every case of the record; ``ValueError`` for a case with no key."""
    missing = sorted(set(record.cases) - set(cases))
    if missing:
        raise ValueError(f"comparison round {record.round}: case {missing[0]} is not in the case file")
    agent = record.agent
    scores: dict[str, list[ArmCase]] = {agent: [], OBELIZE: []}
    calibration: list[Calibration] = []
    repeats: list[RepeatRow] = []
    for case_id in sorted(record.cases):
        case, row, fact = cases[case_id], record.cases[case_id], facts.get(case_id, RoundFacts())
        baseline = row.tests_baseline or fact.baseline
        base = row.findings.get(BASE)
        for arm in (agent, OBELIZE):
            inputs = _arm_inputs(record, review, arm, case_id, fact)
            scores[arm].append(score_arm(case, base, inputs, baseline, rules=arm == OBELIZE))
        ours = scores[OBELIZE][-1]
        if ours.error is None:
            planned = row.obelize.plan_migrated if row.obelize is not None else fact.obelize_migrated
            calibration.append(Calibration(case_id, ours.cleared, planned))
        if row.repeat is not None and base is not None and agent in row.findings:
            key = key_triples(case)
            first = [(c.added, c.removed) for c in row.changes]
            second = [(c.added, c.removed) for c in row.repeat.changes]
            repeats.append(
                RepeatRow(
                    case=case_id,
                    files=(len(row.changes), len(row.repeat.changes)),
                    lines=(_lines(first), _lines(second)),
                    cleared=(
                        cleared_rows(key, base, row.findings[agent], row.missing_key_files).cleared,
                        cleared_rows(key, base, row.repeat.findings).cleared,
                    ),
                )
            )
    totals = {arm: arm_totals(arm_scores) for arm, arm_scores in scores.items()}
    return ComparisonScore(record, agent, scores, totals, calibration, repeats, reviewed=review is not None)


__all__ = ["Calibration", "ComparisonScore", "RepeatRow", "RoundFacts", "assemble"]
