"""The comparison's scorer: both arms, one instrument, pure functions.

A key row is cleared when the scan of an arm's tree no longer reports it, matched on
(path, kind, symbol) because edits move lines; the key's ``dynamic`` is the scanner's
``text_mention`` and a manifest pin is its ``manifest``.  Rows are multisets.  A row the scan
misses on the untouched tree is credited to neither arm but stays in both arms' corrections, and
a row in a key file the arm deleted is not cleared by the deletion.

The tier is the round's ladder without the two conditions that read obelize's findings
document (``false_positive`` and ``missed_call_site``), which an agent does not write; the
ceiling caps an agent only where no arm could verify the case (no test command, tests that do not
cover the change), while a manual or flagged row caps only the rules.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pytest_obelize_bench._util.stats import Rate, rate_of, rate_over_clusters
from pytest_obelize_bench.casefile.cases import Case
from pytest_obelize_bench.comparison.rows import Finding
from pytest_obelize_bench.grading.record import SuiteResult, Tier
from pytest_obelize_bench.grading.tiers import ceiling

#: (path, kind, symbol): what a scan row and a key row are matched on.
Triple = tuple[str, str, str | None]

_KEY_KIND = {"dynamic": "text_mention"}


def key_triples(case: Case) -> list[Triple]:
    """Every key row (call sites and manifest pins) as the scanner would name it."""
    truth = case.ground_truth
    rows: list[Triple] = [(row.path, _KEY_KIND.get(row.kind, row.kind), row.symbol) for row in truth.call_sites]
    rows.extend((row.path, "manifest", row.symbol) for row in truth.manifests)
    return rows


def scan_triples(findings: Iterable[Finding]) -> Counter[Triple]:
    return Counter((path, kind, symbol) for path, _line, kind, symbol in findings)


@dataclass(frozen=True)
class Cleared:
    """One arm's rows on one case, as the scans count them."""

    key_rows: int
    seen: int
    cleared: int
    added: int

    @property
    def left(self) -> int:
        """Key rows still legacy, including those the base scan never saw."""
        return self.key_rows - self.cleared


def cleared_rows(
    key: Sequence[Triple],
    base: Iterable[Finding],
    after: Iterable[Finding],
    deleted: Iterable[str] = (),
) -> Cleared:
    """Key rows the base scan reports and the after scan does not; legacy usage the arm added.

    Where a triple is reported more often than the key names it, the reports the key does not
    name are taken to be the ones that remain (every free choice favours the arm).  Added usage
    counts only rows under the case's legacy names, so the new SDK's pin is not one.
    """
    want, before, now = Counter(key), scan_triples(base), scan_triples(after)
    gone = set(deleted)
    seen = want & before
    cleared = 0
    for triple, count in seen.items():
        if triple[0] in gone:
            continue
        extra = before[triple] - count
        cleared += count - min(count, max(0, now[triple] - extra))
    roots = _legacy_roots(list(want) + list(before))
    added = sum(count for triple, count in (now - before).items() if _is_legacy(triple[2], roots))
    return Cleared(key_rows=sum(want.values()), seen=sum(seen.values()), cleared=cleared, added=added)


def _legacy_roots(triples: Iterable[Triple]) -> set[str]:
    """The legacy names of a case: the first two parts of every key and base-scan symbol."""
    return {".".join(symbol.split(".")[:2]) for _, _, symbol in triples if symbol}


def _is_legacy(symbol: str | None, roots: set[str]) -> bool:
    """A symbol under a legacy name (``google.generativeai...``, the ``google-generativeai`` pin);
    the new SDK's pin an arm writes is not legacy usage."""
    return symbol is not None and any(symbol == root or symbol.startswith(root + ".") for root in roots)


@dataclass(frozen=True)
class ArmInputs:
    """What one arm did on one case, as measured; ``error`` set when it measured nothing."""

    findings: Sequence[Finding] | None
    changed: Sequence[str]
    compiles: bool | None
    missing_key_files: Sequence[str]
    runtime_seconds: float | None
    tests_after: SuiteResult | None
    patch_correct: bool | None
    rejected: int
    error: str | None = None


@dataclass(frozen=True)
class ArmCase:
    """One arm's score on one case."""

    case: str
    key_rows: int
    seen: int
    cleared: int
    left: int
    added: int
    corrections: int
    files: int
    files_off_key: int
    runtime_seconds: float | None
    tier: Tier
    ceiling: str | None
    error: str | None
    #: whether the arm's tree compiled and what its suite did after it, as scored (a case's page shows them)
    compiles: bool | None = None
    tests_after: SuiteResult | None = None


