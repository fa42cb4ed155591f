"""Grading: a case's key and what obelize wrote, in; the protocol's measurements, out.

Pure functions, no I/O.  Rows are multisets throughout (``collections.Counter``), because a key
may name one position twice and obelize may report or edit one position twice.

* A finding matches a key call site when path, line, kind and symbol are all equal; only the
  actionable kinds (import, call, method_call, attribute) are compared, whatever the finding's
  scan_status.  The right line with the wrong symbol is one false positive and one miss.
* A key row (call site of any kind, dynamic included, or manifest pin) is migrated when the run
  withheld nothing at its (path, line, symbol) and an ``auto`` edit landed on its line; an edit
  has landed when obelize also wrote its file (run.json ``file_edits``).
* An edit that landed on a line no key row names is a false-positive edit, counted as the
  multiset excess, so two auto edits on a line with one key row are one.  A negative control has
  no key: every edit that landed counts.
* With no artefacts (the case errored before obelize left anything readable) nothing obelize
  would have produced is reported: those fields are null, never zeros that look measured.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from pytest_obelize_bench.casefile.cases import ACTIONABLE_KINDS, Case
from pytest_obelize_bench.casefile.schema import Review
from pytest_obelize_bench.grading.graded_facts import Artefacts
from pytest_obelize_bench.grading.record import Measurements, SuiteResult

Row = tuple[str, int, str, str]
Position = tuple[str, int]


def _total(counter: Counter[Any]) -> int:
    return sum(counter.values())


def key_rows(case: Case) -> Counter[Row]:
    """The key's actionable call sites as a multiset of (path, line, kind, symbol)."""
    return Counter(
        (row.path, row.line, row.kind, row.symbol)
        for row in case.ground_truth.call_sites
        if row.kind in ACTIONABLE_KINDS
    )


def found_rows(artefacts: Artefacts) -> Counter[Row]:
    """Actionable findings of any scan_status, as a multiset of (path, line, kind, symbol)."""
    return Counter(
        (finding.path, finding.line, finding.kind, finding.symbol or "")
        for finding in artefacts.findings
        if finding.kind in ACTIONABLE_KINDS
    )


def expected_rows(case: Case) -> list[tuple[str, int, str]]:
    """Every row a complete migration changes: all call sites (dynamic too) and all manifest pins."""
    truth = case.ground_truth
    return [(row.path, row.line, row.symbol) for row in truth.call_sites] + [
        (row.path, row.line, row.symbol) for row in truth.manifests
    ]


def landed_positions(artefacts: Artefacts) -> Counter[Position]:
    """(path, line) of every ``auto`` edit whose file obelize wrote, as a multiset."""
    written = set(artefacts.written)
    return Counter((edit.path, edit.line) for edit in artefacts.edits if edit.status == "auto" and edit.path in written)


def _positions(rows: Iterable[tuple[str, int, str]]) -> Counter[Position]:
    return Counter((path, line) for path, line, _ in rows)


def grade(
    case: Case,
    artefacts: Artefacts | None,
    *,
    baseline: SuiteResult,
    after: SuiteResult,
    patch_compiles: bool | None,
    runtime_seconds: float | None,
    review: Review | None = None,
) -> Measurements:
    """The measurements of one case (protocol "Per-case result"); pure.

    ``baseline``/``after`` and ``runtime_seconds`` are kept as given (the harness measured them);
    the key's ``tests_cover_change`` and ``review``'s answers are copied, null when unanswered.
    ``review`` is the answer for this very patch (``casefile/reviews.review_for``), never the
    case's: an answer given to one patch says nothing of another.
    ``patch_compiles`` is kept only when there are artefacts: without a readable run folder
    nothing is known to have been written, so it is null too.
    """
    common: dict[str, Any] = {
        "tests_baseline": baseline,
        "tests_after": after,
        "tests_cover_change": case.ground_truth.tests_cover_change,
        "human_edits": None if review is None else review.human_edits,
        "patch_correct": None if review is None else review.patch_correct,
        "pr_opened": None,
        "pr_merged": None,
        "runtime_seconds": None if runtime_seconds is None else round(runtime_seconds, 3),
    }
    if artefacts is None:
        return Measurements(**common)

    key = key_rows(case)
    found = found_rows(artefacts)
    true_positive = _total(key & found)
    forbidden = {(row.path, row.line) for row in case.ground_truth.must_not_report}

    landed = landed_positions(artefacts)
    withheld = {(row.path, row.line, row.symbol or "") for row in artefacts.withheld}
    expected = [] if case.control else expected_rows(case)
    unmigrated = sum(
        1 for path, line, symbol in expected if (path, line, symbol) in withheld or landed[(path, line)] == 0
    )
    wanted = _positions(expected)

    if artefacts.model_used:
        tokens_in, tokens_out, cost = artefacts.llm_tokens_in, artefacts.llm_tokens_out, artefacts.llm_cost_usd
    else:
        tokens_in, tokens_out, cost = 0, 0, 0.0

    return Measurements(
        detected=_total(found),
        false_positive=_total(found) - true_positive,
        missed_call_site=_total(key) - true_positive,
        forbidden_reported=sum(1 for finding in artefacts.findings if (finding.path, finding.line) in forbidden),
        manifest_reported=sum(1 for finding in artefacts.findings if finding.kind == "manifest"),
        patch_applied=bool(artefacts.written),
        patch_compiles=patch_compiles,
        unmigrated=unmigrated,
        false_positive_edit=_total(landed - wanted),
        llm_tokens_in=tokens_in,
        llm_tokens_out=tokens_out,
        llm_cost_usd=cost,
        **common,
    )
