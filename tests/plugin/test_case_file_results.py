"""A round of another case file never lands in the project's results unless a results folder is given."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_obelize_bench.casefile.cases import load_case_file
from pytest_obelize_bench.report.round.publish_round import publish_round
from tests.helpers import casefile
from tests.helpers.gitrepo import git, make_repo
from tests.helpers.runs import write_ended_run


def test_a_round_of_another_case_file_without_bench_results_is_refused(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    own = casefile.write(pytester.path / "cases" / "cases.yaml", casefile.standard())
    results = pytester.path / "results"
    write_ended_run(results, own, "20261201T100000Z-aaaaaa")
    assert publish_round(results, load_case_file(own), 2, "20261201T100000Z-aaaaaa", results_given=False).published
    make_repo(results, message="published")  # the folder as it is, committed
    repo = make_repo(tmp_path / "origins" / "solo", {"app.py": "import google.generativeai\n"})
    other = casefile.case_file([casefile.case_row("omega", "solo", repo=repo.url, sha=repo.head)])
    casefile.write(pytester.path / "elsewhere" / "cases.yaml", other)
    common = ["--bench-round=2", "--bench-allow-dirty", "--bench-interpreter=minor", f"--bench-work={tmp_path / 'w'}"]
    result = pytester.runpytest_subprocess("--bench-cases=elsewhere/cases.yaml", *common)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*nothing ran: round 2 of * belongs to case file cases/cases.yaml, not elsewhere/cases.yaml; "
            "pass --bench-results=DIR *"
        ]
    )
    assert git("status", "--porcelain", "--untracked-files=all", cwd=results) == ""
    assert not (tmp_path / "w" / "round-2").exists()
    # Given explicitly, the results folder is this case file's: the session goes on (to its preflight,
    # which stops it here because the repository is then out of reach).
    (tmp_path / "origins" / "solo").rename(tmp_path / "origins" / "moved")
    given = pytester.runpytest_subprocess(
        "--bench-cases=elsewhere/cases.yaml", f"--bench-results={tmp_path / 'theirs'}", *common
    )
    assert given.ret == 4
    given.stdout.fnmatch_lines(["preflight: omega__solo: repository * is unreachable*"])
    assert "belongs to case file" not in given.stdout.str() + given.stderr.str()
