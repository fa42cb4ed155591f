"""Gate 1 and the dry run publish like a round: a preflight, the infrastructure guard, a checked note."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from pytest_obelize_bench.report.measurement_blocks import MeasurementError, measurement_blocks, measurement_problems
from tests.helpers.gitrepo import git, make_repo
from tests.helpers.project import PROJECT

OPENAI = "openai/openai-0-to-1"
SHA = "1" * 40


def _published_results(tmp_path: Path) -> Path:
    """A results folder under git holding a published scan, a published dry run and the document."""
    results = tmp_path / "results"
    shutil.copytree(PROJECT / "results" / "gate1", results / "gate1")
    shutil.copy(PROJECT / "results" / "BENCHMARK_RESULTS.md", results / "BENCHMARK_RESULTS.md")
    dryrun = results / "dryrun" / "openai__openai-0-to-1"
    dryrun.mkdir(parents=True)
    (dryrun / "dryrun.json").write_text('{"published": "earlier"}\n', encoding="utf-8")
    make_repo(results, message="published")  # the folder as it is, committed
    return results


def _unreachable_frame(folder: Path, names: list[str], **extra: object) -> Path:
    rows = [
        {"full_name": f"gone/{name}", "url": f"file://{folder}/nowhere/{name}", "sha": SHA, "band": "size:<1000"}
        for name in names
    ]
    frame = folder / "frames" / "frame.yaml"
    frame.parent.mkdir(parents=True, exist_ok=True)
    frame.write_text(yaml.safe_dump({"term": "t", **extra, "repositories": rows}), encoding="utf-8")
    return frame


def _run(pytester: pytest.Pytester, tmp_path: Path, mode: list[str], frame: Path, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        *mode,
        f"--bench-frame={frame}",
        f"--bench-results={tmp_path / 'results'}",
        f"--bench-work={tmp_path / 'work'}",
        "-p",
        "no:cacheprovider",
        *args,
    )


MODES = {"gate1": ["--bench-gate1"], "dryrun": [f"--bench-dryrun={OPENAI}"]}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_unreachable_repositories_stop_at_preflight_and_leave_results_untouched(
    pytester: pytest.Pytester, tmp_path: Path, mode: str, workers: list[str]
) -> None:
    results = _published_results(tmp_path)
    frame = _unreachable_frame(pytester.path, ["one", "two", "three"])
    result = _run(pytester, tmp_path, MODES[mode], frame, *workers)
    assert result.ret == 4, result.stdout.str()
    out = result.stdout.str()
    for name in ("one", "two", "three"):
        assert out.count(f"preflight: gone__{name}: repository file://") == 1
    assert "nothing ran and nothing was published" in out
    assert git("status", "--porcelain", "--untracked-files=all", cwd=results) == ""


@pytest.mark.parametrize("mode", sorted(MODES))
def test_infrastructure_errors_never_replace_a_published_measurement(
    pytester: pytest.Pytester, tmp_path: Path, mode: str
) -> None:
    results = _published_results(tmp_path)
    reachable = make_repo(tmp_path / "origin" / "here", {"app.py": "import openai\n"})
    frame = _unreachable_frame(pytester.path, ["one"])
    data = yaml.safe_load(frame.read_text(encoding="utf-8"))
    # Reachable, so the preflight passes; the pinned commit is not there, so the fetch fails.
    data["repositories"].append({"full_name": "o/here", "url": reachable.url, "sha": "0" * 40, "band": "b"})
    data["repositories"].pop(0)
    frame.write_text(yaml.safe_dump(data), encoding="utf-8")
    result = _run(pytester, tmp_path, MODES[mode], frame)
    out = result.stdout.str()
    assert "not published: no repository of the frame was" in out, out
    assert git("status", "--porcelain", "--untracked-files=all", cwd=results) == ""


def test_a_gate1_session_declares_its_infrastructure_errors_when_allowed(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    scanned = make_repo(tmp_path / "origin" / "ok", {"app.py": "import google.generativeai as genai\n"})
    broken = make_repo(tmp_path / "origin" / "broken", {"app.py": "x = 1\n"})
    rows = [
        {"full_name": "o/ok", "url": scanned.url, "sha": scanned.head, "band": "b"},
        {"full_name": "o/broken", "url": broken.url, "sha": "0" * 40, "band": "b"},
    ]
    frame = pytester.path / "frame.yaml"
    frame.write_text(yaml.safe_dump({"term": "t", "repositories": rows}), encoding="utf-8")
    refused = _run(pytester, tmp_path, MODES["gate1"], frame, "--bench-no-summary")
    assert "not published: 1 repositories errored for infrastructure reasons (o/broken)" in refused.stdout.str()
    assert not (tmp_path / "results").exists()
    allowed = _run(pytester, tmp_path, MODES["gate1"], frame, "--bench-no-summary", "--bench-publish-with-infra-errors")
    assert allowed.ret == 0, allowed.stdout.str()
    # a frame not named like the sample's is published beside it, under its own name
    note = json.loads((tmp_path / "results" / "gate1" / "frame" / "publication.json").read_text(encoding="utf-8"))
    assert note["infrastructure_errors"] == 1 and note["with_infrastructure_errors"] is True
    assert note["kind"] == "session" and note["session"] in allowed.stdout.str()
    assert measurement_problems(tmp_path / "results") == []


def test_summarize_check_fails_on_a_hand_edited_or_unnoted_measurement(tmp_path: Path) -> None:
    results = _published_results(tmp_path)
    (results / "dryrun").rename(tmp_path / "dryrun-elsewhere")
    assert measurement_problems(results) == []
    scan = results / "gate1" / "scan.json"
    scan.write_text(scan.read_text(encoding="utf-8").replace('"line": 1,', '"line": 2,', 1), encoding="utf-8")
    assert measurement_problems(results) == [f"{scan}: differs from what session upstream published"]
    (results / "gate1" / "publication.json").unlink()
    [problem] = measurement_problems(results)
    assert problem.startswith(f"{scan}: published without publication.json")


def test_a_gate1_block_never_reports_a_frame_in_which_nothing_was_scanned(tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(PROJECT / "results" / "gate1", results / "gate1")
    scan = results / "gate1" / "scan.json"
    data = json.loads(scan.read_text(encoding="utf-8"))
    for repo in data["scanned"]:
        repo.update(error="fetch: fetch_failed: Could not resolve host", findings=[], counts=None)
    scan.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(MeasurementError, match="no repository of the frame was scanned"):
        measurement_blocks(results, PROJECT / "cases")
