"""Gate 1 through the real plugin, over local labelled repositories whose figures are computed by hand.

Three repositories, each a local git repository fetched at its pin:

* ``o/alpha``: seven actionable sites; its key labels the last ``send_message`` with the wrong
  symbol (one false positive and one miss) and forbids the line of a ``mock.patch`` target
  string, which obelize reports as a text mention.  TP 6, FP 1, FN 1.
* ``o/quiet``: the SDK reached through a split string, so the scanner reads no file: no
  findings at all.  TP 0, FP 0, FN 1; precision is ``--``.
* ``o/plain``: unlabelled; scanned for the sample-wide figures only.

Pooled by hand: TP 6, FP 1, FN 2, so precision 6/7 and recall 6/8.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.helpers.gitrepo import make_repo

G = "google.generativeai"
ALPHA = {
    "app.py": (
        "import os\n\nimport google.generativeai as genai\n\n"
        'genai.configure(api_key=os.environ.get("GEMINI_API_KEY", "offline"))\n'
        'model = genai.GenerativeModel("gemini-1.5-flash")\n\n\n'
        "def answer(question):\n    return model.generate_content(question).text\n\n\n"
        "def chat(first, second):\n    session = model.start_chat()\n    session.send_message(first)\n"
        "    return session.send_message(second).text\n"
    ),
    "requirements.txt": "google-generativeai==0.8.3\n",
    "tests/test_app.py": (
        "from unittest import mock\n\nimport app\n\n\n"
        '@mock.patch("google.generativeai.GenerativeModel")\ndef test_answer(model):\n    assert app.answer\n'
    ),
}
QUIET = {
    "app.py": (
        'import importlib\n\nsdk = importlib.import_module("google.gener" "ativeai")\n'
        'sdk.configure(api_key="offline")\n'
    )
}
PLAIN = {
    "bot.py": 'import google.generativeai as genai\n\ngenai.configure(api_key="k")\n\n\ndef reply(text):\n'
    '    return genai.GenerativeModel("gemini-1.5-flash").generate_content(text).text\n',
    "requirements.txt": "google-generativeai\n",
}


def _repo_row(name: str, url: str, sha: str) -> dict[str, object]:
    owner = name.split("/")[0]
    return {"full_name": name, "owner": owner, "url": url, "sha": sha, "license": "MIT", "band": "size:<1000"}


def _key(
    name: str, url: str, sha: str, call_sites: list[tuple[str, int, str, str]], **extra: object
) -> dict[str, object]:
    return {
        "repository": name,
        "url": url,
        "sha": sha,
        "band": "size:<1000",
        "license": "MIT",
        "labeller": "tests",
        "labelled_at": "2026-12-01",
        "what_it_is": "a repository written for the tests",
        "files_read": sorted({row[0] for row in call_sites} | {"requirements.txt"}),
        "call_sites": [{"path": p, "line": n, "kind": k, "symbol": s} for p, n, k, s in call_sites],
        **extra,
    }


@pytest.fixture
def frame(pytester: pytest.Pytester, tmp_path: Path) -> Path:
    alpha = make_repo(tmp_path / "origin" / "alpha", ALPHA)
    quiet = make_repo(tmp_path / "origin" / "quiet", QUIET)
    plain = make_repo(tmp_path / "origin" / "plain", PLAIN)
    folder = pytester.path / "gate1"
    (folder / "labels").mkdir(parents=True)
    sample = {
        "queried_at": "2026-12-01T00:00:00Z",
        "term": "generativeai",
        "bands": [{"band": "size:<1000", "population": 3, "allocated": 3, "drawn": 3}],
        "population": 3,
        "repositories": [
            _repo_row("o/alpha", alpha.url, alpha.head),
            _repo_row("o/quiet", quiet.url, quiet.head),
            _repo_row("o/plain", plain.url, plain.head),
        ],
    }
    (folder / "sample.yaml").write_text(yaml.safe_dump(sample, sort_keys=False), encoding="utf-8")
    alpha_key = _key(
        "o/alpha",
        alpha.url,
        alpha.head,
        [
            ("app.py", 3, "import", G),
            ("app.py", 5, "call", f"{G}.configure"),
            ("app.py", 6, "call", f"{G}.GenerativeModel"),
            ("app.py", 10, "method_call", f"{G}.GenerativeModel.generate_content"),
            ("app.py", 14, "method_call", f"{G}.GenerativeModel.start_chat"),
            ("app.py", 15, "method_call", f"{G}.ChatSession.send_message"),
            ("app.py", 16, "method_call", f"{G}.GenerativeModel.send_message"),  # the wrong symbol
        ],
        expected_other=[{"path": "requirements.txt", "line": 1, "kind": "manifest", "symbol": "google-generativeai"}],
        must_not_report=[{"path": "tests/test_app.py", "line": 6, "why": "a patch target string, not a usage"}],
    )
    alpha_key["files_read"] = ["app.py", "requirements.txt", "tests/test_app.py"]
    quiet_key = _key("o/quiet", quiet.url, quiet.head, [("app.py", 4, "call", f"{G}.configure")])
    for name, key in (("o__alpha", alpha_key), ("o__quiet", quiet_key)):
        (folder / "labels" / f"{name}.yaml").write_text(yaml.safe_dump(key, sort_keys=False), encoding="utf-8")
    return folder / "sample.yaml"


def _run(pytester: pytest.Pytester, frame: Path, tmp_path: Path, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        "--bench-gate1",
        f"--bench-frame={frame}",
        f"--bench-results={tmp_path / 'results'}",
        f"--bench-work={tmp_path / 'work'}",
        "-p",
        "no:cacheprovider",
        *args,
    )


def _check_published(tmp_path: Path) -> None:
    scan = json.loads((tmp_path / "results" / "gate1" / "scan.json").read_text(encoding="utf-8"))
    assert [repo["full_name"] for repo in scan["scanned"]] == ["o/alpha", "o/quiet", "o/plain"]
    assert scan["pack"] == "gemini/google-generativeai-to-google-genai" and scan["obelize_version"] == "0.8.0"
    alpha = scan["scanned"][0]
    assert alpha["counts"]["findings"] == len(alpha["findings"]) == 10
    assert alpha["runtime"] == {"declared": None, "blocked": False}
    assert all(
        "evidence" not in row and ("bail" in row) == (row["scan_status"] != "eligible") for row in alpha["findings"]
    )
    assert scan["scanned"][1]["findings"] == [] and scan["scanned"][1]["counts"]["files_parsed"] == 0
    block = (tmp_path / "results" / "BENCHMARK_RESULTS.md").read_text(encoding="utf-8")
    pooled = next(line for line in block.splitlines() if line.startswith("| **All labelled**"))
    assert pooled.startswith("| **All labelled** | 8 | 7 | 6 | 1 | 2 | 85.7% [") and "| 75.0% [" in pooled
    assert "| `o/alpha` | 7 | 7 | 6 | 1 | 1 | 85.7% [" in block
    assert "| `o/quiet` | 1 | 0 | 0 | 0 | 1 | -- | 0.0% [0.0%, 79.3%] |" in block
    assert "| `o/alpha` | 1 | 0 | 2 | 1 |" in block  # other kinds: matched, missing, unexpected, forbidden
    assert "| Repositories with a zero-bail file | 3 | 2 |" in block


def test_gate1_scans_matches_and_publishes_hand_computed_figures(
    pytester: pytest.Pytester, frame: Path, tmp_path: Path
) -> None:
    result = _run(pytester, frame, tmp_path, "-v")
    assert result.ret == 0, result.stdout.str()
    out = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "gate1/sample.yaml::o__alpha R=85.7%*",
            "gate1/sample.yaml::o__quiet R=0.0%*",
            "gate1/sample.yaml::o__plain SCANNED * findings*",
        ]
    )
    assert "2 labelled, 1 scanned" in out
    result.stdout.fnmatch_lines(
        [
            "o/alpha: 7 labelled, 7 findings, TP 6 FP 1 missed 1, forbidden 1; precision 85.7% *, recall 85.7% *",
            "o/quiet: 1 labelled, 0 findings, TP 0 FP 0 missed 1, forbidden 0; precision --, recall 0.0% *",
            "  precision 85.7% * (n=7 findings), recall 75.0% * (n=8 labelled rows)",
        ]
    )
    _check_published(tmp_path)


def test_gate1_under_xdist_publishes_the_same_figures(pytester: pytest.Pytester, frame: Path, tmp_path: Path) -> None:
    result = _run(pytester, frame, tmp_path, "-n", "2")
    assert result.ret == 0, result.stdout.str()
    _check_published(tmp_path)


def test_a_k_selection_runs_and_reports_but_never_publishes(
    pytester: pytest.Pytester, frame: Path, tmp_path: Path
) -> None:
    result = _run(pytester, frame, tmp_path, "-k", "alpha")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        ["not published: 1 of 3 repositories of the frame ran, and a partial run is never published"]
    )
    assert not (tmp_path / "results").exists()


def test_collect_only_and_the_labelled_marker(pytester: pytest.Pytester, frame: Path, tmp_path: Path) -> None:
    result = _run(pytester, frame, tmp_path, "--collect-only", "-q", "-m", "labelled", "--strict-markers")
    assert result.ret == 0
    assert [line for line in result.outlines if "::" in line] == [
        "gate1/sample.yaml::o__alpha",
        "gate1/sample.yaml::o__quiet",
    ]
    assert not (tmp_path / "work").exists()


def test_an_unfetchable_repository_is_an_error_record_and_the_rest_go_on(
    pytester: pytest.Pytester, frame: Path, tmp_path: Path
) -> None:
    data = yaml.safe_load(frame.read_text(encoding="utf-8"))
    data["repositories"][2]["sha"] = "0" * 40
    frame.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    result = _run(pytester, frame, tmp_path, "-v")
    assert result.ret == 0
    assert "ERROR" in result.stdout.str()
    result.stdout.fnmatch_lines(["not published: 1 repositories errored for infrastructure reasons (o/plain)*"])
    assert not (tmp_path / "results").exists()
    result = _run(pytester, frame, tmp_path, "--bench-publish-with-infra-errors")
    assert result.ret == 0
    scan = json.loads((tmp_path / "results" / "gate1" / "scan.json").read_text(encoding="utf-8"))
    plain = scan["scanned"][2]
    assert plain["error"].startswith("fetch: fetch_failed:") and plain["findings"] == [] and plain["counts"] is None


def test_a_bad_key_stops_the_session_with_one_line(pytester: pytest.Pytester, frame: Path, tmp_path: Path) -> None:
    key = frame.parent / "labels" / "o__quiet.yaml"
    data = yaml.safe_load(key.read_text(encoding="utf-8"))
    data["call_sites"][0]["line"] = 0
    key.write_text(yaml.safe_dump(data), encoding="utf-8")
    result = _run(pytester, frame, tmp_path)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"{key}: o/quiet: call_sites.0.line: Input should be greater than or equal to 1 (got 0)"]
    )
