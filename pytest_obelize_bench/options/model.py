"""What the user asked of a benchmark session, as one typed, frozen object.

Built once per session by ``read.py`` (the one reader of ``getoption``) after ``build.py`` has
checked every value and pair; the session, the measurements and the comparison read its fields
instead of option strings. Plain data: no pytest here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Mode = Literal["round", "fixtures"]


@dataclass(frozen=True)
class MeasurementOptions:
    """``--bench-gate1`` or ``--bench-dryrun=PACK``, and the frame they measure."""

    kind: Literal["gate1", "dryrun"]
    #: the dry run's pack, one of the bundled packs; None for Gate 1 (its pack is fixed).
    pack: str | None
    #: ``--bench-frame`` as given; None means Gate 1's default frame (a dry run always names one).
    frame: str | None
    #: ``--bench-gate1-cases``: Gate 1 over the cases of a case file, each matched against its own key.
    cases: str | None = None


@dataclass(frozen=True)
class ComparisonOptions:
    """``--bench-compare=ARM.yaml`` and its repeat."""

    arm: str
    #: the round whose dev split it runs over (``--bench-round``, required with it).
    round: int
    #: how many of the first dev cases the agent runs a second time (never below 0).
    repeat: int


@dataclass(frozen=True)
class BenchOptions:
    """What the user asked of this benchmark session."""

    mode: Mode | None
    round: int | None
    cases: str
    fixtures: str
    results: str
    split: Literal["dev", "holdout"] | None
    fail_on: frozenset[str]
    #: absolute (``~`` expanded, relative to where the session started), or None when not given
    work: str | None
    env_templates: str | None
    template_bytecode: Literal["compile", "none"]
    repo_cache: str | None
    #: ``--bench-unreachable``: the pin list naming the rows this machine cannot reach, as given.
    unreachable: str | None
    interpreter: Literal["exact", "minor"]
    python_path: tuple[str, ...]
    exclude_newer: str | None
    obelize: str | None
    step_timeout: str | None
    allow_dirty: bool
    #: False with --bench-no-publish or --bench-no-summary: a round keeps its run, the comparison its block.
    publish: bool
    #: False with --bench-no-summary only: Gate 1 and the dry run then write no block.
    summary: bool
    publish_with_infra_errors: bool
    rerun: Literal["errors", "all-errors"] | None
    run: str | None
    resume: str | None
    preflight: bool
    keep: Literal["failed", "all", "none"]
    repeat: int
    sandbox: Literal["auto", "bwrap", "none"]
    update_expected: bool
    collect_only: bool
    #: pytest's own selection, as a run's manifest records it.
    keyword: str | None
    markexpr: str | None
    last_failed: bool
    #: Gate 1 or the dry run; None in any other session.
    measurement: MeasurementOptions | None
    #: the comparison arm; None in any other session.
    comparison: ComparisonOptions | None


__all__ = ["BenchOptions", "ComparisonOptions", "MeasurementOptions", "Mode"]
