"""The error analysis of a real round: the plugin runs obelize over local repositories, then
``errors collect`` and ``errors check`` work from what the round stored, run folders gone.

Three cases, each chosen for what obelize 0.8.0 does with it:

* ``bob__withheld-part`` (the fixture): headline.py migrates; review.py's generate_content has
  an unbound receiver (``receiver_unresolved``), which holds the rest of review.py back (F-1)
  and the pin with it (F-2).
* ``cat__refused`` (the fixture): two ``configure`` calls (``multiple_configure_calls``) on
  every row of keywords.py; nothing is written.
* ``fay__two-bails``, built here: plain.py migrates; two.py has ``multiple_configure_calls``
  and a function-local import (``local_import``) in the same file, so lifting either alone
  frees nothing; the pin is held by two.py; and a misspelled ``requirments.txt`` holds a pin
  no pass reports (a miss).

Every expected figure below is worked out by hand from that list.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_obelize_bench.casefile.cases import load_case_file
from pytest_obelize_bench.error_analysis.collected import read_collected
from pytest_obelize_bench.error_analysis.commands import collected_path
from pytest_obelize_bench.error_analysis.states import bails_of, migrated, round_keys
from tests.helpers import rounds
from tests.helpers.bench_cli import obelize_bench
from tests.helpers.gitrepo import make_repo

pytestmark = pytest.mark.usefixtures("index_uv_cache")

G = "google.generativeai"
PLAIN = """\
import os

import google.generativeai as genai

genai.configure(api_key=os.environ.get("GEMINI_API_KEY", ""))

model = genai.GenerativeModel("gemini-1.5-flash")


def summarize(text):
    return model.generate_content(text).text
"""
TWO = """\
import os

import google.generativeai as genai

genai.configure(api_key=os.environ.get("KEY_A", ""))


def rotate():
    genai.configure(api_key=os.environ.get("KEY_B", ""))


def answer(question):
    from google.generativeai import GenerativeModel

    model = GenerativeModel("gemini-1.5-flash")
    return model.generate_content(question).text
