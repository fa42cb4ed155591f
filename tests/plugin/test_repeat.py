"""``--bench-repeat=K`` through the real plugin: one item per attempt, each in a fresh tree.

The fast tests use the offline fixtures pass; the slow one runs a real round over local git
repositories, one of whose suites fails at random, seeded by the attempt's checkout folder.
"""

from __future__ import annotations

import ast
import json
import random
import shutil
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from pytest_obelize_bench.grading.record import read_round, read_round_attempts
from pytest_obelize_bench.grading.repeatability import attempt_facts, round_repeatability
from tests.helpers import casefile, rounds
from tests.helpers.gitrepo import make_repo

FIXTURES = Path(__file__).resolve().parents[2] / "cases" / "fixtures"


def test_each_attempt_is_an_item_of_its_own(pytester: pytest.Pytester) -> None:
    casefile.write(pytester.path / "cases" / "cases.yaml", casefile.standard())
    result = pytester.runpytest("--bench-round=2", "--bench-repeat=3", "--collect-only", "-q")
    names = [line for line in result.stdout.lines if "::" in line]
    cases = sorted({name.split("::")[1].split("[")[0] for name in names})
    assert len(names) == 3 * len(cases) and cases
    first = cases[0]
    assert [n.split("::")[1] for n in names[:3]] == [f"{first}[attempt-{k}]" for k in (1, 2, 3)]
    firsts = pytester.runpytest("--bench-round=2", "--bench-repeat=3", "--collect-only", "-q", "-k", "attempt-1")
    assert [line.split("::")[1] for line in firsts.stdout.lines if "::" in line] == [f"{c}[attempt-1]" for c in cases]
    one = pytester.runpytest("--bench-round=2", "--collect-only", "-q")
    assert [line.split("::")[1] for line in one.stdout.lines if "::" in line] == cases


@pytest.mark.parametrize("flags", [["--bench-round=2"], ["--bench-round=2", "--bench-repeat=2"]])
def test_the_benchmark_order_is_the_harness_own_whatever_pytest_randomly_would_do(
    pytester: pytest.Pytester, flags: list[str]
) -> None:
    casefile.write(pytester.path / "cases" / "cases.yaml", casefile.standard())

    def order(seed: str) -> list[str]:
        result = pytester.runpytest_subprocess(*flags, "-p", "randomly", "-p", "no:cacheprovider",
                                               f"--randomly-seed={seed}", "--collect-only", "-q")  # fmt: skip
        return [line for line in result.stdout.lines if "::" in line]

    first = order("1")
    assert len(first) > 2 and first == order("2") == order("31337")
    cases = [line.split("::")[1].split("[")[0] for line in first]
    assert cases == sorted(cases)  # a first round: no durations yet, so the case file's order


