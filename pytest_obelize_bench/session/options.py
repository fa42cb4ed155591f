"""The benchmark's command-line options, read once into one typed object.

``BenchOptions.from_config`` is the only place that calls ``getoption`` for a ``--bench-*`` or
round option and the only place that turns a bad combination or value into a usage error, so
the startup, the controller and the items read typed fields instead of option strings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pytest

from pytest_obelize_bench.session.outcome import parse_tier_gate

Mode = Literal["round", "fixtures"]


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
    work: str | None
    repo_cache: str | None
    interpreter: Literal["exact", "minor"]
    python_path: tuple[str, ...]
    exclude_newer: str | None
    obelize: str | None
    step_timeout: str | None
    allow_dirty: bool
    publish: bool
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

    @classmethod
    def from_config(cls, config: pytest.Config) -> BenchOptions:
        """The options of ``config``; ``pytest.UsageError`` (one line) on a bad value or pair."""
        get = config.getoption
        fixtures, round_number = bool(get("--fixtures-only")), get("--bench-round")
        if fixtures and round_number is not None:
            raise pytest.UsageError("--bench-round and --fixtures-only are different runs; give one of them")
        repeat = int(get("--bench-repeat"))
        if repeat < 1:
            raise pytest.UsageError("--bench-repeat: K must be at least 1")
        try:
            fail_on = frozenset(parse_tier_gate((get("--bench-fail-on") or "").split(",")))
        except ValueError as exc:
            raise pytest.UsageError(f"--bench-fail-on: {exc}") from None
        # --bench-compare runs the comparison arm over the round's dev split instead of the round
        # (measure/comparison_plugin.py); --bench-round then only names the round.
        comparing = bool(get("--bench-compare", None))
        mode: Mode | None = "fixtures" if fixtures else "round" if round_number is not None and not comparing else None
        return cls(
            mode=mode,
            round=round_number,
            cases=str(get("--bench-cases")),
            fixtures=str(get("--bench-fixtures")),
            results=str(get("--bench-results")),
            split=get("--bench-split"),
            fail_on=fail_on,
            work=get("--bench-work"),
            repo_cache=get("--bench-repo-cache"),
            interpreter=get("--bench-interpreter"),
            python_path=tuple(get("--bench-python-path") or ()),
            exclude_newer=get("--exclude-newer"),
            obelize=get("--obelize"),
            step_timeout=get("--bench-step-timeout"),
            allow_dirty=bool(get("--bench-allow-dirty")),
            publish=not (get("--bench-no-publish") or get("--bench-no-summary")),
            publish_with_infra_errors=bool(get("--bench-publish-with-infra-errors")),
            rerun=get("--bench-rerun"),
            run=get("--bench-run"),
            resume=get("--bench-resume"),
            preflight=not get("--bench-no-preflight"),
            keep=get("--bench-keep"),
            repeat=repeat,
            sandbox=get("--bench-sandbox"),
            update_expected=bool(get("--bench-update-expected")),
            collect_only=bool(get("collectonly")),
            keyword=get("keyword") or None,
            markexpr=get("markexpr") or None,
            last_failed=bool(get("lf", False)),
        )


OPTIONS_KEY: pytest.StashKey[BenchOptions] = pytest.StashKey()


def options_of(config: pytest.Config) -> BenchOptions:
    """The session's options, read once (at configure) and kept in the config's stash."""
    options = config.stash.get(OPTIONS_KEY, None)
    if options is None:
        options = config.stash[OPTIONS_KEY] = BenchOptions.from_config(config)
    return options


__all__ = ["OPTIONS_KEY", "BenchOptions", "Mode", "options_of"]
