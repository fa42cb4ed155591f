"""The options' values, checked and typed into ``BenchOptions``: every usage error of a bad value or pair.

Pure: ``read.py`` hands over what ``getoption`` returned for each name in ``READ_NAMES`` and turns
an ``OptionError`` into pytest's usage error, so each check is a plain function of the values and
its one-line message is the one the user sees.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pytest_obelize_bench.options.declarations import (
    OPTION_COMPARE,
    OPTION_COMPARE_REPEAT,
    OPTION_DRYRUN,
    OPTION_FIXTURES,
    OPTION_FRAME,
    OPTION_GATE1,
    OPTION_GATE1_CASES,
    OPTION_ROUND,
)
from pytest_obelize_bench.options.model import BenchOptions, ComparisonOptions, MeasurementOptions, Mode

#: Every option the session reads: the benchmark's own, by their spelling, then pytest's, by their dest.
READ_NAMES = (
    OPTION_ROUND,
    OPTION_FIXTURES,
    "--bench-cases",
    "--bench-fixtures",
    "--bench-results",
    "--bench-split",
    "--bench-fail-on",
    "--bench-work",
    "--bench-env-templates",
    "--bench-template-bytecode",
    "--bench-repo-cache",
    "--bench-unreachable",
    "--bench-interpreter",
    "--bench-python-path",
    "--exclude-newer",
    "--obelize",
    "--bench-step-timeout",
    "--bench-allow-dirty",
    "--bench-no-summary",
    "--bench-no-publish",
    "--bench-publish-with-infra-errors",
    "--bench-rerun",
    "--bench-run",
    "--bench-resume",
    "--bench-no-preflight",
    "--bench-keep",
    "--bench-repeat",
    "--bench-sandbox",
    "--bench-update-expected",
    OPTION_GATE1,
    OPTION_DRYRUN,
    OPTION_FRAME,
    OPTION_GATE1_CASES,
    OPTION_COMPARE,
    OPTION_COMPARE_REPEAT,
    "collectonly",
    "keyword",
    "markexpr",
)
#: Read with a default: the cache plugin that owns ``--lf`` can be disabled (``-p no:cacheprovider``).
READ_WITH_DEFAULT: Mapping[str, Any] = {"lf": False}


class OptionError(ValueError):
    """A bad option value or pair, as the one line the user reads."""


def parse_tier_gate(tiers: Iterable[str]) -> set[str]:
    """The tiers ``--bench-fail-on`` names; ValueError naming any unknown one."""
    wanted = {part.strip() for part in tiers if part.strip()}
    if not wanted:  # every session reads its options; only one that names tiers pays for the records' models
        return wanted
    from pytest_obelize_bench.grading.record import TIERS  # here: the plugin reads options at every start-up

    unknown = wanted - set(TIERS)
    if unknown:
        raise ValueError(f"unknown tier(s) {', '.join(sorted(unknown))}; known: {', '.join(TIERS)}")
    return wanted


def _absolute(value: str | None) -> str | None:
    """A folder option as the one absolute path every part of the harness uses: ``~`` expanded,
    relative to where the session started (a literal ``~`` folder in the project is never made)."""
    return str(Path(value).expanduser().resolve()) if value else None


def build_options(given: Mapping[str, Any]) -> BenchOptions:
    """The typed options of ``given`` (option name to ``getoption``'s value); OptionError on a bad value or pair."""
    fixtures, round_number = bool(given[OPTION_FIXTURES]), given[OPTION_ROUND]
    if fixtures and round_number is not None:
        raise OptionError("--bench-round and --fixtures-only are different runs; give one of them")
    repeat = int(given["--bench-repeat"])
    if repeat < 1:
        raise OptionError("--bench-repeat: K must be at least 1")
    try:
        fail_on = frozenset(parse_tier_gate((given["--bench-fail-on"] or "").split(",")))
    except ValueError as exc:
        raise OptionError(f"--bench-fail-on: {exc}") from None
    measurement = _measurement(given, fixtures=fixtures)
    comparison = _comparison(given, fixtures=fixtures)
    # --bench-compare runs the comparison arm over the round's dev split instead of the round
    # (session/comparison_kind.py); --bench-round then only names the round.
    mode: Mode | None = "fixtures" if fixtures else "round" if round_number is not None and not comparison else None
    unreachable = given["--bench-unreachable"]
    if unreachable and mode != "round" and measurement is None:
        raise OptionError(
            "--bench-unreachable names rows of a round's case file or a frame; it goes with --bench-round=N, "
            "--bench-gate1 or --bench-dryrun"
        )
    return BenchOptions(
        mode=mode,
        round=round_number,
        cases=str(given["--bench-cases"]),
        fixtures=str(given["--bench-fixtures"]),
        results=str(given["--bench-results"]),
        split=given["--bench-split"],
        fail_on=fail_on,
        work=_absolute(given["--bench-work"]),
        env_templates=_absolute(given["--bench-env-templates"]),
        template_bytecode=given["--bench-template-bytecode"],
        repo_cache=_absolute(given["--bench-repo-cache"]),
        unreachable=unreachable or None,
        interpreter=given["--bench-interpreter"],
        python_path=tuple(given["--bench-python-path"] or ()),
        exclude_newer=given["--exclude-newer"],
        obelize=given["--obelize"],
        step_timeout=given["--bench-step-timeout"],
        allow_dirty=bool(given["--bench-allow-dirty"]),
        publish=not (given["--bench-no-publish"] or given["--bench-no-summary"]),
        summary=not given["--bench-no-summary"],
        publish_with_infra_errors=bool(given["--bench-publish-with-infra-errors"]),
        rerun=given["--bench-rerun"],
        run=given["--bench-run"],
        resume=given["--bench-resume"],
        preflight=not given["--bench-no-preflight"],
        keep=given["--bench-keep"],
        repeat=repeat,
        sandbox=given["--bench-sandbox"],
        update_expected=bool(given["--bench-update-expected"]),
        collect_only=bool(given["collectonly"]),
        keyword=given["keyword"] or None,
        markexpr=given["markexpr"] or None,
        last_failed=bool(given["lf"]),
        measurement=measurement,
        comparison=comparison,
    )


def _measurement(given: Mapping[str, Any], *, fixtures: bool) -> MeasurementOptions | None:
    """Gate 1 or the dry run, alone and with what it needs; None when neither was asked for."""
    gate1, dryrun, frame = given[OPTION_GATE1], given[OPTION_DRYRUN], given[OPTION_FRAME]
    cases = given[OPTION_GATE1_CASES]
    if cases and not gate1:
        raise OptionError(f"{OPTION_GATE1_CASES} goes with --bench-gate1")
    if cases and frame:
        raise OptionError(f"{OPTION_GATE1_CASES} names what Gate 1 scans instead of --bench-frame; give one of them")
    if gate1 and dryrun:
        raise OptionError("--bench-gate1 and --bench-dryrun are different runs; give one of them")
    if not (gate1 or dryrun):
        if frame:
            raise OptionError("--bench-frame needs --bench-gate1 or --bench-dryrun=PACK")
        return None
    if given[OPTION_ROUND] is not None or fixtures:
        raise OptionError("--bench-gate1 and --bench-dryrun do not combine with --bench-round or --fixtures-only")
    if gate1:
        return MeasurementOptions(kind="gate1", pack=None, frame=frame or None, cases=cases or None)
    from pytest_obelize_bench.casefile.cases import PACK_DISTRIBUTIONS  # here: only a dry run pays for it

    pack = str(dryrun)
    if pack not in PACK_DISTRIBUTIONS:
        raise OptionError(
            f"--bench-dryrun: unknown pack {pack!r}; bundled packs: {', '.join(sorted(PACK_DISTRIBUTIONS))}"
        )
    if not frame:
        raise OptionError("--bench-dryrun needs --bench-frame=FILE: the frame of repositories to plan")
    return MeasurementOptions(kind="dryrun", pack=pack, frame=str(frame))


def _comparison(given: Mapping[str, Any], *, fixtures: bool) -> ComparisonOptions | None:
    """The comparison arm with the round it runs over; None when it was not asked for."""
    arm, repeat = given[OPTION_COMPARE], given[OPTION_COMPARE_REPEAT]
    if not arm:
        if repeat:
            raise OptionError(f"{OPTION_COMPARE_REPEAT} needs {OPTION_COMPARE}=ARM.yaml")
        return None
    round_number = given[OPTION_ROUND]
    if round_number is None or fixtures:
        raise OptionError(f"{OPTION_COMPARE} needs --bench-round=N (and no --fixtures-only)")
    return ComparisonOptions(arm=str(arm), round=int(round_number), repeat=max(0, int(repeat)))


__all__ = ["READ_NAMES", "READ_WITH_DEFAULT", "OptionError", "build_options", "parse_tier_gate"]
