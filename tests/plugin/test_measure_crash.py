"""Gate 1 and the dry run publish as one transaction: a real session killed at every write it makes
into ``results/``.

A measurement is first published by a session in which one repository's pinned commit could not be
fetched (an infrastructure error, published as ``--bench-publish-with-infra-errors`` allows); the
commit then appears, and a second session over the same frame is killed at its k-th write under
``results/`` (``OBELIZE_BENCH_KILL_AT_WRITE``, ``OBELIZE_BENCH_KILL_UNDER``) for every k until it
finishes. After each kill ``summarize --check`` passes only on a whole measurement, and after one
recovering ``summarize`` the document, its note and the results document's block are wholly the
first session's or wholly the second's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_obelize_bench._util.safe_io import KILL_AT_WRITE_ENV, KILL_UNDER_ENV
from tests.helpers import casefile
from tests.helpers.bench_cli import obelize_bench
from tests.helpers.gitrepo import GitRepo, git, make_repo

G = "google.generativeai"
OPENAI = "openai/openai-0-to-1"
OK = {"app.py": f"import {G} as genai\n\ngenai.configure(api_key='k')\n"}
LATE = ({"bot.py": f"import {G} as genai\n"}, {"bot.py": f"import {G} as genai\n\ngenai.configure(api_key='x')\n"})
OPENAI_OK = {"app.py": "import openai\n\nopenai.api_key = 'k'\n", "requirements.txt": "openai==0.28.1\n"}
OPENAI_LATE = (
    {"chat.py": "import openai\n", "requirements.txt": "openai==0.28.1\n"},
    {
        "chat.py": "import openai\n\n\ndef ask(q):\n"
        '    return openai.ChatCompletion.create(model="gpt-4", messages=[{"role": "user", "content": q}])\n',
        "requirements.txt": "openai==0.28.1\n",
    },
)
#: What differs between two sessions that published the same thing: who and when, how long, and so
#: the note's digests (which ``summarize --check`` verifies after every recovery).
SESSION_FIELDS = frozenset({"session", "published_at", "run_at", "seconds", "files"})
MODES: dict[str, list[str]] = {"gate1": ["--bench-gate1"], "dryrun": [f"--bench-dryrun={OPENAI}"]}


def _late_repository(folder: Path, versions: tuple[dict[str, str], dict[str, str]]) -> tuple[GitRepo, str]:
    """A repository whose pinned (second) commit is not there yet; (it, the pin)."""
    repo = make_repo(folder, versions[0])
    pin = repo.commit(versions[1])
    git("reset", "-q", "--hard", "HEAD~1", cwd=repo.path)
    git("reflog", "expire", "--expire=now", "--all", cwd=repo.path)
    git("gc", "-q", "--prune=now", cwd=repo.path)
    return repo, pin


def _project(root: Path, mode: str) -> tuple[Path, GitRepo, dict[str, str]]:
    project = root / "project"
    casefile.write(project / "cases" / "cases.yaml", casefile.standard())
    ok_files, late_files = (OK, LATE) if mode == "gate1" else (OPENAI_OK, OPENAI_LATE)
    ok = make_repo(root / "origin" / "ok", ok_files)
    late, pin = _late_repository(root / "origin" / "late", late_files)
    rows = [
        {"full_name": "o/ok", "owner": "o", "url": ok.url, "sha": ok.head, "license": "MIT", "band": "size:<1000"},
        {"full_name": "o/late", "owner": "o", "url": late.url, "sha": pin, "license": "MIT", "band": "size:<1000"},
    ]
    if mode == "gate1":
        frame = project / "cases" / "gate1" / "sample.yaml"
        sample = {
            "queried_at": "2026-12-01T00:00:00Z",
            "term": "generativeai",
            "bands": [{"band": "size:<1000", "population": 2, "allocated": 2, "drawn": 2}],
            "population": 2,
            "repositories": rows,
        }
        key = {
            "repository": "o/ok",
            "url": ok.url,
            "sha": ok.head,
            "band": "size:<1000",
            "license": "MIT",
            "labeller": "tests",
            "labelled_at": "2026-12-01",
            "what_it_is": "a repository written for the tests",
            "files_read": ["app.py"],
            "call_sites": [
                {"path": "app.py", "line": 1, "kind": "import", "symbol": G},
                {"path": "app.py", "line": 3, "kind": "call", "symbol": f"{G}.configure"},
            ],
        }
        (frame.parent / "labels").mkdir(parents=True)
        (frame.parent / "labels" / "o__ok.yaml").write_text(yaml.safe_dump(key, sort_keys=False), encoding="utf-8")
    else:
        frame = project / "frames" / "openai.yaml"
        frame.parent.mkdir(parents=True)
        sample = {"term": "openai.ChatCompletion", "pack": OPENAI, "repositories": rows}
    frame.write_text(yaml.safe_dump(sample, sort_keys=False), encoding="utf-8")
    return project, late, {"bot.py" if mode == "gate1" else "chat.py": pin}


def _session(
    project: Path, mode: str, work: str, *extra: str, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    frame = "cases/gate1/sample.yaml" if mode == "gate1" else "frames/openai.yaml"
    return subprocess.Popen(
        [
            sys.executable, "-m", "pytest", *MODES[mode], f"--bench-frame={frame}", "--bench-results=results",
            f"--bench-work={project.parent / work}", "-p", "no:cacheprovider", "-p", "no:randomly", *extra,
        ],
        cwd=project,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip


def _measurement(project: Path, mode: str) -> dict[str, Any]:
    """The published measurement, session fields aside: its files' contents and the document's block."""
    results = project / "results"
    folder = results / ("gate1" if mode == "gate1" else "dryrun/openai__openai-0-to-1")
    state: dict[str, Any] = {}
    for path in sorted(folder.iterdir()):
        # the release a dry run keeps (releases/<release>/) is a publication of its own: summarize --check
        # holds it to its note, so a check that passes sees it whole
        if path.name == ".publish.lock" or path.is_dir():
            continue
        text = path.read_text(encoding="utf-8")
        state[path.name] = _scrub(json.loads(text)) if path.suffix == ".json" else text
    document = (results / "BENCHMARK_RESULTS.md").read_text(encoding="utf-8")
    state["document"] = [line for line in document.splitlines() if not line.startswith("| Run at |")]
    return state


def _scrub(data: Any) -> Any:
    if isinstance(data, dict):
        return {key: _scrub(value) for key, value in data.items() if key not in SESSION_FIELDS}
    if isinstance(data, list):
        return [_scrub(value) for value in data]
    return data


@pytest.fixture(params=sorted(MODES), scope="module")
def published(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Any, Any]:
    """A project whose measurement was published with one infrastructure error, the commit now
    there, and (old, new): the measurement before and after a second session that finishes."""
    mode: str = request.param
    root = tmp_path_factory.mktemp(mode)
    project, late, files = _project(root, mode)
    first = _session(project, mode, "work-first", "--bench-publish-with-infra-errors")
    output = first.communicate(timeout=300)[0]
    assert first.returncode == 0 and "records written:" in output, output
    assert obelize_bench("summarize", cwd=project)[0] == 0  # the figures beside the block
    old = _measurement(project, mode)
    pin = next(iter(files.values()))
    assert late.commit((LATE if mode == "gate1" else OPENAI_LATE)[1]) == pin  # the commit appears
    finished = root / "finished"
    shutil.copytree(project, finished / "project")
    second = _session(finished / "project", mode, "work-finished")
    output = second.communicate(timeout=300)[0]
    assert second.returncode == 0 and "records written:" in output, output
    new = _measurement(finished / "project", mode)
    assert new != old
    return project, mode, old, new


@pytest.mark.slow
def test_every_crash_point_of_a_measurement_publication_leaves_the_old_or_the_new_one(
    published: tuple[Path, str, Any, Any], tmp_path: Path
) -> None:
    template, mode, old, new = published
    outcomes = []
    for k in range(1, 30):
        project = tmp_path / f"k{k}" / "project"
        shutil.copytree(template, project)
        env = {KILL_AT_WRITE_ENV: str(k), KILL_UNDER_ENV: str(project / "results")}
        process = _session(project, mode, f"work-{k}", env=env)
        output = process.communicate(timeout=300)[0]
        if process.returncode == 0:  # fewer than k writes under results/: it ran to its end
            assert "records written:" in output, output
            break
        assert process.returncode == -9, output
        status, text = obelize_bench("summarize", "--check", cwd=project)
        if status == 0:  # a check that passes sees a whole measurement
            assert _measurement(project, mode) in (old, new), f"k={k}: the check passed on a mixed measurement"
        recovery, text = obelize_bench("summarize", cwd=project)
        assert recovery == 0, f"k={k}: {text}"
        state = _measurement(project, mode)
        whole = "old" if state == old else "new" if state == new else None
        assert whole is not None, f"k={k}: neither the old measurement nor the new one after recovery:\n{text}"
        assert obelize_bench("summarize", "--check", cwd=project)[0] == 0, f"k={k}: {text}"
        leftovers = [p for p in (project / "results").rglob(".*") if p.name not in (".publish.lock", ".document.lock")]
        assert not leftovers, f"k={k}: {leftovers}"
        outcomes.append(whole)
        shutil.rmtree(project.parent)
    assert len(outcomes) >= 4, outcomes  # the journal, the document, the note, the block, the journal's removal
    assert outcomes[0] == "old" and outcomes[-1] == "new", outcomes
