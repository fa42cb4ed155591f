"""The sample-wide Gate 1 figures, over every scanned repository: pure functions of the records.

* repositories with at least one zero-bail file: a file with an actionable ``eligible`` finding
  and nothing in it withheld at scan time (``needs_review`` or ``unsupported``), because one bail
  withholds the whole file and no rule acts on a text mention;
* the unresolved share: findings whose ``confidence_reason`` is in the unresolved set, over those
  in either set (the reasons that are not a usage are in neither);
* what each repository declares about its Python.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pytest_obelize_bench._util.stats import Rate, rate_of, rate_over_clusters
from pytest_obelize_bench.gate1.labels import ACTIONABLE_KINDS
from pytest_obelize_bench.measure.scanrecord import ScannedRepository

#: The protocol's resolved set, plus ``receiver_typed_by_class``, which obelize added after the
#: protocol was written: the scanner typed the receiver as an instance of a class it resolved, so
#: the binding is known statically.
RESOLVED: frozenset[str] = frozenset(
    {
        "direct_import_resolved",
        "alias_resolved",
        "from_import_resolved",
        "receiver_bound_same_scope",
        "receiver_bound_module_const",
        "receiver_bound_self_attr",
        "receiver_typed_by_class",
    }
)
#: Reasons the protocol does not list, and the set this project put them in.
CLASSIFIED_SINCE_PROTOCOL: dict[str, str] = {"receiver_typed_by_class": "resolved"}
UNRESOLVED: frozenset[str] = frozenset(
    {
        "conditional_binding",
        "module_alias_rebound",
        "receiver_unresolved",
        "dynamic_access",
        "star_import",
        "star_import_candidate",
    }
)
NOT_A_USAGE: frozenset[str] = frozenset(
    {"string_or_comment_mention", "mock_patch_target", "manifest_dependency", "parse_error"}
)
WITHHELD_STATUSES: frozenset[str] = frozenset({"needs_review", "unsupported"})


def zero_bail_files(repo: ScannedRepository) -> list[str]:
    """The repository's files with an actionable eligible finding and nothing withheld."""
    eligible: set[str] = set()
    withheld: set[str] = set()
    for finding in repo.findings:
        if finding.scan_status in WITHHELD_STATUSES:
            withheld.add(finding.path)
        elif finding.scan_status == "eligible" and finding.kind in ACTIONABLE_KINDS:
            eligible.add(finding.path)
    return sorted(eligible - withheld)


@dataclass(frozen=True)
class SampleFigures:
    scanned: int
    errored: int
    zero_bail: Rate
    zero_bail_files: int
    resolved: int
    unresolved: int
    not_a_usage: int
    unknown_reasons: dict[str, int]
    unresolved_share: Rate
    unresolved_reasons: dict[str, int]
    declared: dict[str, int]
    declares_nothing: int
    not_asked: int
    blocked: int


def _unresolved_of(repo: ScannedRepository) -> tuple[int, int]:
    """A repository's unresolved usages, of its resolved and unresolved ones."""
    reasons = [finding.confidence_reason for finding in repo.findings]
    unresolved = sum(reason in UNRESOLVED for reason in reasons)
    return unresolved, unresolved + sum(reason in RESOLVED for reason in reasons)


def sample_figures(scanned: Sequence[ScannedRepository]) -> SampleFigures:
    ok = [repo for repo in scanned if repo.error is None]
    with_zero = [repo for repo in ok if zero_bail_files(repo)]
    reasons: Counter[str] = Counter(finding.confidence_reason for repo in ok for finding in repo.findings)
    resolved = sum(n for reason, n in reasons.items() if reason in RESOLVED)
    unresolved = sum(n for reason, n in reasons.items() if reason in UNRESOLVED)
    not_usage = sum(n for reason, n in reasons.items() if reason in NOT_A_USAGE)
    known = RESOLVED | UNRESOLVED | NOT_A_USAGE
    declared: Counter[str] = Counter()
    nothing = not_asked = blocked = 0
    for repo in ok:
        if repo.runtime is None:
            not_asked += 1
            continue
        blocked += repo.runtime.blocked
        if repo.runtime.declared is None:
            nothing += 1
        else:
            declared[repo.runtime.declared] += 1
    return SampleFigures(
        scanned=len(ok),
        errored=len(scanned) - len(ok),
        zero_bail=rate_of(len(with_zero), len(ok)),
        zero_bail_files=sum(len(zero_bail_files(repo)) for repo in ok),
        resolved=resolved,
        unresolved=unresolved,
        not_a_usage=not_usage,
        unknown_reasons={reason: n for reason, n in sorted(reasons.items()) if reason not in known},
        # usages sit in repositories: the share's interval is by repository, not by usage
        unresolved_share=rate_over_clusters([_unresolved_of(repo) for repo in ok]),
        unresolved_reasons={reason: n for reason, n in sorted(reasons.items()) if reason in UNRESOLVED},
        declared=dict(sorted(declared.items())),
        declares_nothing=nothing,
        not_asked=not_asked,
        blocked=blocked,
    )


def vocabulary_gaps(vocabulary: Iterable[str]) -> tuple[list[str], list[str]]:
    """(reasons obelize has that no set holds, reasons the sets hold that obelize lacks)."""
    have = set(vocabulary)
    sets = RESOLVED | UNRESOLVED | NOT_A_USAGE
    return sorted(have - sets), sorted(sets - have)


__all__ = [
    "CLASSIFIED_SINCE_PROTOCOL",
    "NOT_A_USAGE",
    "RESOLVED",
    "UNRESOLVED",
    "SampleFigures",
    "sample_figures",
    "vocabulary_gaps",
    "zero_bail_files",
]