def test_a_benchmark_session_blocks_hypothesis_and_randomly_and_leaves_them_to_other_sessions(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """hypothesis's plugin imports all of hypothesis in its terminal summary (about 0.16 s a session);
    pytest-randomly would reseed ``random`` before each item and print a seed that orders nothing.  A
    benchmark session goes without both, on the controller and on workers, and its workers never
    import them (pytest-randomly imports numpy): they start with both blocked in ``PYTEST_ADDOPTS``,
    after the options the user put there."""
    shutil.copytree(FIXTURES / "clean", pytester.path / "cases" / "fixtures" / "clean")
    seen = pytester.path / "seen"
    seen.mkdir()
    pytester.makeconftest(
        f"""
        import os, sys
        from pathlib import Path

        def pytest_sessionstart(session):
            # the worker id from xdist's own input: an outer xdist run sets PYTEST_XDIST_WORKER for all
            where = getattr(session.config, "workerinput", {{}}).get("workerid", "controller")
            manager = session.config.pluginmanager
            loaded = [manager.has_plugin(name) for name in ("hypothesispytest", "randomly")]
            facts = [loaded, "pytest_randomly" in sys.modules, os.environ.get("PYTEST_ADDOPTS")]
            (Path({str(seen)!r}) / where).write_text(repr(facts))
        """
    )
    # Installed plugins load as they would for a user: the inner runs' options less their blocks.
    users = " ".join(["-p no:cacheprovider", rounds.inner_addopts().replace(rounds.INNER_ADDOPTS, "").strip()])
    monkeypatch.setenv("PYTEST_ADDOPTS", users)
    work = f"--bench-work={tmp_path_factory.mktemp('work')}"  # outside the project with the conftest
    bench = pytester.runpytest_subprocess("--fixtures-only", work, "-n", "2")
    assert bench.ret == 0, bench.stdout.str()[-3000:]
    found = {path.name: ast.literal_eval(path.read_text()) for path in seen.iterdir()}
    # The controller had imported pytest-randomly before any hook of the plugin ran: the check sees it.
    assert found.pop("controller") == [[False, False], True, users]
    blocked = f"{users} -p no:hypothesispytest -p no:randomly"
    assert found == {worker: [[False, False], False, blocked] for worker in ("gw0", "gw1")}
    assert "randomly-seed" not in bench.stdout.str()
    # Another session keeps both (named here as well, as a user asking for a seed would).
    on = ("-p", "hypothesispytest", "-p", "randomly", "--randomly-seed=7", "-p", "no:cacheprovider")
    other = pytester.runpytest_subprocess("--collect-only", *on)
    assert ast.literal_eval((seen / "controller").read_text())[0] == [True, True], other.stdout.str()
    assert "Using --randomly-seed=7" in other.stdout.str()


def test_k_must_be_at_least_one(pytester: pytest.Pytester) -> None:
    casefile.write(pytester.path / "cases" / "cases.yaml", casefile.standard())
    result = pytester.runpytest("--bench-round=2", "--bench-repeat=0", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--bench-repeat: K must be at least 1*"])


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_the_fixtures_pass_repeats_every_fixture_in_fresh_trees(pytester: pytest.Pytester, workers: list[str]) -> None:
    for name in ("clean", "refused"):
        shutil.copytree(FIXTURES / name, pytester.path / "cases" / "fixtures" / name)
    work = pytester.path / "work"
    result = pytester.runpytest_subprocess(
        "--fixtures-only", "--bench-repeat=2", "-p", "no:cacheprovider", f"--bench-work={work}", "-v", *workers
    )
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert result.parseoutcomes() == {"passed": 4}  # each attempt of each fixture at its expected tier
    out = result.stdout.str()
    assert out.count("PASSED (verified_success)") == 2 and out.count("PASSED (unsupported)") == 2
    for attempt in (1, 2):
        item = f"cases/fixtures/clean/case.yaml::clean[attempt-{attempt}]"
        assert any(item in line and "PASSED (verified_success)" in line for line in result.stdout.lines), item
    logs = work / "fixtures"
    attempts = {
        json.loads((logs / folder / "record.json").read_text(encoding="utf-8"))["attempt"]
        for folder in ("clean.logs", "clean.attempt-2.logs")
    }
    assert attempts == {1, 2}
    assert (logs / "clean").is_dir() and (logs / "clean.attempt-2").is_dir()


# -- a real round --------------------------------------------------------------------------

SALT = "15"
LUCK_TEST = f'''
import random
from pathlib import Path


def test_luck():
    # The checkout folder is <case> for the first attempt and <case>.attempt-N for repeats.
    folder = Path(__file__).resolve().parents[1].name
    assert random.Random("{SALT}:" + folder).random() < 0.5
'''


def luck(folder: str) -> bool:
    """What LUCK_TEST decides in a checkout folder of that name."""
    return random.Random(f"{SALT}:{folder}").random() < 0.5


@pytest.fixture(scope="module")
def repeated_round(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    from tests.helpers.rounds import run_pytest

    root = tmp_path_factory.mktemp("repeat")
    project = root / "project"
    source = FIXTURES / "clean" / "repo"
    files: dict[str, str | bytes | None] = {
        path.relative_to(source).as_posix(): path.read_bytes()
        for path in sorted(source.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }
    files["tests/test_luck.py"] = LUCK_TEST
    flaky = make_repo(root / "origins" / "flaky", files)
    cases = [
        rounds.case_row_from_fixture("clean", "ann", root),
        rounds.case_row_from_fixture("clean", "fox", root / "fox", repo=flaky.url, sha=flaky.head, split="holdout"),
    ]
    cases[1]["id"] = "fox__flaky"
    cases[1]["full_name"] = "fox/flaky"
    rounds.write_case_file(project / "cases" / "cases.yaml", cases)
    # the renamed case writes clean's patch, so clean's review answers for it
    rounds.write_fixture_reviews(project / "cases" / "reviews" / "round-2.yaml", cases, {"fox__flaky": "clean"})
    done = run_pytest(
        project,
        "--bench-round=2",
        "--bench-repeat=3",
        "--bench-allow-dirty",
        "--bench-interpreter=minor",
        f"--bench-work={root / 'work'}",
        "-n",
        "2",
    )
    return project, done


@pytest.mark.usefixtures("index_uv_cache")
def test_k3_gives_three_records_per_case(repeated_round: tuple[Path, Any]) -> None:
    project, done = repeated_round
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    folder = project / "results" / "round-2"
    names = sorted(p.name for p in folder.glob("*.json") if p.name not in ("summary.json", "publication.json"))
    note = json.loads((folder / "publication.json").read_text(encoding="utf-8"))
    assert sorted(note["repeats"]) == [name.removesuffix(".json") for name in names if ".attempt-" in name]
    assert names == [
        "ann__clean.attempt-2.json",
        "ann__clean.attempt-3.json",
        "ann__clean.json",
        "fox__flaky.attempt-2.json",
        "fox__flaky.attempt-3.json",
        "fox__flaky.json",
    ]
    attempts = read_round_attempts(folder)
    assert {case: [r.attempt for r in records] for case, records in attempts.items()} == {
        "ann__clean": [1, 2, 3],
        "fox__flaky": [1, 2, 3],
    }
    assert (folder / "artefacts" / "fox__flaky.attempt-3.json").is_file()
    # the headline reads the first attempt only
    assert {case: r.attempt for case, r in read_round(folder).items()} == {"ann__clean": 1, "fox__flaky": 1}


@pytest.mark.usefixtures("index_uv_cache")
def test_a_suite_that_fails_at_random_is_flaky_and_pass_hat_k_is_as_computed_by_hand(
    repeated_round: tuple[Path, Any],
) -> None:
    project, done = repeated_round
    assert done.returncode == 0, done.stdout[-4000:]
    folders = ["fox__flaky", "fox__flaky.attempt-2", "fox__flaky.attempt-3"]
    predicted = [luck(name) for name in folders]
    assert predicted == [True, False, True]  # the seed gives a mixed pattern, or the test proves nothing
    attempts = read_round_attempts(project / "results" / "round-2")
    flaky_tiers = [r.tier for r in attempts["fox__flaky"]]
    assert flaky_tiers == ["verified_success" if ok else "patched_unverified" for ok in predicted]
    assert [r.measurements.tests_baseline.status for r in attempts["fox__flaky"]] == ["pass", "fail", "pass"]
    assert [r.tier for r in attempts["ann__clean"]] == ["verified_success"] * 3

    summary = round_repeatability(
        attempt_facts(r, rows_total=5, artefacts=None) for records in attempts.values() for r in records
    )
    by_case = {c.case: c for c in summary.cases}
    assert by_case["fox__flaky"].flaky and by_case["fox__flaky"].baseline_flaky
    assert not by_case["ann__clean"].flaky
    # fox: 2 of 3 -> C(2,1)/C(3,1), C(2,2)/C(3,2), C(2,3)/C(3,3); ann: 3 of 3 -> 1, 1, 1
    fox = (Fraction(2, 3), Fraction(1, 3), Fraction(0))
    assert by_case["fox__flaky"].pass_hat == pytest.approx(tuple(float(v) for v in fox))
    assert summary.pass_hat == pytest.approx(tuple(float((v + 1) / 2) for v in fox))


@pytest.mark.usefixtures("index_uv_cache")
def test_the_document_reports_the_repeats_and_the_headline_counts_attempt_one(repeated_round: tuple[Path, Any]) -> None:
    project, done = repeated_round
    assert done.returncode == 0, done.stdout[-4000:]
    document = (project / "results" / "BENCHMARK_RESULTS.md").read_text(encoding="utf-8")
    block = document.split("#### Repeatability", 1)[1]
    assert "| Flaky cases | `fox__flaky` |" in block
    assert "| Flaky baselines | `fox__flaky` |" in block
    # (2/3 + 1) / 2, (1/3 + 1) / 2, (0 + 1) / 2
    assert "| pass^1 | 83.3% |" in block and "| pass^2 | 66.7% |" in block and "| pass^3 | 50.0% |" in block
    assert "counts the first attempt of each case only" in block
    summary = json.loads((project / "results" / "round-2" / "summary.json").read_text(encoding="utf-8"))
    assert summary["repeatability"]["flaky"] == ["fox__flaky"]
    headline = next(row for row in summary["headline"] if row["scope"] == "cases" and row["split"] == "all")
    assert (headline["k"], headline["n"]) == (2, 2)  # first attempts: both verified_success
    # pytest's own closing line counts every attempt, each its own item
    assert "5 verified_success, 1 patched_unverified" in done.stdout.strip().splitlines()[-1]
