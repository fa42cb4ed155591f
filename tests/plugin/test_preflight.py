"""Preflight: the pure parts, then the real plugin stopping a round whose repository is out of reach."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from pytest_obelize_bench.casefile.cases import load_case_file
from pytest_obelize_bench.isolation.executor import Completed, ProcessExecutor
from pytest_obelize_bench.session.preflight import (
    CASE_DISK_BYTES,
    EarlyInterpreters,
    disk_problem,
    interpreter_probes,
    one_line_per_case,
    repository_probes,
    run_preflight,
)
from tests.helpers import casefile
from tests.helpers.bench_cli import obelize_bench
from tests.helpers.gitrepo import make_repo
from tests.helpers.round_context import round_context


def cli_output(*args: str) -> list[str]:
    return obelize_bench(*args)[1].splitlines()


def cases_of(tmp_path: Path, rows: list[dict[str, object]]) -> list[object]:
    return list(load_case_file(casefile.write(tmp_path / "cases.yaml", casefile.case_file(rows))).cases)


def test_a_url_can_never_become_a_git_option(tmp_path: Path) -> None:
    rows = [casefile.case_row("alpha", "app", repo="https://github.com/alpha/app")]
    probes, cached = repository_probes(cases_of(tmp_path, rows), None)  # type: ignore[arg-type]
    assert cached == []
    argv = probes[0].argv
    assert argv[:2] == ("git", "ls-remote") and argv.index("--end-of-options") < argv.index(
        "https://github.com/alpha/app"
    )


def test_a_cached_repository_needs_no_probe(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (cache / "alpha" / "app.git").mkdir(parents=True)
    (cache / "alpha" / "app.git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    rows = [casefile.case_row("alpha", "app"), casefile.case_row("beta", "lib")]
    probes, cached = repository_probes(cases_of(tmp_path, rows), cache)  # type: ignore[arg-type]
    assert cached == ["alpha__app"] and [p.case for p in probes] == ["beta__lib"]


def test_interpreter_requests_follow_the_policy(tmp_path: Path) -> None:
    cases = cases_of(tmp_path, [casefile.case_row("alpha", "app")])
    exact = interpreter_probes(cases, "exact", "uv")  # type: ignore[arg-type]
    minor = interpreter_probes(cases, "minor", "uv")  # type: ignore[arg-type]
    assert exact[0].argv[-1] == "cpython-3.12.9-macos-aarch64-none"
    assert minor[0].argv[-1].startswith("cpython-3.12-") and "macos" not in minor[0].argv[-1]
    assert "--no-python-downloads" in exact[0].argv


def test_disk_room_is_estimated_per_case_on_disk_at_once(tmp_path: Path) -> None:
    def plenty(_: Path) -> int:
        return 100 * CASE_DISK_BYTES

    def scarce(_: Path) -> int:
        return CASE_DISK_BYTES

    assert disk_problem(tmp_path / "work", 20, False, 2, plenty) is None
    assert disk_problem(tmp_path / "work", 20, False, 1, scarce) is None  # one at a time fits
    line = disk_problem(tmp_path / "work", 20, True, 1, scarce)
    assert line is not None and line.startswith(f"disk: 400 MiB free under {tmp_path}") and "(20 case(s)" in line


def test_each_failing_case_is_one_line() -> None:
    lines = one_line_per_case(
        [
            "b: repository x is unreachable: no",
            "a: interpreter y does not resolve",
            "b: interpreter y does not resolve",
        ],
        ["a", "b"],
    )
    assert lines == [
        "a: interpreter y does not resolve",
        "b: repository x is unreachable: no; interpreter y does not resolve",
    ]


class Recording:
    """The real executor, which also keeps every command it ran."""

    def __init__(self) -> None:
        self.inner = ProcessExecutor()
        self.argvs: list[tuple[str, ...]] = []

    def run(
        self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float, log: Path, step: str = ""
    ) -> Completed:
        self.argvs.append(tuple(argv))
        return self.inner.run(argv, cwd=cwd, env=env, timeout=timeout, log=log, step=step)


def test_the_interpreter_probes_started_early_answer_the_preflight(tmp_path: Path) -> None:
    """The probes run on their thread as the session starts; the preflight, once the cases are known,
    takes their answers and runs none of its own, unless a case asks for what they did not probe."""
    cache = tmp_path / "cache"
    rows = [
        casefile.case_row("alpha", "app"),  # 3.12, which this machine has
        casefile.case_row("beta", "old", python="cpython-3.4.10-linux-x86_64-gnu"),
        casefile.case_row("gamma", "new", python="cpython-3.5.10-linux-x86_64-gnu"),
    ]
    for row in rows:  # every repository cached: no ls-remote
        (cache / str(row["owner"]) / f"{row['full_name'].split('/')[1]}.git").mkdir(parents=True)
        (cache / str(row["owner"]) / f"{row['full_name'].split('/')[1]}.git" / "HEAD").write_text("x\n")
    cases = cases_of(tmp_path, rows)
    context = round_context(tmp_path, repo_cache=str(cache), interpreter_policy="minor")
    first, later = Recording(), Recording()
    early = EarlyInterpreters(cases[:2], context, first)  # type: ignore[arg-type]
    lines = run_preflight(cases[:2], context, executor=later, early=early)  # type: ignore[arg-type]
    assert [line.split(": interpreter ")[0] for line in lines] == ["beta__old"], lines
    assert "cpython-3.4.10-linux-x86_64-gnu does not resolve under --bench-interpreter=minor" in lines[0]
    assert len(first.argvs) == 2 and all(argv[1:3] == ("python", "find") for argv in first.argvs)
    assert later.argvs == []  # answered by the early probes
    # gamma's request was not among them: this preflight probes every request itself
    lines = run_preflight(cases, context, executor=later, early=early)  # type: ignore[arg-type]
    assert [line.split(": interpreter ")[0] for line in lines] == ["beta__old", "gamma__new"], lines
    assert len(later.argvs) == 3 and len(first.argvs) == 2


@pytest.mark.parametrize("repeat", [None, "2"], ids=["once", "repeat-2"])
@pytest.mark.parametrize("workers", [None, "2"])
def test_an_unreachable_repository_stops_the_round_before_any_case_runs(
    pytester: pytest.Pytester, tmp_path: Path, workers: str | None, repeat: str | None
) -> None:
    """Alone, under -n 2, with --bench-repeat=2 and with both: each attempt is ``case[attempt-N]``."""
    good = make_repo(tmp_path / "origins" / "good", {"app.py": "import google.generativeai\n"})
    missing = (tmp_path / "origins" / "gone").as_uri()
    rows = [
        casefile.case_row("alpha", "good", repo=good.url, sha=good.head),
        casefile.case_row("beta", "gone", repo=missing),
    ]
    casefile.write(pytester.path / "cases" / "cases.yaml", casefile.case_file(rows))
    args = ["--bench-round=2", "--bench-allow-dirty", "--bench-interpreter=minor", f"--bench-work={tmp_path / 'work'}"]
    if workers:
        args += ["-n", workers]
    if repeat:
        args += [f"--bench-repeat={repeat}"]
    result = pytester.runpytest_subprocess(*args)
    assert result.ret == 4
    text = result.stdout.str() + result.stderr.str()
    failing = [line for line in result.outlines if line.startswith("preflight: ")]
    assert len(failing) == 1 and failing[0].startswith(f"preflight: beta__gone: repository {missing} is unreachable")
    assert "preflight failed for 1 case(s); nothing ran" in text
    assert "--bench-repo-cache=DIR supplies repositories offline" in text
    round_folder = pytester.path / "results" / "round-2"
    assert not (round_folder / "runs").exists() or list((round_folder / "runs").iterdir()) == []
    assert not [line for line in cli_output("runs", "--results", str(pytester.path / "results")) if "round 2" in line]
    assert not (pytester.path / "results" / "BENCHMARK_RESULTS.md").exists()
    assert not (tmp_path / "work" / "round-2").exists()


@pytest.mark.parametrize("workers", [None, "2"])
def test_an_interpreter_this_machine_lacks_stops_the_round_before_any_case_runs(
    pytester: pytest.Pytester, tmp_path: Path, workers: str | None
) -> None:
    """The probes that answer it started with the session (``EarlyInterpreters``), alone and under -n 2."""
    good = make_repo(tmp_path / "origins" / "good", {"app.py": "import google.generativeai\n"})
    old = make_repo(tmp_path / "origins" / "old", {"app.py": "import google.generativeai\n"})
    rows = [
        casefile.case_row("alpha", "good", repo=good.url, sha=good.head),
        casefile.case_row("beta", "old", repo=old.url, sha=old.head, python="cpython-3.4.10-linux-x86_64-gnu"),
    ]
    casefile.write(pytester.path / "cases" / "cases.yaml", casefile.case_file(rows))
    args = ["--bench-round=2", "--bench-allow-dirty", "--bench-interpreter=minor", f"--bench-work={tmp_path / 'work'}"]
    result = pytester.runpytest_subprocess(*args, *(["-n", workers] if workers else []))
    assert result.ret == 4, result.stdout.str()[-2000:]
    failing = [line for line in result.outlines if line.startswith("preflight: ")]
    said = "preflight: beta__old: interpreter cpython-3.4.10-linux-x86_64-gnu does not resolve under"
    assert len(failing) == 1 and failing[0].startswith(f"{said} --bench-interpreter=minor"), failing
    assert not (tmp_path / "work" / "round-2").exists()


def test_a_selection_that_matches_no_case_leaves_no_run(pytester: pytest.Pytester, tmp_path: Path) -> None:
    casefile.write(pytester.path / "cases" / "cases.yaml", casefile.standard())
    result = pytester.runpytest_subprocess(
        "--bench-round=2", "--bench-allow-dirty", f"--bench-work={tmp_path / 'work'}", "-k", "nosuchcase"
    )
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines(["obelize-bench: no case was selected, so run * was not kept"])
    runs = pytester.path / "results" / "round-2" / "runs"
    assert not runs.exists() or list(runs.iterdir()) == []
    assert cli_output("runs", "--results", str(pytester.path / "results")) == [
        f"no runs under {pytester.path / 'results'}"
    ]


def test_pytest_outside_the_project_says_to_run_from_its_root(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--bench-round=2", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*cases/cases.yaml: missing", "(pytest ran in *: run it from the project root, the folder that holds cases/*"]
    )
