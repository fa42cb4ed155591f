"""The fix dry run through the real plugin: fixture frames, a published frame, and hostile run folders."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench.dryrun.planned_fix import _blocked, _planned_files
from pytest_obelize_bench.measure.scan_findings import read_findings
from tests.helpers.bench_cli import obelize_bench
from tests.helpers.gitrepo import make_repo
from tests.helpers.project import PROJECT

FIXTURES = PROJECT / "cases" / "dryrun-fixtures"
PDF = "py-pdf/pypdf2-to-pypdf"
OPENAI = "openai/openai-0-to-1"


def _run(pytester: pytest.Pytester, pack: str, frame: Path, tmp_path: Path, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        f"--bench-dryrun={pack}",
        f"--bench-frame={frame}",
        f"--bench-results={tmp_path / 'results'}",
        f"--bench-work={tmp_path / 'work'}",
        "-p",
        "no:cacheprovider",
        *args,
    )


@pytest.fixture
def pdf_frame(pytester: pytest.Pytester) -> Path:
    shutil.copytree(FIXTURES / "py-pdf__pypdf2-to-pypdf", pytester.path / "pdf")
    return pytester.path / "pdf" / "frame.yaml"


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_a_fixture_frame_gives_its_expected_outcomes_and_writes_nothing(
    pytester: pytest.Pytester, pdf_frame: Path, tmp_path: Path, workers: list[str]
) -> None:
    result = _run(pytester, PDF, pdf_frame, tmp_path, "-v", *workers)
    assert result.ret == 0, result.stdout.str()
    assert any("fixture__py-pdf-complete" in line and "COMPLETE" in line for line in result.outlines)
    outcomes = {kind: n for kind, n in result.parseoutcomes().items() if kind != "warnings"}
    assert outcomes == {"blocked": 1, "complete": 1, "none": 1}
    assert "fixture frame: nothing written under results/" in result.stdout.str()
    assert not (tmp_path / "results").exists()


def test_a_fixture_whose_outcome_differs_fails_with_both_outcomes(
    pytester: pytest.Pytester, pdf_frame: Path, tmp_path: Path
) -> None:
    data = yaml.safe_load(pdf_frame.read_text(encoding="utf-8"))
    data["repositories"][0]["expected"] = "partial"
    pdf_frame.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    result = _run(pytester, PDF, pdf_frame, tmp_path, "-k", "complete")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*fixture/py-pdf-complete: the dry run gave complete, the fixture expects partial*"])


def test_collect_only_lists_the_frame_in_order_and_runs_nothing(
    pytester: pytest.Pytester, pdf_frame: Path, tmp_path: Path
) -> None:
    result = _run(pytester, PDF, pdf_frame, tmp_path, "--collect-only", "-q", "-k", "not none")
    assert result.ret == 0
    assert [line for line in result.outlines if "::" in line] == [
        "pdf/frame.yaml::fixture__py-pdf-complete",
        "pdf/frame.yaml::fixture__py-pdf-blocked",
    ]
    assert not (tmp_path / "work").exists()


def _published_frame(pytester: pytest.Pytester, tmp_path: Path) -> Path:
    source = FIXTURES / "openai__openai-0-to-1" / "repos"
    rows = []
    for name in ("complete", "blocked", "none"):
        files = {
            str(p.relative_to(source / name)): p.read_text(encoding="utf-8")
            for p in (source / name).rglob("*")
            if p.is_file()
        }
        repo = make_repo(tmp_path / "origin" / name, files)
        rows.append({"full_name": f"o/{name}", "url": repo.url, "sha": repo.head, "band": "size:<1000"})
    frame = pytester.path / "frames" / "openai.yaml"
    frame.parent.mkdir()
    frame.write_text(
        yaml.safe_dump({"term": "openai.ChatCompletion", "pack": OPENAI, "repositories": rows}), encoding="utf-8"
    )
    return frame


def test_a_whole_frame_is_published_with_its_block(pytester: pytest.Pytester, tmp_path: Path) -> None:
    frame = _published_frame(pytester, tmp_path)
    (tmp_path / "docs" / "results").mkdir(parents=True)  # a project with results pages gets them rewritten
    (pytester.path / "cases").mkdir(exist_ok=True)
    shutil.copy(PROJECT / "cases" / "cases.yaml", pytester.path / "cases" / "cases.yaml")
    result = _run(pytester, OPENAI, frame, tmp_path, "-n", "2")
    assert result.ret == 0, result.stdout.str()
    document = json.loads(
        (tmp_path / "results" / "dryrun" / "openai__openai-0-to-1" / "dryrun.json").read_text(encoding="utf-8")
    )
    assert [(r["full_name"], r["outcome"]) for r in document["records"]] == [
        ("o/complete", "complete"),
        ("o/blocked", "blocked"),
        ("o/none", "none"),
    ]
    complete, blocked, _ = document["records"]
    assert complete["files_planned"] == 2 and complete["withheld"] == []
    assert (
        blocked["blocked"] == "legacy_version_unsupported"
        and blocked["withheld"][0]["symbol"] == "openai.Embedding.create"
    )
    assert document["frame"] == "frames/openai.yaml" and document["obelize_version"] == "0.8.0"
    block = (tmp_path / "results" / "BENCHMARK_RESULTS.md").read_text(encoding="utf-8")
    assert "<!-- dryrun-openai__openai-0-to-1:begin" in block
    assert "| `complete` | 1 | 33.3% [6.1%, 79.2%] |" in block
    assert "| `legacy_version_unsupported` | 1 |" in block
    page = (tmp_path / "docs" / "results" / "dryrun-openai__openai-0-to-1.md").read_text(encoding="utf-8")
    assert "o/complete" in page and "o/blocked" in page
    assert f"results pages: {tmp_path / 'docs' / 'results'}" in result.stdout.str()


def test_a_partial_run_of_a_frame_is_never_published(pytester: pytest.Pytester, tmp_path: Path) -> None:
    frame = _published_frame(pytester, tmp_path)
    result = _run(pytester, OPENAI, frame, tmp_path, "-k", "none")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        ["not published: 1 of 3 repositories of the frame ran, and a partial run is never published"]
    )
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([f"--bench-dryrun={OPENAI}"], "--bench-dryrun needs --bench-frame=FILE*"),
        (["--bench-dryrun=openai", "--bench-frame=x.yaml"], "--bench-dryrun: unknown pack 'openai'*"),
        ([f"--bench-dryrun={OPENAI}", "--bench-gate1"], "--bench-gate1 and --bench-dryrun are different runs*"),
        (["--bench-frame=x.yaml"], "--bench-frame needs --bench-gate1 or --bench-dryrun=PACK"),
    ],
)
def test_usage_errors(pytester: pytest.Pytester, args: list[str], message: str) -> None:
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}"])


def test_a_frame_drawn_for_another_pack_is_refused(pytester: pytest.Pytester, pdf_frame: Path, tmp_path: Path) -> None:
    result = _run(pytester, OPENAI, pdf_frame, tmp_path)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*the frame is drawn for py-pdf/pypdf2-to-pypdf, not openai/openai-0-to-1"])


# -- hostile run folders -------------------------------------------------------------------------


def _folder(tmp_path: Path, **documents: object) -> Path:
    folder = tmp_path / "run"
    folder.mkdir()
    for name, data in documents.items():
        (folder / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def test_plan_files_leaving_the_checkout_are_refused(tmp_path: Path) -> None:
    folder = _folder(tmp_path, plan={"files": [{"path": "../outside.py"}]})
    with pytest.raises(CaseError, match=r"plan.json: files\[0\].path is not a path inside the repository") as caught:
        _planned_files(folder)
    assert caught.value.reason == "run_folder_unreadable"


def test_a_symlinked_plan_is_never_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"files": []}), encoding="utf-8")
    folder = _folder(tmp_path)
    (folder / "plan.json").symlink_to(outside)
    with pytest.raises(CaseError, match=r"plan\.json: is a symlink"):
        _planned_files(folder)


def test_run_json_must_name_the_pack_and_a_reason_code(tmp_path: Path) -> None:
    folder = _folder(tmp_path, run={"packs": [{"id": "other/pack", "blocked": None}]})
    with pytest.raises(CaseError, match=f"packs\\[\\] does not name {OPENAI}"):
        _blocked(folder, OPENAI)
    (folder / "run.json").write_text(
        json.dumps({"packs": [{"id": OPENAI, "blocked": "$(rm -rf /)"}]}), encoding="utf-8"
    )
    with pytest.raises(CaseError, match="blocked is not a reason code"):
        _blocked(folder, OPENAI)


def test_scan_findings_with_a_bad_row_are_refused_and_evidence_is_dropped(tmp_path: Path) -> None:
    row = {
        "path": "a.py",
        "line": 1,
        "column": 0,
        "kind": "import",
        "confidence_reason": "alias_resolved",
        "symbol": "google.generativeai",
        "scan_status": "eligible",
        "bail": None,
        "caused_by": None,
        "evidence": "secret source",
    }
    counts = {
        "files_selected": 1,
        "files_parsed": 1,
        "findings": 1,
        "eligible": 1,
        "needs_review": 0,
        "unsupported": 0,
        "not_a_usage": 0,
    }
    folder = _folder(tmp_path, findings={"findings": [row], "counts": counts})
    _, rows = read_findings(folder)
    assert "secret" not in json.dumps([r.model_dump() for r in rows])
    (folder / "findings.json").write_text(
        json.dumps({"findings": [{**row, "path": "/etc/passwd"}], "counts": counts}), encoding="utf-8"
    )
    with pytest.raises(CaseError, match=re.escape("findings.json: findings[0].path '/etc/passwd' is absolute")):
        read_findings(folder)
    (folder / "findings.json").write_text(
        json.dumps({"findings": [{**row, "line": "1"}], "counts": counts}), encoding="utf-8"
    )
    with pytest.raises(CaseError, match=re.escape("findings.json: findings[0].line: Input should be a valid integer")):
        read_findings(folder)


def test_obelize_010s_run_json_names_one_pack_and_its_blocked_reason_at_the_top(tmp_path: Path) -> None:
    """obelize 0.1.0 writes ``pack: {id}`` and a top-level ``blocked`` instead of ``packs[]``."""
    folder = _folder(tmp_path, run={"pack": {"id": OPENAI, "source": "bundled"}, "blocked": None})
    assert _blocked(folder, OPENAI) is None
    (folder / "run.json").write_text(
        json.dumps({"pack": {"id": OPENAI}, "blocked": "legacy_version_unsupported"}), encoding="utf-8"
    )
    assert _blocked(folder, OPENAI) == "legacy_version_unsupported"
    (folder / "run.json").write_text(json.dumps({"pack": {"id": "other/pack"}, "blocked": None}), encoding="utf-8")
    with pytest.raises(CaseError, match=f"packs\\[\\] does not name {OPENAI}"):
        _blocked(folder, OPENAI)
    (folder / "run.json").write_text(json.dumps({"pack": {"id": OPENAI}}), encoding="utf-8")
    with pytest.raises(CaseError, match="expected an object with packs"):
        _blocked(folder, OPENAI)


@pytest.mark.usefixtures("index_uv_cache")
def test_each_release_is_kept_a_release_without_the_pack_is_named_and_the_history_reads_them(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """obelize 0.8.0 (installed) publishes the frame; obelize 0.1.0 (from the index), which ships only
    the Gemini pack, is kept as ``pack_absent`` and leaves the published dry run alone; then
    ``history --frame`` reads both, ``--find`` names the release that changed a repository, and
    ``summarize --check`` fails once a kept release is edited by hand."""
    frame = _published_frame(pytester, tmp_path)
    (pytester.path / "cases").mkdir(exist_ok=True)
    for name in ("cases.yaml", "promotion.yaml"):
        shutil.copy(PROJECT / "cases" / name, pytester.path / "cases" / name)
    assert _run(pytester, OPENAI, frame, tmp_path, "-n", "2").ret == 0
    old = _run(pytester, OPENAI, frame, tmp_path, "--obelize=obelize==0.1.0", "--exclude-newer=2026-12-01T00:00:00Z")
    assert old.ret == 0, old.stdout.str()
    old.stdout.fnmatch_lines(
        ["dry run: 3 pack absent", "*dryrun.json stays as published (the release does not ship the pack)*"]
    )
    folder = tmp_path / "results" / "dryrun" / "openai__openai-0-to-1"
    kept = json.loads((folder / "releases" / "0.1.0" / "dryrun.json").read_text(encoding="utf-8"))
    assert {r["error"] for r in kept["records"]} == {"pack_absent: fix: obelize 0.1.0 does not ship the pack " + OPENAI}
    assert json.loads((folder / "dryrun.json").read_text(encoding="utf-8"))["obelize_version"] == "0.8.0"
    assert (folder / "releases" / "0.8.0" / "publication.json").is_file()

    args = ("--results", str(tmp_path / "results"), "--cases", str(pytester.path / "cases" / "cases.yaml"))
    code, out = obelize_bench("history", "--frame", OPENAI, *args, cwd=pytester.path)
    assert code == 0, out
    assert "obelize 0.1.0: does not ship the pack" in out
    history = json.loads((folder / "history.json").read_text(encoding="utf-8"))
    assert [(r["label"], r["state"]) for r in history["releases"]] == [("0.1.0", "pack_absent"), ("0.8.0", "measured")]
    assert history["releases"][1]["outcomes"]["complete"]["k"] == 1
    assert "does not ship the pack" in history["steps"][0]["note"]
    document = (tmp_path / "results" / "BENCHMARK_RESULTS.md").read_text(encoding="utf-8")
    assert "<!-- dryrun-history-openai__openai-0-to-1:begin" in document
    assert "| 0.1.0 | pack absent |" in document
    assert (tmp_path / "results" / "figures" / "dryrun-openai__openai-0-to-1-history.svg").is_file()
    code, out = obelize_bench("history", "--frame", OPENAI, "--find", "o/complete", *args, cwd=pytester.path)
    assert code == 0 and "o/complete: first changed at obelize 0.8.0" in out and "pack_absent -> complete" in out
    assert obelize_bench("summarize", "--check", *args, cwd=pytester.path)[0] == 0

    edited = folder / "releases" / "0.1.0" / "dryrun.json"
    edited.write_text(edited.read_text(encoding="utf-8").replace("0.1.0 does not", "0.1.0 did not"), encoding="utf-8")
    code, out = obelize_bench("summarize", "--check", *args, cwd=pytester.path)
    assert code == 1 and "differs from what session" in out and "releases/0.1.0/dryrun.json" in out
