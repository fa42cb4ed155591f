"""The console script: check-cases, split, ceiling, summarize --check, compare."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
import yaml

from pytest_obelize_bench.cli import main
from tests.helpers import casefile
from tests.helpers.project import PROJECT

CASES = PROJECT / "cases" / "cases.yaml"


def run(*args: str) -> tuple[int, str]:
    out = StringIO()
    return main(list(args), out), out.getvalue()


def test_check_cases_is_all_yes_on_the_shipped_file() -> None:
    code, text = run("check-cases", str(CASES))
    assert code == 0
    lines = text.splitlines()
    from pytest_obelize_bench.casefile.rules import RULES

    assert sum(line.startswith("yes  ") for line in lines) == len(RULES) == 22
    assert not any(line.startswith("NO ") for line in lines)
    assert "round 2, 20 cases, 4 controls" in text


CONTROL_SET = "the controls hold every shape, the documentation-only one among them"


def test_check_cases_wants_the_documentation_only_control_from_round_2_on(tmp_path: Path) -> None:
    data = yaml.safe_load(CASES.read_text(encoding="utf-8"))
    data["controls"] = [c for c in data["controls"] if c["control"] != "docs-mention"]
    path = tmp_path / "cases.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    code, text = run("check-cases", str(path))
    assert code == 1
    assert f"NO   from round 2 on, {CONTROL_SET}" in text
    assert (
        f"{path}: controls: expected one that names the SDK only in documentation (control: docs-mention), "
        "found none that is not retired"
    ) in text
    # a retired documentation-only control does not count
    data["controls"] = yaml.safe_load(CASES.read_text(encoding="utf-8"))["controls"]
    data["controls"][-1]["retired"] = {"reason": "gone", "round": 2}
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    code, text = run("check-cases", str(path))
    assert code == 1 and "(control: docs-mention)" in text


def test_round_1_published_with_three_controls_is_not_held_to_the_control_set() -> None:
    code, text = run("check-cases", str(PROJECT / "tests" / "data" / "upstream" / "cases.yaml"))
    assert code == 0, text
    assert f"yes  from round 2 on, {CONTROL_SET}" in text
    assert "round 1, 20 cases, 3 controls" in text


def test_check_cases_says_no_to_the_broken_rule(tmp_path: Path) -> None:
    data = casefile.standard()
    data["cases"][1]["sha"] = "abc"
    data["cases"][2]["ground_truth"]["files_read"] = []
    path = casefile.write(tmp_path / "cases.yaml", data)
    code, text = run("check-cases", str(path))
    assert code == 1
    assert "NO   every row pins a full 40-hex commit SHA" in text
    assert "NO   files_read covers every call-site path" in text
    assert "yes  every case pins both SDK versions exactly (X.Y.Z)" in text
    assert f"{path}: case alpha__navamai: sha: expected a full 40-hex lowercase commit SHA, got 'abc'" in text


def test_split_explains_the_two_moved_cases() -> None:
    code, text = run("split", str(CASES))
    assert code == 0
    assert "kvcops__Virtual-Herbal-Garden: file says dev, the rule says holdout; because:" in text
    assert "LJX2017__A-Song-of-Ice-and-Fire: file says dev, the rule says holdout; because:" in text
    assert "UNEXPLAINED" not in text


def test_split_flags_an_unexplained_difference(tmp_path: Path) -> None:
    data = yaml.safe_load(CASES.read_text(encoding="utf-8"))
    for row in data["cases"]:
        if row["id"] == "navamai__navamai":
            row["split"] = "dev"
    path = tmp_path / "cases.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    code, text = run("split", str(path))
    assert code == 1
    assert "navamai__navamai: file says dev, the rule says holdout; UNEXPLAINED" in text


def test_ceiling_tallies_what_caps_each_case() -> None:
    code, text = run("ceiling", str(CASES))
    assert code == 0
    assert text.strip().splitlines()[-1] == (
        "0 of 20 cases can reach verified_success; 3 a row the key marks `manual`; "
        "1 a row the pack flags rather than edits; 16 no test command"
    )


def test_summarize_check_on_the_shipped_document_and_on_an_edited_copy(tmp_path: Path) -> None:
    code, _ = run("summarize", "--check", "--cases", str(CASES), "--results", str(PROJECT / "results"))
    assert code == 0
    copy = tmp_path / "results"
    shutil.copytree(PROJECT / "results", copy)
    document = copy / "BENCHMARK_RESULTS.md"
    document.write_text(document.read_text(encoding="utf-8").replace("| 20 |", "| 21 |", 1), encoding="utf-8")
    code, text = run("summarize", "--check", "--cases", str(CASES), "--results", str(copy))
    assert code == 1 and "round 1" in text
    assert run("summarize", "--cases", str(CASES), "--results", str(copy))[0] == 0
    assert run("summarize", "--check", "--cases", str(CASES), "--results", str(copy))[0] == 0


@pytest.mark.parametrize("hash_seed", ["0", "1", "4242"])
def test_a_fresh_process_renders_the_stored_document_byte_for_byte(hash_seed: str) -> None:
    """Rendering in this process proves nothing about the next; set and dict order vary with the hash seed."""
    script = Path(sys.executable).with_name("obelize-bench")
    done = subprocess.run(
        [str(script), "summarize", "--check", "--cases", str(CASES), "--results", str(PROJECT / "results")],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONHASHSEED": hash_seed},
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_compare_pairs_two_rounds(tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(PROJECT / "results" / "round-1", results / "round-1")
    shutil.copytree(PROJECT / "results" / "round-1", results / "round-3")
    code, text = run("compare", "1", "3", "--cases", str(CASES), "--results", str(results))
    assert code == 0
    assert "McNemar" in text or "mcnemar" in text.lower()


def test_a_bad_case_file_exits_2_with_its_problems(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text("round: [\n", encoding="utf-8")
    code, text = run("ceiling", str(path))
    assert code == 2 and "is not valid YAML" in text


def test_the_console_script_is_installed() -> None:
    script = Path(sys.executable).with_name("obelize-bench")
    done = subprocess.run([str(script), "check-cases", str(CASES)], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "yes  ids are unique" in done.stdout


def test_version_and_every_argument_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from pytest_obelize_bench import __version__
    from pytest_obelize_bench.cli import build_parser

    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0 and capsys.readouterr().out.strip() == f"obelize-bench {__version__}"
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert {"runs", "publish", "show", "compare", "summarize", "regrade"} <= set(commands.choices)
    for name, sub in commands.choices.items():
        for action in sub._actions:
            if not isinstance(action, argparse._HelpAction):
                assert action.help and len(action.help) > 10, (name, action.dest)


def test_regrade_without_stored_facts_says_so_in_one_line() -> None:
    code, text = run("regrade", "--round", "1", "--cases", str(CASES), "--results", str(PROJECT / "results"))
    assert code == 1
    assert text.count("\n") == 1 and "no stored graded facts" in text and "23 records" in text


def test_compare_refuses_a_side_without_records(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    code, text = run(
        "compare", "1", str(tmp_path / "empty"), "--cases", str(CASES), "--results", str(PROJECT / "results")
    )
    assert code == 2 and "has no records; nothing to compare" in text
    code, text = run("compare", "1", "no-such-run", "--cases", str(CASES), "--results", str(PROJECT / "results"))
    assert code == 2 and "no-such-run names no run" in text


def test_compare_shows_each_case_tier_and_the_transitions(tmp_path: Path) -> None:
    import json

    results = tmp_path / "results"
    shutil.copytree(PROJECT / "results" / "round-1", results / "round-1")
    other = tmp_path / "other"
    other.mkdir()
    for path in (results / "round-1").glob("*__*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        if path.stem == "navamai__navamai":
            data["measurements"]["false_positive_edit"] = 2
            data["tier"] = "wrong"
        (other / path.name).write_text(json.dumps(data), encoding="utf-8")
    code, text = run("compare", "1", str(other), "--round", "1", "--cases", str(CASES), "--results", str(results))
    assert code == 0, text
    line = next(line for line in text.splitlines() if line.strip().startswith("navamai__navamai"))
    assert line.split()[1:] == ["partial", "wrong", "*"] or line.split()[1:] == ["unsupported", "wrong", "*"]
    assert "tier transitions (rows round 1, columns" in text


def test_runs_lists_the_imported_round() -> None:
    code, text = run("runs", "--cases", str(CASES), "--results", str(PROJECT / "results"))
    assert code == 0
    assert (
        "round 1  imported-upstream  obelize 0.1.0 36ccdf0ce229 pack fbe82d40afea  imported  "
        "[unsupported 17, partial 5, patched_unverified 1]  PUBLISHED" in text
    )
