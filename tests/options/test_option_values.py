"""``build_options``: every value and pair checked, with the one line the user reads, and typed fields."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_obelize_bench.casefile.cases import PACK_DISTRIBUTIONS
from pytest_obelize_bench.options.build import (
    READ_NAMES,
    READ_WITH_DEFAULT,
    OptionError,
    build_options,
    parse_tier_gate,
)
from pytest_obelize_bench.options.model import ComparisonOptions, MeasurementOptions
from pytest_obelize_bench.options.read import options_of, read_options
from pytest_obelize_bench.session.reference_docs import plugin_options

PACK = sorted(PACK_DISTRIBUTIONS)[0]


def given(*pairs: tuple[str, Any]) -> dict[str, Any]:
    """What ``getoption`` returns for a command line with only ``pairs`` set: the parser's own defaults."""
    values: dict[str, Any] = {names[0]: attrs.get("default") for names, attrs in plugin_options()}
    values.update({"collectonly": False, "keyword": "", "markexpr": "", **READ_WITH_DEFAULT})
    values.update(pairs)
    return values


def test_every_declared_option_is_read() -> None:
    declared = {names[0] for names, _ in plugin_options()}
    assert sorted(declared - set(READ_NAMES)) == []
    # and build_options reads nothing the reader does not hand over
    assert build_options({name: given()[name] for name in (*READ_NAMES, *READ_WITH_DEFAULT)}).mode is None


def test_no_option_is_no_benchmark_session() -> None:
    options = build_options(given())
    assert (options.mode, options.measurement, options.comparison) == (None, None, None)
    assert (options.publish, options.summary, options.preflight, options.repeat) == (True, True, True, 1)
    assert options.fail_on == frozenset()


def test_a_template_is_compiled_unless_a_round_says_none() -> None:
    assert build_options(given()).template_bytecode == "compile"
    assert build_options(given(("--bench-template-bytecode", "none"))).template_bytecode == "none"


def test_a_round_and_the_fixtures_pass_are_modes() -> None:
    assert build_options(given(("--bench-round", 3))).mode == "round"
    assert build_options(given(("--fixtures-only", True))).mode == "fixtures"


def test_no_summary_stops_publication_and_the_measurements_block_but_no_publish_only_publication() -> None:
    no_summary = build_options(given(("--bench-no-summary", True)))
    no_publish = build_options(given(("--bench-no-publish", True)))
    assert (no_summary.publish, no_summary.summary) == (False, False)
    assert (no_publish.publish, no_publish.summary) == (False, True)


def test_gate1_and_the_dry_run_are_typed_measurements() -> None:
    assert build_options(given(("--bench-gate1", True))).measurement == MeasurementOptions("gate1", None, None)
    gate1 = build_options(given(("--bench-gate1", True), ("--bench-frame", "f.yaml")))
    assert gate1.measurement == MeasurementOptions("gate1", None, "f.yaml")
    dryrun = build_options(given(("--bench-dryrun", PACK), ("--bench-frame", "f.yaml")))
    assert dryrun.measurement == MeasurementOptions("dryrun", PACK, "f.yaml")
    assert dryrun.mode is None


def test_the_comparison_names_its_round_and_is_no_round_session() -> None:
    arm = (("--bench-compare", "arm.yaml"), ("--bench-round", 1))
    options = build_options(given(*arm, ("--bench-compare-repeat", 2)))
    assert options.comparison == ComparisonOptions(arm="arm.yaml", round=1, repeat=2)
    assert options.mode is None
    negative = build_options(given(*arm, ("--bench-compare-repeat", -3)))
    assert negative.comparison is not None and negative.comparison.repeat == 0


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        (
            [("--bench-round", 1), ("--fixtures-only", True)],
            "--bench-round and --fixtures-only are different runs; give one of them",
        ),
        ([("--bench-repeat", 0)], "--bench-repeat: K must be at least 1"),
        ([("--bench-fail-on", "wrong,bogus")], "--bench-fail-on: unknown tier(s) bogus; known: "),
        (
            [("--bench-gate1", True), ("--bench-dryrun", PACK)],
            "--bench-gate1 and --bench-dryrun are different runs; give one of them",
        ),
        ([("--bench-frame", "f.yaml")], "--bench-frame needs --bench-gate1 or --bench-dryrun=PACK"),
        (
            [("--bench-gate1", True), ("--bench-round", 1)],
            "--bench-gate1 and --bench-dryrun do not combine with --bench-round or --fixtures-only",
        ),
        (
            [("--bench-dryrun", PACK), ("--fixtures-only", True)],
            "--bench-gate1 and --bench-dryrun do not combine with --bench-round or --fixtures-only",
        ),
        ([("--bench-dryrun", "openai")], "--bench-dryrun: unknown pack 'openai'; bundled packs: "),
        (
            [("--bench-dryrun", PACK)],
            "--bench-dryrun needs --bench-frame=FILE: the frame of repositories to plan",
        ),
        ([("--bench-compare-repeat", 1)], "--bench-compare-repeat needs --bench-compare=ARM.yaml"),
        ([("--bench-compare", "arm.yaml")], "--bench-compare needs --bench-round=N (and no --fixtures-only)"),
        (
            [("--bench-compare", "arm.yaml"), ("--fixtures-only", True)],
            "--bench-compare needs --bench-round=N (and no --fixtures-only)",
        ),
    ],
)
def test_a_bad_value_or_pair_is_one_line(pairs: list[tuple[str, Any]], message: str) -> None:
    with pytest.raises(OptionError) as raised:
        build_options(given(*pairs))
    text = str(raised.value)
    assert text.startswith(message)
    assert "\n" not in text


def test_the_tier_gate_names_known_tiers_and_refuses_others() -> None:
    assert parse_tier_gate([" wrong", "error ", ""]) == {"wrong", "error"}
    with pytest.raises(ValueError, match=r"unknown tier\(s\) nope"):
        parse_tier_gate(["nope"])


def test_this_session_reads_its_options_once(pytestconfig: pytest.Config) -> None:
    options = options_of(pytestconfig)
    assert options_of(pytestconfig) is options
    assert read_options(pytestconfig) == options
    assert options.mode is None  # the project's own tests are no benchmark session


def test_folder_options_are_absolute_once_with_home_expanded(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--bench-repo-cache=~/repos`` is the home's folder for every part of the harness, never ``./~``."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    options = build_options(
        given(("--bench-repo-cache", "~/repos"), ("--bench-work", "work"), ("--bench-env-templates", "~/templates"))
    )
    assert options.repo_cache == str(tmp_path / "home" / "repos")
    assert options.work == str(tmp_path / "work")
    assert options.env_templates == str(tmp_path / "home" / "templates")
    none_given = build_options(given())
    assert none_given.repo_cache is None and none_given.env_templates is None and not (tmp_path / "~").exists()
