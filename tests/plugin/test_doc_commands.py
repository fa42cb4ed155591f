"""Every shell command of README and the documentation pages, pasted as written.

Each command a page shows either runs here as pasted and exits 0, or is named below with the
reason it cannot (it needs the network or a real repository, names a placeholder the reader fills
in, starts a server, rewrites a published document, is this suite itself, or is a line of
``.ci/run`` as pasted, which runs it anyway), so a new command on any page is either run or
consciously left out, and a recipe that stops working fails CI. Running them takes about a minute
(the dry run's fixture frame is among them), so that test is marked ``tutorial`` and runs only
when asked for with ``-m tutorial``, as ``.ci/run`` does; the parsing tests run everywhere. The promotion recipe, which
needs two real rounds, has a test of its own (``test_promotion_recipe.py``).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers.doc_commands import shell_commands
from tests.helpers.project import PROJECT

PAGES = [
    PROJECT / "README.md",
    PROJECT / "docs" / "index.md",
    PROJECT / "docs" / "tutorial.md",
    *sorted((PROJECT / "docs" / "how-to").glob("*.md")),
    *sorted((PROJECT / "docs" / "explanation").glob("*.md")),
]
SETUP = 'python3 -m venv .venv && .venv/bin/pip install -e ".[test]"'
ROUND = ".venv/bin/pytest --bench-round=2 -n 8 --bench-interpreter=minor"
FIXTURES_PASS = ".venv/bin/python -m pytest --fixtures-only"
CI_RUNS_IT = ".ci/run runs it as pasted, a line of its own"
PLACEHOLDER = "names a placeholder (RUN, PATH_OR_PIN, FRAME.yaml, SNAPSHOTS, a host) the reader fills in"

#: The commands not run here, each with the reason; matched by their start.
NOT_RUN: dict[str, str] = {
    SETUP: "the set-up itself: PyPI",
    ".venv/bin/python -m pytest -n auto": "this suite itself",
    ".venv/bin/ruff check . && .venv/bin/ruff format --check . && .venv/bin/mypy": ".ci/run runs each of them",
    FIXTURES_PASS + "\n": CI_RUNS_IT,
    ROUND: "a real round: the repositories on GitHub",
    ".venv/bin/pytest --bench-round=2 --bench-repeat": "a real round: the repositories on GitHub",
    ".venv/bin/obelize-bench gate ": PLACEHOLDER + "; test_promotion_recipe.py runs it",
    ".venv/bin/mkdocs serve": "a server that runs until stopped; .ci/run builds the site instead",
    ".venv/bin/python benchmarks/replay_round1.py": "a real replay: repository snapshots",
    ".venv/bin/python -m pytest --bench-round=1 --bench-cases=tests/data/upstream/cases.yaml": "a real replay",
    ".venv/bin/obelize-bench errors collect": "needs a round's run folders and rewrites the collected rows",
    ".venv/bin/obelize-bench summarize\n": "rewrites the results document",
    ".venv/bin/python benchmarks/round_speed.py": "a measurement of round speed, minutes long",
    ".venv/bin/pytest --bench-compare=path/to/your-arm.yaml": PLACEHOLDER,
    ".venv/bin/pytest --bench-dryrun=py-pdf/pypdf2-to-pypdf --bench-frame=FRAME.yaml": PLACEHOLDER,
    ".venv/bin/python benchmarks/snapshot_cache.py": "fills a repository cache from the snapshots, minutes long",
    ".venv/bin/python -m pytest --bench-dryrun=py-pdf/pypdf2-to-pypdf --bench-frame=cases/dryrun/": "real frames",
    ".venv/bin/pytest --bench-gate1": "the Gate 1 frame's real repositories",
    ".venv/bin/obelize-bench publish --run RUN": PLACEHOLDER,
    ".venv/bin/python -m pytest --bench-round=2 --obelize=obelize==0.8.0 --dist=load": PLACEHOLDER,
    ".venv/bin/pytest --bench-round=2 --bench-interpreter=minor --bench-rerun": PLACEHOLDER,
    ".venv/bin/pytest --bench-round=2 --bench-interpreter=minor --lf": "a real round: the repositories on GitHub",
    "UV_CACHE_DIR=~/.cache/obelize-bench-uv .venv/bin/pytest --bench-round=2": "a real round",
    ".venv/bin/obelize-bench review navamai__navamai --run RUN": PLACEHOLDER,
    ".venv/bin/obelize-bench review LJX2017__A-Song-of-Ice-and-Fire --round 2 --run RUN": PLACEHOLDER,
    ".venv/bin/obelize-bench regrade --round 2 --write": "rewrites the published records from the reviews",
    "for pack in gemini/": "three real dry runs over the frames' repositories, each published",
    ".venv/bin/pytest --bench-round=3 --bench-cases=cases/cases-round-3.yaml": "a real round: round 3's repositories",
    ".venv/bin/obelize-bench gate --incumbent round-3:RUN_070": PLACEHOLDER,
    "for version in 0.1.0 0.2.0 0.3.0 0.4.0 0.5.0 0.6.0 0.7.0 0.8.0; do .venv/bin/pytest": "eight real rounds",
    "for version in 0.1.0 0.2.0 0.3.0 0.4.0 0.5.0 0.6.0 0.7.0 0.8.0; do .venv/bin/python -m pytest --bench-dryrun": (
        "eight real dry runs of a frame"
    ),
    ".venv/bin/python benchmarks/release_history.py --repo-cache": "every release on round 2 and the frames",
    ".venv/bin/obelize-bench history --frame openai/openai-0-to-1\n": "rewrites the pack's history.json",
    ".venv/bin/obelize-bench history --round 2": "rewrites results/round-2/history.json; test_history.py runs it",
}


def why_not_run(command: str) -> str | None:
    for start, why in NOT_RUN.items():
        if (command + "\n").startswith(start) or command == start:
            return why
    return None


def page_commands() -> list[tuple[str, str]]:
    """(page, command) for every command of every page, in page order."""
    found = []
    for page in PAGES:
        for command in shell_commands(page.read_text(encoding="utf-8")):
            found.append((page.relative_to(PROJECT).as_posix(), command))
    return found


def offline_commands() -> list[str]:
    """Each command that runs here, once, whichever pages show it."""
    return list(dict.fromkeys(command for _, command in page_commands() if why_not_run(command) is None))


def test_every_page_is_read_and_every_command_not_run_is_still_shown() -> None:
    shown = [command for _, command in page_commands()]
    assert len({page for page, _ in page_commands()}) >= 10
    for start in NOT_RUN:
        assert any((command + "\n").startswith(start) or command == start for command in shown), (
            f"{start!r} is named as not run but no page shows it any more"
        )
    assert FIXTURES_PASS not in offline_commands() and why_not_run(FIXTURES_PASS) == CI_RUNS_IT
    assert ".venv/bin/obelize-bench comparison check --round 1" in offline_commands()
    assert shell_commands("```sh\na \\\n  b   # why\n# note\n```\n```text\nc\n```\n") == ["a    b"]


@pytest.mark.tutorial
@pytest.mark.parametrize("command", offline_commands())
def test_an_offline_command_runs_as_pasted(command: str, tmp_path: Path) -> None:
    if not (PROJECT / ".venv" / "bin" / "python").exists():
        pytest.skip("the pages' commands use the project's .venv (the set-up of Start here)")
    # The default work root is <system temp>/obelize-bench-<uid>: a temp folder of this test's own.
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    before = subprocess.run(["git", "status", "--porcelain"], cwd=PROJECT, capture_output=True, text=True, check=False)
    result = subprocess.run(
        ["bash", "-c", command], cwd=PROJECT, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    assert result.returncode == 0, f"{command}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    after = subprocess.run(["git", "status", "--porcelain"], cwd=PROJECT, capture_output=True, text=True, check=False)
    assert after.stdout == before.stdout, f"{command} changed the project's files"


def test_what_is_left_to_ci_is_a_line_of_ci_run_as_pasted() -> None:
    """A command left out because ``.ci/run`` runs it must be there, word for word, on a line of its own."""
    lines = (PROJECT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    left = [start.strip() for start, why in NOT_RUN.items() if why == CI_RUNS_IT]
    assert left, "no command is left to .ci/run"
    for command in left:
        assert any(line.endswith(f" {command}") for line in lines), f"{command!r} ends no line of .ci/run"
