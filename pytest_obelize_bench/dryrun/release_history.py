"""The history of obelize releases on one pack's frame: what each release's plan would do, repository
by repository, and which release first changed a repository's outcome.

Every release's dry run of the frame is kept whole (``releases/<label>/dryrun.json``); the history is
a pure function of those documents. A release that does not ship the pack is a point of the history,
``pack_absent``, never dropped; a repository a release could not run is named with its error. Outcome
shares are counted over the repositories with an outcome, each repository one unit (Wilson). Between
consecutive releases: every repository whose result changed, by name, and whether the share planned
``complete`` moved, told apart by the one paired test over repositories (``_util.told_apart``).
Documents of another frame (other repositories or pins) than the newest release's are left out,
each with its reason.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

from packaging.version import InvalidVersion, Version

from pytest_obelize_bench._util.names import is_safe_component
from pytest_obelize_bench._util.stats import rate_of
from pytest_obelize_bench._util.strict_model import StrictModel, committed_json
from pytest_obelize_bench._util.told_apart import told_apart
from pytest_obelize_bench.dryrun.outcomes import OUTCOMES, DryRunDocument, DryRunRecord

__all__ = [
    "ABSENT",
    "FRAME_HISTORY_NAME",
    "FrameHistory",
    "FrameLeftOut",
    "FrameRelease",
    "FrameStep",
    "RepositoryChange",
    "build_frame_history",
    "first_changes",
    "release_folder_name",
    "result",
    "result_of",
]

FRAME_HISTORY_NAME = "history.json"
FRAME_HISTORY_SCHEMA = 1
#: The reason (and the release state) of a frame run with a release that does not ship the pack.
ABSENT = "pack_absent"


class FrameRelease(StrictModel):
    """One release on the frame: its outcome counts with intervals, the repositories it could not run."""

    label: str
    obelize_version: str | None
    obelize_commit: str | None
    pack_sha256: str | None
    run_at: str | None
    harness_commit: str | None
    state: Literal["measured", "pack_absent"]
    repositories: int
    with_outcome: int
    #: outcome -> the share of the repositories with an outcome (``Rate.as_dict``), every outcome listed
    outcomes: dict[str, dict[str, Any]]
    #: repository -> the error that stopped it (a crash, a timeout); empty when the pack is absent
    errors: dict[str, str]
    #: repository -> its outcome, ``error`` or ``pack_absent``
    results: dict[str, str]


class RepositoryChange(StrictModel):
    repository: str
    before: str
    after: str


class FrameStep(StrictModel):
    """A release against the one before it on the same repositories."""

    before: str
    after: str
    changed: list[RepositoryChange]
    #: the paired test over repositories with an outcome under both (1 when planned complete, else 0)
    complete: dict[str, Any] | None
    note: str | None = None


class FrameLeftOut(StrictModel):
    release: str
    reason: str


class FrameHistory(StrictModel):
    schema_version: int = FRAME_HISTORY_SCHEMA
    pack: str
    frame: str | None
    repositories: int
    alpha: float
    min_n: int
    releases: list[FrameRelease]
    steps: list[FrameStep]
    left_out: list[FrameLeftOut]

    def to_json(self) -> str:
        return committed_json(self)


def release_folder_name(version: str | None, commit: str | None) -> str | None:
    """``0.8.0``, or ``0.8.0-g1a2b3c4`` for a source checkout; None when it cannot name a folder."""
    if not version:
        return None
    name = version if not commit else f"{version}-g{commit[:7]}"
    return name if is_safe_component(name) else None


def result(record: DryRunRecord) -> str:
    """A repository's result under one release: its outcome, ``pack_absent`` or ``error``."""
    if record.outcome is not None:
        return record.outcome
    return ABSENT if (record.error or "").startswith(ABSENT + ":") else "error"


def result_of(document: DryRunDocument) -> dict[str, str]:
    """Repository -> its ``result``."""
    return {record.full_name: result(record) for record in document.records}


def _order(document: DryRunDocument) -> tuple[Any, ...]:
    try:
        return (0, Version(document.obelize_version or ""), document.run_at or "")
    except InvalidVersion:
        return (1, document.obelize_version or "", document.run_at or "")


def _label(document: DryRunDocument) -> str:
    version = document.obelize_version or "?"
    return version if not document.obelize_commit else f"{version} @{document.obelize_commit[:7]}"