def comparison_tier(
    *,
    error: str | None,
    changed: bool,
    compiles: bool | None,
    patch_correct: bool | None,
    left: int,
    baseline: SuiteResult,
    after: SuiteResult,
    covers: bool,
) -> Tier:
    """The round's ladder, tried in order, without the findings-document conditions."""
    if error is not None:
        return "error"
    regressed = changed and baseline.status == "pass" and after.status == "fail"
    if patch_correct is False or compiles is False or regressed:
        return "wrong"
    if not changed:
        return "unsupported"
    if left > 0:
        return "partial"
    ran_something = after.passed is None or after.passed > 0
    verified = (
        patch_correct is True and baseline.status == "pass" and after.status == "pass" and ran_something and covers
    )
    return "verified_success" if verified else "patched_unverified"


def score_arm(
    case: Case, base: Sequence[Finding] | None, arm: ArmInputs, baseline: SuiteResult, *, rules: bool
) -> ArmCase:
    """One arm on one case: rows cleared, corrections, files, runtime, tier and ceiling."""
    key = key_triples(case)
    key_paths = {triple[0] for triple in key}
    if arm.error is not None or base is None or arm.findings is None:
        reason = arm.error or "no scan"
        return ArmCase(
            case=case.id, key_rows=len(key), seen=0, cleared=0, left=len(key), added=0,
            corrections=len(key) + arm.rejected, files=len(arm.changed),
            files_off_key=len(set(arm.changed) - key_paths), runtime_seconds=arm.runtime_seconds,
            tier="error", ceiling=ceiling(case, reviewed=None, rules=rules), error=reason,
            compiles=arm.compiles, tests_after=arm.tests_after,
        )  # fmt: skip
    rows = cleared_rows(key, base, arm.findings, arm.missing_key_files)
    after = arm.tests_after or SuiteResult()
    tier = comparison_tier(
        error=None,
        changed=bool(arm.changed),
        compiles=arm.compiles,
        patch_correct=arm.patch_correct,
        left=rows.left,
        baseline=baseline,
        after=after,
        covers=case.ground_truth.tests_cover_change is True,
    )
    return ArmCase(
        case=case.id,
        key_rows=rows.key_rows,
        seen=rows.seen,
        cleared=rows.cleared,
        left=rows.left,
        added=rows.added,
        corrections=rows.left + arm.rejected,
        files=len(arm.changed),
        files_off_key=len(set(arm.changed) - key_paths),
        runtime_seconds=arm.runtime_seconds,
        tier=tier,
        ceiling=ceiling(case, reviewed=None, rules=rules),
        error=None,
        compiles=arm.compiles,
        tests_after=arm.tests_after,
    )


@dataclass(frozen=True)
class ArmTotals:
    """An arm over the comparison's cases (the unit of evidence is the case)."""

    cases: int
    verified: Rate
    ceiling_open: int
    key_rows: int
    cleared: int
    added: int
    corrections: int
    accuracy: Rate
    runtime_total: float | None
    runtime_median: float | None
    tiers: Mapping[str, int]


def _median(values: Sequence[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def case_accuracy(score: ArmCase) -> float:
    """One case's accuracy, its rows cleared over its key rows plus legacy added (0 when it has none)."""
    rows = score.key_rows + score.added
    return score.cleared / rows if rows else 0.0


def arm_totals(scores: Sequence[ArmCase]) -> ArmTotals:
    """Totals over cases; accuracy is rows cleared over key rows plus legacy usage added."""
    runtimes = [score.runtime_seconds for score in scores if score.runtime_seconds is not None]
    key_rows = sum(score.key_rows for score in scores)
    cleared = sum(score.cleared for score in scores)
    added = sum(score.added for score in scores)
    return ArmTotals(
        cases=len(scores),
        verified=rate_of(sum(score.tier == "verified_success" for score in scores), len(scores)),
        ceiling_open=sum(score.ceiling is None for score in scores),
        key_rows=key_rows,
        cleared=cleared,
        added=added,
        corrections=sum(score.corrections for score in scores),
        # rows sit in repositories (one case each): the interval is by repository, not by row
        accuracy=rate_over_clusters([(score.cleared, score.key_rows + score.added) for score in scores]),
        runtime_total=sum(runtimes) if runtimes else None,
        runtime_median=_median(runtimes),
        tiers=dict(Counter(score.tier for score in scores)),
    )


__all__ = [
    "ArmCase",
    "ArmInputs",
    "ArmTotals",
    "Cleared",
    "Triple",
    "arm_totals",
    "case_accuracy",
    "cleared_rows",
    "comparison_tier",
    "key_triples",
    "scan_triples",
    "score_arm",
]
