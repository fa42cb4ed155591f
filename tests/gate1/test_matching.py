"""Matching scan findings against answer keys, and the sample-wide figures."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from pytest_obelize_bench.dryrun.outcomes import outcome, usage_count
from pytest_obelize_bench.gate1.labels import AnswerKey
from pytest_obelize_bench.gate1.matching import match_key, pooled
from pytest_obelize_bench.gate1.recall_figures import (
    NOT_A_USAGE,
    RESOLVED,
    UNRESOLVED,
    sample_figures,
    vocabulary_gaps,
    zero_bail_files,
)
from pytest_obelize_bench.measure.scanrecord import ScannedRepository

G = "google.generativeai"


@dataclass(frozen=True)
class F:
    path: str
    line: int
    kind: str
    symbol: str | None


def key(call_sites: list[tuple[str, int, str, str]], *, other: Any = (), forbidden: Any = ()) -> AnswerKey:
    return AnswerKey.model_validate(
        {
            "repository": "o/r",
            "url": "https://example.invalid/o/r",
            "sha": "a" * 40,
            "band": "size:<1000",
            "license": "MIT",
            "labeller": "someone",
            "labelled_at": "2026-01-01",
            "what_it_is": "a test key",
            "files_read": sorted({row[0] for row in call_sites} | {"app.py"}),
            "call_sites": [{"path": p, "line": n, "kind": k, "symbol": s} for p, n, k, s in call_sites],
            "expected_other": [{"path": p, "line": n, "kind": k, "symbol": s} for p, n, k, s in other],
            "must_not_report": [{"path": p, "line": n, "why": "a trap"} for p, n in forbidden],
        }
    )


def test_exact_rows_match_and_a_wrong_symbol_is_one_false_positive_and_one_miss() -> None:
    k = key(
        [
            ("app.py", 1, "import", G),
            ("app.py", 3, "call", f"{G}.configure"),
            ("app.py", 5, "call", f"{G}.GenerativeModel"),
        ]
    )
    found = [
        F("app.py", 1, "import", G),
        F("app.py", 3, "call", f"{G}.configure"),
        F("app.py", 5, "call", f"{G}.types.GenerationConfig"),  # right line, wrong symbol
    ]
    m = match_key(k, found)
    assert (m.true_positive, m.false_positive, m.missed) == (2, 1, 1)
    assert m.actionable.unexpected == [("app.py", 5, "call", f"{G}.types.GenerationConfig")]
    assert m.actionable.missing == [("app.py", 5, "call", f"{G}.GenerativeModel")]
    assert m.precision.format().startswith("66.7%") and m.recall.format().startswith("66.7%")


def test_rows_are_multisets_and_the_kind_must_match_too() -> None:
    k = key([("app.py", 7, "method_call", f"{G}.GenerativeModel.generate_content")] * 2)
    found = [
        F("app.py", 7, "method_call", f"{G}.GenerativeModel.generate_content"),
        F("app.py", 7, "attribute", f"{G}.GenerativeModel.generate_content"),
    ]
    m = match_key(k, found)
    assert (m.true_positive, m.false_positive, m.missed) == (1, 1, 1)


def test_other_kinds_are_tabled_apart_and_forbidden_positions_count_any_kind() -> None:
    k = key(
        [("app.py", 1, "import", G)],
        other=[("requirements.txt", 2, "manifest", "google-generativeai")],
        forbidden=[("app.py", 9), ("requirements.txt", 4)],
    )
    found = [
        F("app.py", 1, "import", G),
        F("requirements.txt", 2, "manifest", "google-generativeai"),
        F("requirements.txt", 2, "manifest", "google-genai"),
        F("app.py", 9, "text_mention", G),
        F("requirements.txt", 4, "manifest", "google-generativeai"),
    ]
    m = match_key(k, found)
    assert (m.true_positive, m.false_positive, m.missed) == (1, 0, 0)  # none of the others is actionable
    assert m.other.matched == [("requirements.txt", 2, "manifest", "google-generativeai")]
    assert len(m.other.unexpected) == 3
    assert [row[:2] for row in m.forbidden] == [("app.py", 9), ("requirements.txt", 4)]


def test_no_findings_prints_precision_as_dashes_never_a_hundred_percent() -> None:
    m = match_key(key([("app.py", 1, "import", G)]), [])
    assert m.precision.n == 0 and m.precision.format() == "--"
    assert m.recall.format() == "0.0% [0.0%, 79.3%]"


def test_pooled_rates_sum_counts_before_dividing() -> None:
    a = match_key(key([("app.py", 1, "import", G)] * 3), [F("app.py", 1, "import", G)] * 3)
    b = match_key(key([("app.py", 1, "import", G)]), [F("app.py", 2, "import", G)])
    precision, recall = pooled([a, b])
    assert (precision.k, precision.n, recall.k, recall.n) == (3, 4, 3, 4)


def repo(name: str, findings: list[dict[str, Any]], runtime: Any = None, error: str | None = None) -> ScannedRepository:
    rows = [
        {
            "path": "a.py",
            "line": 1,
            "column": 0,
            "kind": "import",
            "confidence_reason": "alias_resolved",
            "symbol": G,
            "scan_status": "eligible",
            **row,
        }
        for row in findings
    ]
    return ScannedRepository.model_validate(
        {
            "full_name": name,
            "sha": None,
            "band": "b",
            "counts": None,
            "runtime": runtime,
            "findings": rows,
            "seconds": None,
            "error": error,
        }
    )


def test_zero_bail_needs_an_eligible_actionable_row_and_nothing_withheld_in_the_file() -> None:
    clean = repo(
        "o/clean",
        [{}, {"path": "b.py"}, {"path": "b.py", "line": 2, "scan_status": "needs_review", "bail": "local_import"}],
    )
    mention_only = repo("o/mention", [{"kind": "text_mention", "confidence_reason": "string_or_comment_mention"}])
    assert zero_bail_files(clean) == ["a.py"]
    assert zero_bail_files(mention_only) == []


def test_sample_figures_count_repositories_reasons_and_declared_pythons() -> None:
    scanned = [
        repo(
            "o/a",
            [
                {},
                {
                    "confidence_reason": "receiver_unresolved",
                    "scan_status": "needs_review",
                    "bail": "receiver_unresolved",
                },
            ],
            runtime={"declared": ">=3.8", "path": "pyproject.toml", "blocked": True},
        ),
        repo(
            "o/b",
            [{}, {"kind": "manifest", "confidence_reason": "manifest_dependency"}],
            runtime={"declared": None, "blocked": False},
        ),
        repo("o/c", [], error="fetch failed"),
    ]
    f = sample_figures(scanned)
    assert (f.scanned, f.errored) == (2, 1)
    assert (f.zero_bail.k, f.zero_bail.n) == (1, 2)
    assert (f.resolved, f.unresolved, f.not_a_usage) == (2, 1, 1)
    assert (f.unresolved_share.k, f.unresolved_share.n) == (1, 3)
    assert f.declared == {">=3.8": 1} and f.declares_nothing == 1 and f.blocked == 1


def test_the_three_reason_sets_are_exactly_the_installed_obelize_vocabulary() -> None:
    """Fails when an obelize release adds or drops a confidence_reason: classify it first."""
    from obelize.models import vocabulary

    missing, stale = vocabulary_gaps(vocabulary.CONFIDENCE_REASONS)
    assert missing == [], f"obelize has confidence_reason values no set holds: {missing}"
    assert stale == [], f"the sets hold values obelize no longer has: {stale}"
    assert not (RESOLVED & UNRESOLVED) and not (RESOLVED & NOT_A_USAGE) and not (UNRESOLVED & NOT_A_USAGE)


def test_vocabulary_gaps_names_a_new_value_loudly() -> None:
    missing, stale = vocabulary_gaps([*RESOLVED, *UNRESOLVED, *NOT_A_USAGE, "receiver_guessed"])
    assert missing == ["receiver_guessed"] and stale == []


@pytest.mark.parametrize(
    ("blocked", "usages", "files", "withheld", "want"),
    [
        ("runtime_unsupported", 4, 0, 4, "blocked"),
        ("legacy_version_unsupported", 0, 0, 0, "blocked"),
        (None, 0, 0, 1, "none"),
        (None, 3, 0, 3, "held"),
        (None, 3, 2, 1, "partial"),
        (None, 3, 2, 0, "complete"),
    ],
)
def test_dry_run_outcomes_follow_the_protocol(
    blocked: str | None, usages: int, files: int, withheld: int, want: str
) -> None:
    assert outcome(blocked=blocked, usages=usages, files_planned=files, withheld=withheld) == want


def test_a_comment_mention_and_a_manifest_row_are_not_usages() -> None:
    assert usage_count(["text_mention", "manifest", "parse_error"]) == 0
    assert usage_count(["import", "dynamic", "star_import", "manifest"]) == 3