def _release(document: DryRunDocument) -> FrameRelease:
    results = result_of(document)
    absent = bool(results) and all(value == ABSENT for value in results.values())
    measured = [value for value in results.values() if value in OUTCOMES]
    counts = Counter(measured)
    return FrameRelease(
        label=_label(document),
        obelize_version=document.obelize_version,
        obelize_commit=document.obelize_commit,
        pack_sha256=document.pack_sha256,
        run_at=document.run_at,
        harness_commit=document.harness_commit,
        state="pack_absent" if absent else "measured",
        repositories=len(results),
        with_outcome=len(measured),
        outcomes={name: rate_of(counts.get(name, 0), len(measured)).as_dict() for name in OUTCOMES},
        errors={r.full_name: r.error or "" for r in document.records if results[r.full_name] == "error"},
        results=dict(sorted(results.items(), key=lambda kv: kv[0].lower())),
    )


def _step(before: FrameRelease, after: FrameRelease, alpha: float, min_n: int) -> FrameStep:
    if before.state == "pack_absent" or after.state == "pack_absent":
        absent = before if before.state == "pack_absent" else after
        other = after if absent is before else before
        note = (
            f"obelize {absent.label} does not ship the pack; obelize {other.label} does: no repository can be compared"
        )
        return FrameStep(before=before.label, after=after.label, changed=[], complete=None, note=note)
    changed = [
        RepositoryChange(repository=name, before=before.results[name], after=after.results[name])
        for name in after.results
        if name in before.results and before.results[name] != after.results[name]
    ]
    both = [n for n in after.results if before.results.get(n) in OUTCOMES and after.results[n] in OUTCOMES]
    apart = told_apart(
        [float(before.results[n] == "complete") for n in both],
        [float(after.results[n] == "complete") for n in both],
        alpha=alpha,
        min_n=min_n,
        interval=False,  # the block states the verdict and the counts, not the difference
    )
    return FrameStep(before=before.label, after=after.label, changed=changed, complete=apart.as_dict())


def _frame_of(document: DryRunDocument) -> list[tuple[str, str | None]]:
    return sorted((record.full_name, record.sha) for record in document.records)


def build_frame_history(
    pack: str, documents: Sequence[tuple[str, DryRunDocument]], *, alpha: float, min_n: int
) -> FrameHistory:
    """The history over the release documents (folder name, document), in any order.

    The newest release's frame (its repositories at their pins) is the history's; a document of
    another frame or pack is left out with why, and of two documents of one release the later run
    stands for it.
    """
    left: list[FrameLeftOut] = []
    usable = []
    for name, document in documents:
        if document.pack != pack:
            left.append(FrameLeftOut(release=name, reason=f"a dry run of the pack {document.pack}, not {pack}"))
        else:
            usable.append((name, document))
    usable.sort(key=lambda item: (_order(item[1]), item[0]))
    newest_frame = _frame_of(usable[-1][1]) if usable else []
    chosen: dict[str, tuple[str, DryRunDocument]] = {}
    for name, document in usable:
        if _frame_of(document) != newest_frame:
            left.append(
                FrameLeftOut(
                    release=name,
                    reason="its repositories or pins are not those of the newest release's dry run "
                    f"({len(document.records)} against {len(newest_frame)})",
                )
            )
            continue
        earlier = chosen.get(_label(document))
        if earlier is not None:
            left.append(FrameLeftOut(release=earlier[0], reason=f"a later dry run of obelize {_label(document)} "
                                     f"({name}) stands for it"))  # fmt: skip
        chosen[_label(document)] = (name, document)
    ordered = sorted(chosen.values(), key=lambda item: (_order(item[1]), item[0]))
    releases = [_release(document) for _, document in ordered]
    steps = [_step(a, b, alpha, min_n) for a, b in itertools.pairwise(releases)]
    return FrameHistory(
        pack=pack,
        frame=ordered[-1][1].frame if ordered else None,
        repositories=len(newest_frame),
        alpha=alpha,
        min_n=min_n,
        releases=releases,
        steps=steps,
        left_out=sorted(left, key=lambda item: item.release),
    )


def first_changes(history: FrameHistory, repository: str) -> list[tuple[FrameRelease, FrameRelease]]:
    """Every pair of consecutive releases between which the repository's result changed, oldest first."""
    having = [r for r in history.releases if repository in r.results]
    return [(a, b) for a, b in itertools.pairwise(having) if a.results[repository] != b.results[repository]]
