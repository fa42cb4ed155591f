"""Scan findings against an answer key: the Gate 1 definitions, as pure functions.

A finding matches a labelled call site when path, line, kind and the fully qualified symbol are
all equal, and both sides are multisets, so a line labelled twice needs two findings.  The right
line with the wrong symbol is therefore one false positive and one miss.  Only the actionable kinds
enter precision and recall; the other kinds are tabled against ``expected_other``, and a finding of
any kind at a ``must_not_report`` position is counted as forbidden.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from pytest_obelize_bench._util.stats import Rate, rate_of, rate_over_clusters
from pytest_obelize_bench.gate1.labels import ACTIONABLE_KINDS, AnswerKey

Row = tuple[str, int, str, str | None]


class FindingLike(Protocol):
    @property
    def path(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def symbol(self) -> str | None: ...


def _row(finding: FindingLike) -> Row:
    return (finding.path, finding.line, finding.kind, finding.symbol)


def _sorted(rows: Counter[Row]) -> list[Row]:
    return sorted(rows.elements(), key=lambda row: (row[0], row[1], row[2], row[3] or ""))


@dataclass(frozen=True)
class Comparison:
    """One multiset against another: what both hold, and what each holds beyond the other."""

    matched: list[Row]
    unexpected: list[Row]
    missing: list[Row]


def compare(expected: Iterable[Row], found: Iterable[Row]) -> Comparison:
    want, got = Counter(expected), Counter(found)
    both = want & got
    return Comparison(matched=_sorted(both), unexpected=_sorted(got - both), missing=_sorted(want - both))


@dataclass(frozen=True)
class KeyMatch:
    """A labelled repository's scan against its key."""

    actionable: Comparison
    other: Comparison
    forbidden: list[Row] = field(default_factory=list)

    @property
    def true_positive(self) -> int:
        return len(self.actionable.matched)

    @property
    def false_positive(self) -> int:
        return len(self.actionable.unexpected)

    @property
    def missed(self) -> int:
        return len(self.actionable.missing)

    @property
    def labelled(self) -> int:
        return self.true_positive + self.missed

    @property
    def findings(self) -> int:
        return self.true_positive + self.false_positive

    @property
    def precision(self) -> Rate:
        """TP / (TP + FP); n is 0 (printed ``--``, never 100%) when there are no findings."""
        return rate_of(self.true_positive, self.findings)

    @property
    def recall(self) -> Rate:
        return rate_of(self.true_positive, self.labelled)


def match_key(key: AnswerKey, findings: Iterable[FindingLike]) -> KeyMatch:
    rows = [_row(finding) for finding in findings]
    actionable = [row for row in rows if row[2] in ACTIONABLE_KINDS]
    other = [row for row in rows if row[2] not in ACTIONABLE_KINDS]
    forbidden_at = {(row.path, row.line) for row in key.must_not_report}
    return KeyMatch(
        actionable=compare(((r.path, r.line, r.kind, r.symbol) for r in key.call_sites), actionable),
        other=compare(((r.path, r.line, r.kind, r.symbol) for r in key.expected_other), other),
        forbidden=sorted((row for row in rows if (row[0], row[1]) in forbidden_at), key=lambda r: (r[0], r[1], r[2])),
    )


def pooled(matches: Iterable[KeyMatch]) -> tuple[Rate, Rate]:
    """Precision and recall over the union of the keys' rows (counts summed, then divided).

    Each key is one repository, and its rows stand or fall together (one unresolved import
    withholds a file), so the interval is by repository (``stats.rate_over_clusters``).
    """
    keys = list(matches)
    precision = rate_over_clusters([(one.true_positive, one.findings) for one in keys])
    recall = rate_over_clusters([(one.true_positive, one.labelled) for one in keys])
    return precision, recall


__all__ = ["Comparison", "KeyMatch", "Row", "compare", "match_key", "pooled"]
