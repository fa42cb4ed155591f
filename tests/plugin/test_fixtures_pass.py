"""The offline fixtures pass through the real plugin and the real obelize: outcome mechanics.

Each test copies a few of the shipped fixtures into a pytester project, so what is proved
here is what `pytest --fixtures-only` does on a fresh clone.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "cases" / "fixtures"
CHOSEN = ("clean", "obelize-fails", "refused", "withheld-part")


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    for name in CHOSEN:
        shutil.copytree(FIXTURES / name, pytester.path / "cases" / "fixtures" / name)
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "--fixtures-only", "-p", "no:cacheprovider", f"--bench-work={pytester.path / 'work'}", *args
    )


#: Each fixture reached the tier its expected.json names, obelize-fails its ``error`` included: four passes.
EXPECTED = {"passed": 4}


def test_each_tier_is_the_outcome_and_the_final_line_counts_tiers(project: pytest.Pytester) -> None:
    result = run(project, "-v", "-rT", f"--junitxml={project.path / 'junit.xml'}")
    assert result.ret == 0
    assert result.parseoutcomes() == EXPECTED
    result.stdout.fnmatch_lines(
        [
            "*cases/fixtures/clean/case.yaml::clean PASSED (verified_success)*",
            "*cases/fixtures/obelize-fails/case.yaml::obelize-fails PASSED (error)*",
            "*cases/fixtures/refused/case.yaml::refused PASSED (unsupported)*",
            "*cases/fixtures/withheld-part/case.yaml::withheld-part PASSED (partial)*",
        ]
    )
    result.stdout.fnmatch_lines(["partial (1): withheld-part", "verified_success (1): clean"])
    result.stdout.fnmatch_lines(["obelize-fails: fix: obelize_failed; logs: *"])
    assert not [line for line in result.outlines if "ERROR" in line], "a fixture at its expected tier is no ERROR"
    result.stdout.fnmatch_lines(["*= 4 passed in *"])
    junit = (project.path / "junit.xml").read_text(encoding="utf-8")
    assert junit.count('<property name="tier"') == 4
    assert '<property name="tier" value="partial" />' in junit
    assert '<property name="tier" value="error" />' in junit and "<error" not in junit
    assert not (project.path / "results").exists()


def test_progress_letters(project: pytest.Pytester) -> None:
    result = run(project, "-q")
    # sorted ids: clean, obelize-fails, refused, withheld-part
    result.stdout.fnmatch_lines(["V!NH*"])


def test_under_xdist_the_outcomes_are_the_same_and_summarised_once(project: pytest.Pytester) -> None:
    result = run(project, "-p", "xdist", "-n", "2", "-rT")
    assert result.ret == 0
    assert result.parseoutcomes() == EXPECTED
    assert result.stdout.str().count("fixtures: 1 error, 1 unsupported, 1 partial, 1 verified_success") == 1
    assert result.stdout.str().count("partial (1): withheld-part") == 1


def test_fail_on_gates_with_its_own_exit_status(project: pytest.Pytester) -> None:
    result = run(project, "-p", "xdist", "-n", "2", "--bench-fail-on=error,wrong")
    assert result.ret == 6
    result.stdout.fnmatch_lines(["*--bench-fail-on=error,wrong: obelize-fails*"])
    assert run(project, "--bench-fail-on=wrong", "-k", "clean").ret == 0


def test_a_changed_expected_json_fails_the_pass_field_by_field(project: pytest.Pytester) -> None:
    path = project.path / "cases" / "fixtures" / "clean" / "expected.json"
    want = json.loads(path.read_text(encoding="utf-8"))
    want["tier"] = "partial"
    want["measurements"]["detected"] = 5
    path.write_text(json.dumps(want), encoding="utf-8")
    result = run(project, "-k", "clean")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*clean differs from *expected.json:*",
            "*tier: got 'verified_success', expected 'partial'*",
            "*measurements.detected: got 4, expected 5*",
        ]
    )


def test_a_review_of_another_patch_is_not_applied(project: pytest.Pytester) -> None:
    """The clean fixture's answer is keyed to its patch; keyed to another digest, nobody reviewed this one."""
    answers = project.path / "cases" / "fixtures" / "clean" / "reviews.yaml"
    text = answers.read_text(encoding="utf-8")
    digest = text.split("patch_sha256: ", 1)[1].split()[0]
    answers.write_text(text.replace(digest, "ab" * 32), encoding="utf-8")
    result = run(project, "-k", "clean")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*clean differs from *expected.json:*",
            "*tier: got 'patched_unverified', expected 'verified_success'*",
            "*measurements.human_edits: got None, expected 0*",
        ]
    )


def test_update_rewrites_expected_json(project: pytest.Pytester) -> None:
    path = project.path / "cases" / "fixtures" / "refused" / "expected.json"
    path.unlink()
    assert run(project, "-k", "refused").ret == 1
    assert run(project, "-k", "refused", "--bench-update-expected").ret == 0
    assert json.loads(path.read_text(encoding="utf-8"))["tier"] == "unsupported"
    assert run(project, "-k", "refused").ret == 0


def test_a_fixture_with_a_bad_key_stops_the_pass(project: pytest.Pytester) -> None:
    path = project.path / "cases" / "fixtures" / "clean" / "case.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("label: auto", "label: automatic", 1), encoding="utf-8")
    result = run(project)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*clean/case.yaml: case clean: ground_truth.*label: Input should be 'auto' or 'manual'*"]
    )


def test_the_offline_pass_runs_no_other_program(project: pytest.Pytester) -> None:
    path = project.path / "cases" / "fixtures" / "refused" / "case.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("test_cmd: python check.py", "test_cmd: git status"), encoding="utf-8")
    result = run(project, "-k", "refused", "--bench-update-expected", "-rT")
    result.stdout.fnmatch_lines(["error (1): refused"])
    expected = json.loads(
        (project.path / "cases" / "fixtures" / "refused" / "expected.json").read_text(encoding="utf-8")
    )
    assert expected["error"]["reason"] == "program_refused"
    assert "git" in expected["error"]["detail"]


#: Appended to the clean fixture's conftest: its suite fails to start if a plugin of the harness's
#: interpreter was loaded into it (a case's own venv has none of them).
NO_HARNESS_PLUGIN = """
_HARNESS = ("pytest_obelize_bench", "pytest_randomly", "xdist", "hypothesis")
assert not [name for name in _HARNESS if name in sys.modules], sorted(set(_HARNESS) & set(sys.modules))
"""


def test_a_fixture_suite_loads_none_of_the_harness_plugins(project: pytest.Pytester) -> None:
    """The suites run on the harness's interpreter, where this plugin, xdist, randomly and
    hypothesis are installed: none of them may reach a fixture's suite (order, seeds, imports)."""
    conftest = project.path / "cases" / "fixtures" / "clean" / "repo" / "tests" / "conftest.py"
    conftest.write_text(conftest.read_text(encoding="utf-8") + NO_HARNESS_PLUGIN, encoding="utf-8")
    result = run(project, "-k", "clean", "-rT")
    assert result.ret == 0, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(["verified_success (1): clean"])
