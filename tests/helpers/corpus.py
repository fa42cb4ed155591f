"""Local repositories shaped like the real cases, for rounds through the real plugin.

Each is the ``clean`` fixture's summariser (its SDK doubles under ``_vendor/``, so no call
reaches a network) packaged the way real repositories are: a requirements file that pins the
legacy SDK, a ``pyproject.toml`` installed with extras or plainly, a ``src/`` layout, an async
suite that needs pytest-asyncio, and suites where most or all tests skip.  Their reviewed
install commands name files of the checkout, as three rows of ``cases/cases.yaml`` do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.helpers.gitrepo import make_repo
from tests.helpers.rounds import FIXTURES, UPSTREAM_KEY

CLEAN = FIXTURES / "clean" / "repo"
PIN = "google-generativeai==0.8.6"

PYPROJECT = """\
[build-system]
requires = ["setuptools>=69"]
build-backend = "setuptools.build_meta"

[project]
name = "{name}"
version = "0.1.0"
dependencies = ["{pin}"]
{extras}
[tool.setuptools]
{layout}
"""

ASYNC_TAIL = """

async def summarise_async(body):
    return await asyncio.to_thread(summarise, body)
"""

ASYNC_TESTS = '''"""The async entry point, through pytest-asyncio."""

import pytest

import summarizer


@pytest.mark.asyncio
async def test_summarise_async_goes_through_the_model():
    assert await summarizer.summarise_async("a  b") == "gemini-1.5-flash:Summarise in one line: a b"
'''

SKIPPING_TESTS = '''"""Most of this suite needs a live key and skips without one."""

import pytest

import summarizer

LIVE = pytest.mark.skip(reason="needs GEMINI_API_KEY and the network")


@LIVE
def test_live_one():
    summarizer.summarise("x")


@LIVE
def test_live_two():
    summarizer.summarise("y")


@LIVE
def test_live_three():
    summarizer.summarise("z")


@LIVE
def test_live_four():
    summarizer.summarise("w")
'''


@dataclass(frozen=True)
class Shape:
    """One repository of the corpus and the tier its design implies under obelize 0.8.0."""

    name: str
    owner: str
    module: str  # where summarizer.py sits
    install: list[str]
    test_cmd: str
    manifest: tuple[str, int]
    tier: str
    after_counts: tuple[int, int, int]  # passed, failed, skipped of the after-run
    files: dict[str, str | bytes] = field(default_factory=dict)
    drop: tuple[str, ...] = ()


def _clean_files() -> dict[str, str | bytes]:
    return {
        path.relative_to(CLEAN).as_posix(): path.read_bytes()
        for path in sorted(CLEAN.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def _pyproject(name: str, *, extras: bool, src: bool) -> str:
    extra_text = '\n[project.optional-dependencies]\ngemini = []\ndev = ["pytest==8.3.3"]\n' if extras else ""
    layout = 'packages = ["summ"]\npackage-dir = {"" = "src"}\n' if src else 'py-modules = ["summarizer"]\n'
    return PYPROJECT.format(name=name, pin=PIN, extras=extra_text, layout=layout)


def shapes() -> list[Shape]:
    summarizer = (CLEAN / "summarizer.py").read_text(encoding="utf-8")
    conftest = (CLEAN / "tests" / "conftest.py").read_text(encoding="utf-8")
    return [
        Shape(
            "req-pin",
            "ana",
            "summarizer.py",
            ["uv pip install -r requirements.txt"],
            "pytest",
            ("requirements.txt", 1),
            "verified_success",
            (2, 0, 0),
            files={"requirements.txt": f"{PIN}\npytest==8.3.3\n"},
        ),
        Shape(
            "pyproject-extras",
            "ben",
            "summarizer.py",
            ['uv pip install -e ".[gemini,dev]"'],
            "python -m pytest tests -q",
            ("pyproject.toml", 8),
            "verified_success",
            (2, 0, 0),
            files={"pyproject.toml": _pyproject("summ-extras", extras=True, src=False)},
            drop=("requirements.txt",),
        ),
        Shape(
            "pyproject-plain",
            "cyd",
            "summarizer.py",
            ["uv pip install .", "uv pip install pytest==8.3.3"],
            "python -m pytest tests -q",
            ("pyproject.toml", 8),
            "verified_success",
            (2, 0, 0),
            files={"pyproject.toml": _pyproject("summ-plain", extras=False, src=False)},
            drop=("requirements.txt",),
        ),
        Shape(
            "src-layout",
            "dee",
            "src/summ/summarizer.py",
            ["uv pip install -e .", "uv pip install pytest==8.3.3"],
            "python -m pytest tests -q",
            ("pyproject.toml", 8),
            "verified_success",
            (2, 0, 0),
            files={
                "pyproject.toml": _pyproject("summ-src", extras=False, src=True),
                "src/summ/__init__.py": "",
                "src/summ/summarizer.py": summarizer,
                "tests/conftest.py": conftest.replace("str(ROOT)]", 'str(ROOT / "src" / "summ")]'),
            },
            drop=("requirements.txt", "summarizer.py"),
        ),
        Shape(
            "async-suite",
            "eli",
            "summarizer.py",
            ["uv pip install pytest==8.3.3 pytest-asyncio==0.24.0"],
            "python -m pytest tests -q",
            ("requirements.txt", 1),
            "verified_success",
            (3, 0, 0),
            files={
                "summarizer.py": summarizer.replace("import os\n", "import asyncio\nimport os\n", 1) + ASYNC_TAIL,
                "tests/test_async.py": ASYNC_TESTS,
            },
        ),
        Shape(
            "mostly-skips",
            "fay",
            "summarizer.py",
            ["uv pip install pytest==8.3.3"],
            "python -m pytest tests -q",
            ("requirements.txt", 1),
            "verified_success",
            (2, 0, 4),
            files={"tests/test_live.py": SKIPPING_TESTS},
        ),
        Shape(
            "all-skip",
            "gus",
            "summarizer.py",
            ["uv pip install pytest==8.3.3"],
            "python -m pytest tests -q",
            ("requirements.txt", 1),
            "patched_unverified",
            (0, 0, 4),
            files={"tests/test_live.py": SKIPPING_TESTS},
            drop=("tests/test_summarizer.py",),
        ),
    ]


def build(shape: Shape, root: Path) -> dict[str, Any]:
    """Commit the shape to a local origin and return its case row."""
    files = _clean_files()
    for name in shape.drop:
        files.pop(name, None)
    files.update(shape.files)
    repo = make_repo(root / "origins" / shape.name, files)
    lines = {
        5: ("import", "google.generativeai"),
        7: ("call", "google.generativeai.configure"),
        9: ("call", "google.generativeai.GenerativeModel"),
        19: ("method_call", "google.generativeai.GenerativeModel.generate_content"),
    }
    offset = 1 if shape.name == "async-suite" else 0  # the added `import asyncio` moves every line down
    call_sites = [
        {"path": shape.module, "line": line + offset, "kind": kind, "symbol": symbol, "label": "auto"}
        for line, (kind, symbol) in lines.items()
    ]
    manifest_path, manifest_line = shape.manifest
    return {
        "id": f"{shape.owner}__{shape.name}",
        "provider": "gemini",
        "change": "google-generativeai-to-google-genai",
        "from_version": "0.8.6",
        "to_version": "2.24.0",
        "full_name": f"{shape.owner}/{shape.name}",
        "owner": shape.owner,
        "repo": repo.url,
        "sha": repo.head,
        "license": "MIT",
        "split": "dev",
        "has_test_files": True,
        "pattern_key": sorted({site["symbol"] for site in call_sites}),
        "python": UPSTREAM_KEY,
        "install": shape.install,
        "test_cmd": shape.test_cmd,
        "tests_require_network": False,
        "ground_truth": {
            "what_it_is": f"The summariser packaged as {shape.name}.",
            "files_read": sorted({shape.module, manifest_path}),
            "call_sites": call_sites,
            "manifests": [
                {"path": manifest_path, "line": manifest_line, "symbol": "google-generativeai", "label": "auto"}
            ],
            "must_not_report": [],
            "tests_cover_change": True,
            "tests_cover_change_why": "The suite calls summarise(), which runs every migrated line.",
        },
        "reviewer": "tester",
        "reviewed_at": "2026-12-01",
        "notes": "A corpus repository shaped like a real case.",
    }


#: The sha256 of the patch obelize 0.8.0 writes for each shape: its review answers for that patch.
PATCH_DIGESTS: dict[str, str] = {
    "req-pin": "035ecb2855078fb32942786b2c7f50785bc80ddf5cc49d2ff4b503d64c06cda9",
    "pyproject-extras": "7b5eede0607f627aa0aaabf1225f66c2c6446e32a7a3dece202b52329029b86b",
    "pyproject-plain": "e4b1f8cd883dd54bb351d9e222eae0a4870f7f501fd3368e90e4e2e4fea040b3",
    "src-layout": "9951528eef73c4bc262dbf4cdfebae841fdb420249cb976432a48c59a93093eb",
    "async-suite": "d6c0b83167caad169a4357a08f278a8cbc7615dc9b503cf53457f41d3dcbeb8f",
    "mostly-skips": "18afd6eb13d6e9c59dea8b7981030a7cf0989d5365841a6505f902614e0f2204",
    "all-skip": "18afd6eb13d6e9c59dea8b7981030a7cf0989d5365841a6505f902614e0f2204",
}


def write_reviews(project: Path, round_number: int = 2) -> Path:
    """``cases/reviews/round-N.yaml``: no edits and correct, for each shape's own patch only."""
    import yaml

    entries = [
        {
            "case": f"{shape.owner}__{shape.name}",
            "patch_sha256": PATCH_DIGESTS[shape.name],
            "human_edits": 0,
            "patch_correct": True,
            "reviewer": "tester",
            "reviewed_at": "2026-12-01",
        }
        for shape in shapes()
    ]
    path = project / "cases" / "reviews" / f"round-{round_number}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"reviews": entries}, sort_keys=False), encoding="utf-8")
    return path