"""
MANUAL = "two configure calls share one process-wide key; where the new client lives is a design choice"


def fay_row(root: Path) -> dict[str, Any]:
    repo = make_repo(
        root / "origins" / "two-bails",
        {
            "plain.py": PLAIN,
            "two.py": TWO,
            "requirements.txt": "google-generativeai==0.8.6\n",
            "requirments.txt": "google-generativeai==0.8.6\n",
        },
    )
    call_sites = [
        {"path": "plain.py", "line": 3, "kind": "import", "symbol": G, "label": "auto"},
        {"path": "plain.py", "line": 5, "kind": "call", "symbol": f"{G}.configure", "label": "auto"},
        {"path": "plain.py", "line": 7, "kind": "call", "symbol": f"{G}.GenerativeModel", "label": "auto"},
        {
            "path": "plain.py",
            "line": 11,
            "kind": "method_call",
            "symbol": f"{G}.GenerativeModel.generate_content",
            "label": "auto",
        },
        {"path": "two.py", "line": 3, "kind": "import", "symbol": G, "label": "auto"},
        {"path": "two.py", "line": 5, "kind": "call", "symbol": f"{G}.configure", "label": "manual", "why": MANUAL},
        {"path": "two.py", "line": 9, "kind": "call", "symbol": f"{G}.configure", "label": "manual", "why": MANUAL},
        {"path": "two.py", "line": 13, "kind": "import", "symbol": G, "label": "auto"},
        {
            "path": "two.py",
            "line": 15,
            "kind": "call",
            "symbol": f"{G}.GenerativeModel",
            "label": "manual",
            "why": MANUAL,
        },
        {
            "path": "two.py",
            "line": 16,
            "kind": "method_call",
            "symbol": f"{G}.GenerativeModel.generate_content",
            "label": "manual",
            "why": MANUAL,
        },
    ]
    return {
        "id": "fay__two-bails",
        "provider": "gemini",
        "change": "google-generativeai-to-google-genai",
        "from_version": "0.8.6",
        "to_version": "2.24.0",
        "full_name": "fay/two-bails",
        "owner": "fay",
        "repo": repo.url,
        "sha": repo.head,
        "license": "MIT",
        "split": "dev",
        "has_test_files": False,
        "pattern_key": sorted({row["symbol"] for row in call_sites}),
        "python": rounds.UPSTREAM_KEY,
        "install": [],
        "test_cmd": None,
        "tests_require_network": False,
        "ground_truth": {
            "what_it_is": "One plain module, one with two configure calls and a local import, two pins.",
            "files_read": ["plain.py", "two.py", "requirements.txt", "requirments.txt"],
            "call_sites": call_sites,
            "manifests": [
                {"path": "requirements.txt", "line": 1, "symbol": "google-generativeai", "label": "auto"},
                {"path": "requirments.txt", "line": 1, "symbol": "google-generativeai", "label": "auto"},
            ],
            "must_not_report": [],
            "tests_cover_change": False,
            "tests_cover_change_why": "There are no tests.",
        },
        "reviewer": "tester",
        "reviewed_at": "2026-12-01",
        "notes": "Built for the error analysis: two bails in one file, and a misspelled manifest.",
    }


REVIEW = {
    "round": 2,
    "reviewer": "tester",
    "reviewed_at": "2026-12-03",
    "record": "results/errors/round-2.json",
    "causes": {
        "file_not_fully_migrated": {
            "class": "derived",
            "disposition": "limitation",
            "recorded": "ADR-010",
            "why": "F-1.",
        },
        "repo_not_fully_migrated": {
            "class": "derived",
            "disposition": "limitation",
            "recorded": "ADR-010",
            "why": "F-2.",
        },
        "receiver_unresolved": {
            "class": "withheld",
            "disposition": "limitation",
            "recorded": "ADR-019",
            "why": "A parameter.",
        },
        "multiple_configure_calls": {
            "class": "withheld",
            "disposition": "limitation",
            "recorded": "ADR-020",
            "why": "Two keys.",
        },
        "local_import": {
            "class": "withheld",
            "disposition": "rule_change",
            "recorded": "COVERAGE 28",
            "why": "In a function.",
        },
        "manifest_filename_unknown": {
            "class": "missed",
            "disposition": "limitation",
            "recorded": "ADR-021",
            "why": "A typo.",
        },
    },
    "misses": [
        {
            "case": "fay__two-bails",
            "path": "requirments.txt",
            "line": 1,
            "symbol": "google-generativeai",
            "cause": "manifest_filename_unknown",
        },
    ],
    "unexpected": {},
}


def run_round(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, outside: Path) -> Path:
    """The round, through the real plugin under xdist; the work folder is deleted after, so the
    collect that follows can only use what the round stored under results/."""
    import shutil

    project = pytester.path
    # origins and checkouts live outside the project, as a real round's do
    cases = [
        rounds.case_row_from_fixture("withheld-part", "bob", outside),
        rounds.case_row_from_fixture("refused", "cat", outside),
        fay_row(outside),
    ]
    rounds.write_case_file(project / "cases" / "cases.yaml", cases)
    monkeypatch.setenv("UV_CACHE_DIR", str(rounds.shared_uv_cache()))
    for name in [k for k in os.environ if k.startswith(("GEMINI", "GITHUB"))]:
        monkeypatch.delenv(name)
    work = outside / "work"
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--bench-round=2",
        "--bench-allow-dirty",
        "--bench-interpreter=minor",
        f"--bench-work={work}",
        "-n",
        "2",
        timeout=1200,
    )
    assert result.ret == 0, "\n".join(result.outlines[-60:] + result.errlines[-20:])
    outcomes = result.parseoutcomes()
    assert outcomes.get("partial") == 2 and outcomes.get("unsupported") == 1, outcomes
    shutil.rmtree(work)
    return project


def test_a_round_through_the_plugin_is_collected_checked_and_levered(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    project = run_round(pytester, monkeypatch, tmp_path_factory.mktemp("errors-round"))
    collect_and_check(project)
    written_once_and_a_dropped_cause_caught(project)


def collect_and_check(project: Path) -> None:
    code, out = obelize_bench("errors", "collect", "--round", "2", cwd=project)
    assert code == 0, out
    assert "3 cases" in out
    collected = read_collected(collected_path(project / "results", 2))
    assert collected.obelize_version == ["0.8.0"]
    assert collected.pack_sha256 == ["5017c6856ceb122c86fd13377b2ee4e8156741433d484ad46aa1ea4c97f728f7"]
    fay = collected.cases["fay__two-bails"]
    assert fay.exit_code == 6
    assert fay.applied == [("plain.py", 3), ("plain.py", 5), ("plain.py", 7), ("plain.py", 11), ("requirements.txt", 1)]
    two_import = next(w for w in fay.withheld if (w.path, w.line) == ("two.py", 3))
    assert two_import.bail == "file_not_fully_migrated"
    assert two_import.caused_by == ["local_import", "multiple_configure_calls"]
    assert {f.confidence_reason for f in fay.findings if f.path == "plain.py"} == {
        "alias_resolved",
        "receiver_bound_module_const",
    }
    assert collected.cases["cat__refused"].applied == []

    (project / "cases" / "errors-round-2.yaml").write_text(yaml.safe_dump(REVIEW, sort_keys=False), encoding="utf-8")
    code, out = obelize_bench("errors", "check", "--round", "2", cwd=project)
    assert code == 0, out
    # bob 4/1/4/0 of 9, cat 0/4/2/0 of 6, fay 4/5/2/1 of 12
    assert "27 key rows (8 migrated, 10 withheld, 8 derived, 1 missed)" in out

    keys = round_keys(load_case_file(project / "cases" / "cases.yaml").cases)
    # No cause lifted: the round's own migrated count, which the records agree with.
    records = rounds.read_records(project / "results" / "round-2")
    assert (
        migrated(keys, collected)
        == 8
        == sum(len(keys.rows[c]) - r["measurements"]["unmigrated"] for c, r in records.items())
    )
    # Every cause lifted: all but the one row no pass reported.
    assert migrated(keys, collected, bails_of(collected)) == 26
    # One cause lifted at a time.
    assert migrated(keys, collected, {"receiver_unresolved"}) - 8 == 5  # review.py's 4 rows and bob's pin
    assert (
        migrated(keys, collected, {"multiple_configure_calls"}) - 8 == 6
    )  # keywords.py's 5 and cat's pin; two.py stays
    assert migrated(keys, collected, {"local_import"}) - 8 == 0  # two.py is still held by multiple_configure_calls
    # Levers do not add up: together the two free two.py's 6 rows and fay's pin as well.
    assert migrated(keys, collected, {"local_import", "multiple_configure_calls"}) - 8 == 13

    code, out = obelize_bench("summarize", cwd=project)
    assert code == 0, out
    document = (project / "results" / "BENCHMARK_RESULTS.md").read_text(encoding="utf-8")
    assert "| `local_import` | withheld | 1 | 2 | +0 | rule_change | COVERAGE 28 |" in document
    assert "| `multiple_configure_calls` | withheld | 8 | 4 | +6 | limitation | ADR-020 |" in document
    assert "| `receiver_unresolved` | withheld | 1 | 4 | +5 | limitation | ADR-019 |" in document
    assert "| fay__two-bails | 12 | 4 | 5 | 2 | 1 |" in document
    summary = json.loads((project / "results" / "round-2" / "summary.json").read_text(encoding="utf-8"))
    figures = summary["error_analysis"]
    assert figures["states"] == {"migrated": 8, "withheld": 10, "derived": 8, "missed": 1}
    assert {c["cause"]: c["lever"] for c in figures["causes"]}["local_import"] == 0
    assert obelize_bench("summarize", "--check", cwd=project)[0] == 0


def written_once_and_a_dropped_cause_caught(project: Path) -> None:
    code, out = obelize_bench("errors", "collect", "--round", "2", cwd=project)
    assert code == 0 and "unchanged" in out
    facts = project / "results" / "round-2" / "artefacts" / "fay__two-bails.json"
    original = facts.read_text(encoding="utf-8")
    data = json.loads(original)
    data["withheld"] = [w for w in data["withheld"] if w["bail"] != "local_import"]
    facts.write_text(json.dumps(data), encoding="utf-8")
    try:
        code, out = obelize_bench("errors", "collect", "--round", "2", cwd=project)
        assert code == 1 and "refused (--force replaces it)" in out
    finally:
        facts.write_text(original, encoding="utf-8")

    review = json.loads(json.dumps(REVIEW))
    del review["causes"]["local_import"]
    review["misses"] = []
    (project / "cases" / "errors-round-2.yaml").write_text(yaml.safe_dump(review), encoding="utf-8")
    code, out = obelize_bench("errors", "check", "--round", "2", cwd=project)
    assert code == 1
    lines = out.strip().splitlines()
    assert any("cause 'local_import' (withheld, 1 row in fay__two-bails) has no disposition" in line for line in lines)
    assert any(
        "round 2 missed fay__two-bails:requirments.txt:1:google-generativeai, which has no entry" in line
        for line in lines
    )
    # with no miss listed, the miss row has no cause, so the miss's own disposition has no row either
    assert any(
        "causes.manifest_filename_unknown: has a disposition but no row of round 2 has this cause" in line
        for line in lines
    )
    assert lines[-1] == "round 2: 3 problems"
