"""Real rounds for plugin tests: local git origins standing in for GitHub, real everything else.

The repositories are the offline fixtures' repositories, committed to local git repositories
and reached through file:// URLs; the case rows carry the fixtures' hand-written keys. A round
over them runs the real git, uv, PyPI installs of both SDKs, and the real obelize.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from pytest_obelize_bench.case.templates import TEMPLATES_DIR
from pytest_obelize_bench.casefile.cases import load_fixture
from pytest_obelize_bench.session.kernel import worker_addopts
from tests.helpers.gitrepo import GitRepo, make_repo
from tests.helpers.project import PROJECT

FIXTURES = PROJECT / "cases" / "fixtures"
#: A macOS key as the upstream cases have; the tests run with --bench-interpreter=minor.
UPSTREAM_KEY = "cpython-3.12.9-macos-aarch64-none"


def shared_uv_cache() -> Path:
    """One uv cache for every test round on this machine, so PyPI is downloaded once."""
    if os.environ.get("UV_CACHE_DIR"):
        return Path(os.environ["UV_CACHE_DIR"])
    return Path(tempfile.gettempdir()) / "obelize-bench-test-uv-cache"


def origin_from_fixture(name: str, root: Path) -> tuple[str, str]:
    """Commit a fixture's repository to a local origin; return its file:// URL and SHA."""
    source = FIXTURES / name / "repo"
    files: dict[str, str | bytes | None] = {}
    for path in sorted(source.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            files[path.relative_to(source).as_posix()] = path.read_bytes()
    repo = make_repo(root / "origins" / name, files)
    return repo.url, repo.head


def case_row_from_fixture(name: str, owner: str, root: Path, **overrides: Any) -> dict[str, Any]:
    """A corpus row for ``owner/<name>`` whose repository and key are the fixture's."""
    fixture = load_fixture(FIXTURES / name)
    url, sha = origin_from_fixture(name, root)
    truth = fixture.ground_truth.model_dump(mode="json", exclude_none=True)
    row: dict[str, Any] = {
        "id": f"{owner}__{name}",
        "provider": fixture.provider,
        "change": fixture.change,
        "from_version": "0.8.6",
        "to_version": "2.24.0",
        "full_name": f"{owner}/{name}",
        "owner": owner,
        "repo": url,
        "sha": sha,
        "license": "MIT",
        "split": "dev",
        "has_test_files": fixture.test_cmd is not None,
        "pattern_key": sorted({row["symbol"] for row in truth["call_sites"] if row["kind"] != "dynamic"}),
        "python": UPSTREAM_KEY,
        "install": ["uv pip install pytest==8.3.3"] if fixture.test_cmd else [],
        "test_cmd": fixture.test_cmd,
        "tests_require_network": False,
        "ground_truth": truth,
        "reviewer": "tester",
        "reviewed_at": "2026-12-01",
        "notes": f"The {name} fixture, run as a corpus case.",
    }
    if fixture.review is not None:
        row["review"] = fixture.review.model_dump(mode="json")
    row.update(overrides)
    return row


def unfetchable_rows(owners: list[str], root: Path) -> list[dict[str, Any]]:
    """One ``trap-vertex`` row per owner whose repository is gone: each case stops at its fetch, in
    a moment, which is all a test of which case runs when and where needs."""
    rows = [case_row_from_fixture("trap-vertex", owner, root) for owner in owners]
    for row in rows:
        row["repo"] = (root / "gone" / row["owner"]).as_uri()
    return rows


def with_files(row: dict[str, Any], root: Path, files: dict[str, str | bytes | None]) -> dict[str, Any]:
    """``row`` at a new commit of its origin under ``root`` (from ``case_row_from_fixture``) adding ``files``."""
    fixture = str(row["id"]).split("__", 1)[1]
    row["sha"] = GitRepo(root / "origins" / fixture).commit(files, "shape the case")
    return row


def write_case_file(path: Path, cases: list[dict[str, Any]], controls: list[dict[str, Any]] | None = None) -> Path:
    data = {
        "round": 2,
        "reviewer": "tester",
        "reviewed_at": "2026-12-01",
        "from_version": "0.8.6",
        "to_version": "2.24.0",
        "cases": cases,
        "controls": controls or [],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    write_fixture_reviews(path.parent / "reviews" / "round-2.yaml", cases)
    return path


def write_fixture_reviews(path: Path, cases: list[dict[str, Any]], fixtures: dict[str, str] | None = None) -> None:
    """The round's review answers: each fixture's own, for rows made from it (``owner__fixture``).

    An answer is keyed to the patch the fixture's code gets; a row whose files were changed gets
    another patch, which nobody reviewed. ``fixtures`` names the fixture of a row renamed away
    from it (``{"fox__flaky": "clean"}``).
    """
    from pytest_obelize_bench.casefile.reviews import FIXTURE_REVIEWS

    entries = []
    for row in cases:
        fixture = (fixtures or {}).get(str(row["id"])) or str(row["id"]).split("__", 1)[-1]
        answers = FIXTURES / fixture / FIXTURE_REVIEWS
        if answers.is_file():
            for entry in yaml.safe_load(answers.read_text(encoding="utf-8"))["reviews"]:
                entries.append({**entry, "case": row["id"]})
    if entries:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump({"reviews": entries}, sort_keys=False), encoding="utf-8")


def read_records(folder: Path) -> dict[str, dict[str, Any]]:
    """The records of a round folder (or of a run folder), keyed by file name."""
    return {
        path.stem: json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(folder.glob("*.json"))
        if path.name not in ("summary.json", "publication.json", "run.json")
    }


def run_folders(round_folder: Path) -> list[Path]:
    """The run folders of a round, oldest first."""
    runs = round_folder / "runs"
    return sorted(p for p in runs.iterdir() if p.is_dir()) if runs.is_dir() else []


def only_run(round_folder: Path) -> Path:
    """The one run folder of a round a test ran once."""
    found = run_folders(round_folder)
    assert len(found) == 1, found
    return found[0]


def copy_tree(source: Path, destination: Path) -> None:
    shutil.copytree(source, destination, dirs_exist_ok=True)


#: Kept from a developer's shell by no harness run inside a test (see ``inner_environment``).
NOT_INHERITED = ("PYTEST_", "GEMINI", "GITHUB", "PYTHONDONTWRITEBYTECODE")
#: The options of every pytest run inside a test: its items in file order whatever order the outer
#: run uses, and without hypothesis's plugin, which no inner run uses and which imports all of
#: hypothesis in every process it loads into (a quarter of a second each, hundreds of processes).
#: The same plugins a benchmark session sets aside, blocked as its workers block them.
INNER_ADDOPTS = worker_addopts(None)
#: The cutoff of every test round that names none. Rounds at "now" would each resolve at their own
#: moment, so each would key, and build, its own template environments; at one cutoff, the test
#: rounds of a suite run share them (``share_templates``).
TEST_CUTOFF = "2026-12-01T00:00:00Z"
#: The templates folder every test round of this suite run uses unless it names its own.
_SHARED_TEMPLATES: list[Path] = []


def share_templates(folder: Path) -> None:
    """Make ``folder`` the template environments of every later test round (the root conftest does)."""
    _SHARED_TEMPLATES[:] = [folder]


def own_templates(work: Path) -> str:
    """The option that gives a round the templates of its own work root, not the suite run's: for
    a test whose round must build them (one that watches a template made, or fills its work root)."""
    return f"--bench-env-templates={work / TEMPLATES_DIR}"


def inner_addopts() -> str:
    """The options every inner pytest run gets: ``INNER_ADDOPTS``, and for a round, the suite run's
    cutoff and templates; a test that watches templates being built names its own folder after them.

    One key per install across the suite's rounds, built once by whichever round needs it first
    instead of once by every round: about a sixth of the suite's time (``docs/explanation/performance.md``).
    Nor is a template compiled (``--bench-template-bytecode=none``): no fixture's suite imports the
    SDK, and some forty builds at two processor-seconds each would cost the suite a minute; the tests
    of step ``bytecode`` name ``compile``.
    """
    options = [INNER_ADDOPTS, f"--exclude-newer={TEST_CUTOFF}", "--bench-template-bytecode=none"]
    options += [f"--bench-env-templates={folder}" for folder in _SHARED_TEMPLATES]
    return " ".join(options)


def inner_environment() -> dict[str, str]:
    """The environment of a harness run inside a test: the test's own, less what must not reach it.

    Not the outer run's pytest options (``inner_addopts()`` instead), nor credentials of the services
    the rounds stand in for. Nor ``PYTHONDONTWRITEBYTECODE``: a shell that sets it made each of the
    suite's hundreds of inner runs compile the harness, and rewrite the asserts of every pytest
    plugin, from source again; an inner run keeps its bytecode in ``__pycache__`` as Python does
    by default. A case's own steps still write none: the harness sets that for them itself.
    """
    environ = {k: v for k, v in os.environ.items() if not k.startswith(NOT_INHERITED)}
    environ["PYTEST_ADDOPTS"] = inner_addopts()
    environ["UV_CACHE_DIR"] = str(shared_uv_cache())
    return environ


def run_pytest(project: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = inner_environment()
    environ.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", *args],
        cwd=project,
        env=environ,
        capture_output=True,
        text=True,
        check=False,
        timeout=1200,
        stdin=subprocess.DEVNULL,
    )


def local_key() -> str:
    """This machine's interpreter as a case file names one, so a round here runs it with ``exact``."""
    version = ".".join(str(part) for part in sys.version_info[:3])
    return f"cpython-{version}-linux-{platform.machine()}-gnu"
