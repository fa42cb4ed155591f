"""The fix step and the adapter on real repositories, and a pinned or source obelize getting a venv of its own."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench.case.suite import compile_written
from pytest_obelize_bench.casefile.cases import CallSite, Case, GroundTruth, ManifestRow
from pytest_obelize_bench.grading.grade import grade
from pytest_obelize_bench.grading.record import SuiteResult
from pytest_obelize_bench.tool.adapter import DOCUMENTED_EXIT_CODES
from pytest_obelize_bench.tool.evidence_copy import copy_artefacts, patch_digest
from pytest_obelize_bench.tool.fix_step import run_fix
from pytest_obelize_bench.tool.info import ToolInfo
from pytest_obelize_bench.tool.runfolder import load_artefacts_dir, locate_run_folder
from tests.helpers.app_repo import commit_all, make_app_repo
from tests.helpers.packs import GEMINI
from tests.helpers.step_runners import Done, FakeRunner, SubprocessRunner


def matching_case() -> Case:
    sites = [
        CallSite(path="app.py", line=3, kind="import", symbol="google.generativeai", label="auto"),
        CallSite(path="app.py", line=5, kind="call", symbol="google.generativeai.configure", label="auto"),
        CallSite(path="app.py", line=7, kind="call", symbol="google.generativeai.GenerativeModel", label="auto"),
        CallSite(
            path="app.py",
            line=11,
            kind="method_call",
            symbol="google.generativeai.GenerativeModel.generate_content",
            label="auto",
        ),
    ]
    return Case(
        id="tiny",
        origin="fixture",
        control=False,
        provider="gemini",
        change="google-generativeai-to-google-genai",
        ground_truth=GroundTruth(
            call_sites=sites,
            manifests=[ManifestRow(path="requirements.txt", line=1, symbol="google-generativeai", label="auto")],
            tests_cover_change=False,
        ),
    )


def test_run_fix_on_a_real_repository(tmp_path: Path, installed: ToolInfo) -> None:
    repo = make_app_repo(tmp_path / "case")
    runner = SubprocessRunner(tmp_path / "home")
    fixed = run_fix(runner, installed, checkout=repo, pack=GEMINI)
    artefacts, runtime = fixed.artefacts, fixed.runtime_s
    assert (runner.calls[0].number, runner.calls[0].name, runner.calls[0].cwd) == (6, "fix", repo)
    assert artefacts.exit_code == 6  # written, no verdict (no --verify)
    assert artefacts.written == ("app.py", "requirements.txt")
    assert artefacts.withheld == () and artefacts.refused == ()
    assert artefacts.model_used is False
    assert {(f.path, f.line, f.kind) for f in artefacts.findings} >= {
        ("app.py", 3, "import"),
        ("requirements.txt", 1, "manifest"),
    }
    assert all(edit.status == "auto" for edit in artefacts.edits)
    assert runtime > 0
    assert "google.generativeai" not in (repo / "app.py").read_text()

    compiles = compile_written(runner, interpreter=Path(sys.executable), checkout=repo, written=artefacts.written)
    assert compiles is True
    m = grade(
        matching_case(),
        artefacts,
        baseline=SuiteResult(),
        after=SuiteResult(),
        patch_compiles=compiles,
        runtime_seconds=runtime,
    )
    assert (m.detected, m.false_positive, m.missed_call_site, m.unmigrated, m.false_positive_edit) == (4, 0, 0, 0, 0)
    assert (m.patch_applied, m.llm_tokens_in, m.llm_tokens_out, m.llm_cost_usd) == (True, 0, 0, 0.0)

    # the copy reads back to the same artefacts, for re-grading without running anything
    dest = tmp_path / "artefacts"
    assert fixed.folder == locate_run_folder(repo)  # the step hands back the folder it read
    assert copy_artefacts(fixed.folder, dest, publish_patch=True) == [
        "findings.json",
        "plan.json",
        "run.json",
        "patch.diff",
    ]
    assert load_artefacts_dir(dest) == artefacts
    # the digest a review is keyed by is the patch's sha256, read from obelize's own folder
    assert patch_digest(fixed.folder) == hashlib.sha256((dest / "patch.diff").read_bytes()).hexdigest()
    assert patch_digest(tmp_path / "no-such-folder") is None


def test_run_fix_with_nothing_to_migrate(tmp_path: Path, installed: ToolInfo) -> None:
    repo = make_app_repo(tmp_path / "case", app="import requests\n", requirements="requests==2.32.3\n")
    artefacts = run_fix(SubprocessRunner(tmp_path / "home"), installed, checkout=repo, pack=GEMINI).artefacts
    assert artefacts.exit_code == 4
    assert (artefacts.written, artefacts.findings) == ((), ())


def test_a_repository_cannot_shadow_the_tool_modules(tmp_path: Path, installed: ToolInfo) -> None:
    repo = make_app_repo(tmp_path / "case")
    for module in ("yaml.py", "pydantic.py", "typer.py", "libcst.py"):
        (repo / module).write_text("raise SystemExit(99)\n")
    (repo / "obelize").mkdir()
    (repo / "obelize" / "__init__.py").write_text("raise SystemExit(98)\n")
    artefacts = run_fix(SubprocessRunner(tmp_path / "home"), installed, checkout=repo, pack=GEMINI).artefacts
    assert artefacts.written == ("app.py", "requirements.txt")


def test_a_dirty_git_tree_is_an_error_not_unsupported(tmp_path: Path, installed: ToolInfo) -> None:
    repo = make_app_repo(tmp_path / "case")
    commit_all(repo)
    (repo / "requirements.txt").write_text("google-generativeai==0.8.3\nrequests\n")
    with pytest.raises(CaseError) as excinfo:
        run_fix(SubprocessRunner(tmp_path / "home"), installed, checkout=repo, pack=GEMINI)
    assert (excinfo.value.step, excinfo.value.reason) == ("fix", "obelize_failed")
    assert "tree_dirty" in excinfo.value.detail


def test_a_clean_git_tree_is_migrated(tmp_path: Path, installed: ToolInfo) -> None:
    repo = make_app_repo(tmp_path / "case")
    commit_all(repo)
    artefacts = run_fix(SubprocessRunner(tmp_path / "home"), installed, checkout=repo, pack=GEMINI).artefacts
    assert artefacts.written == ("app.py", "requirements.txt")


def test_an_unknown_pack_exits_2_and_fails_the_case(tmp_path: Path, installed: ToolInfo) -> None:
    repo = make_app_repo(tmp_path / "case")
    with pytest.raises(CaseError) as excinfo:
        run_fix(SubprocessRunner(tmp_path / "home"), installed, checkout=repo, pack="gemini")
    assert (excinfo.value.step, excinfo.value.reason) == ("fix", "obelize_failed")
    assert excinfo.value.detail == "obelize fix exited 2; see the step log"


@pytest.mark.parametrize("code", [1, 2, 7, 137, -9])
def test_undocumented_exit_codes_fail_the_case(tmp_path: Path, installed: ToolInfo, code: int) -> None:
    with pytest.raises(CaseError) as excinfo:
        run_fix(FakeRunner(lambda argv: Done(exit_code=code)), installed, checkout=tmp_path, pack=GEMINI)
    assert (excinfo.value.reason, excinfo.value.detail) == (
        "obelize_failed",
        f"obelize fix exited {code}; see the step log",
    )


def test_a_fix_timeout(tmp_path: Path, installed: ToolInfo) -> None:
    with pytest.raises(CaseError) as excinfo:
        run_fix(
            FakeRunner(lambda argv: Done(exit_code=124, timed_out=True)),
            installed,
            checkout=tmp_path,
            pack=GEMINI,
            timeout=30,
        )
    assert (excinfo.value.step, excinfo.value.reason, excinfo.value.detail) == (
        "fix",
        "timeout",
        "obelize fix outlasted 30s",
    )


def test_obelize_that_cannot_start(tmp_path: Path, installed: ToolInfo) -> None:
    broken = installed.model_copy(update={"argv_prefix": (str(tmp_path / "missing"),)})
    with pytest.raises(CaseError) as excinfo:
        run_fix(SubprocessRunner(tmp_path), broken, checkout=tmp_path, pack=GEMINI)
    assert excinfo.value.reason == "obelize_failed"
    assert str(tmp_path) not in excinfo.value.detail


@pytest.mark.parametrize("code", DOCUMENTED_EXIT_CODES)
def test_a_documented_exit_without_a_run_folder(tmp_path: Path, installed: ToolInfo, code: int) -> None:
    with pytest.raises(CaseError) as excinfo:
        run_fix(FakeRunner(lambda argv: Done(exit_code=code)), installed, checkout=tmp_path, pack=GEMINI)
    assert (excinfo.value.step, excinfo.value.reason) == ("fix", "no_run_folder")


def test_a_pointer_obelize_did_not_move_is_no_run_folder(tmp_path: Path, installed: ToolInfo) -> None:
    repo = make_app_repo(tmp_path / "case")
    run_fix(SubprocessRunner(tmp_path / "home"), installed, checkout=repo, pack=GEMINI)  # a committed old run
    with pytest.raises(CaseError) as excinfo:
        run_fix(FakeRunner(lambda argv: Done(exit_code=6)), installed, checkout=repo, pack=GEMINI)
    assert excinfo.value.reason == "no_run_folder"
    assert "before obelize ran" in excinfo.value.detail


def test_a_corrupt_run_folder_is_unreadable(tmp_path: Path, installed: ToolInfo) -> None:
    def act(argv: list[str]) -> Done:
        folder = tmp_path / ".obelize" / "runs" / "20261202T000000Z-00000000"
        folder.mkdir(parents=True)
        (tmp_path / ".obelize" / "latest").write_text(folder.name + "\n")
        for name in ("findings.json", "plan.json"):
            (folder / name).write_text('{"findings": [], "edits": []}')
        (folder / "run.json").write_text("{truncated")
        return Done(exit_code=6)

    with pytest.raises(CaseError) as excinfo:
        run_fix(FakeRunner(act), installed, checkout=tmp_path, pack=GEMINI)
    assert (excinfo.value.step, excinfo.value.reason) == ("fix", "run_folder_unreadable")


def test_run_fix_through_the_real_step_runner(tmp_path: Path, installed: ToolInfo) -> None:
    executor = pytest.importorskip("pytest_obelize_bench.isolation.executor")
    steps = pytest.importorskip("pytest_obelize_bench.isolation.steps")
    elide = pytest.importorskip("pytest_obelize_bench.isolation.elide")
    repo = make_app_repo(tmp_path / "case")
    runner = steps.StepRunner(
        executor.ProcessExecutor(),
        logs=tmp_path / "logs",
        elider=elide.Elider([("<case>", repo), ("<logs>", tmp_path / "logs"), ("<harness-python>", sys.executable)]),
        env=executor.step_environment(os.environ, home=tmp_path / "home"),
        cwd=repo,
    )
    fixed = run_fix(runner, installed, checkout=repo, pack=GEMINI)
    artefacts = fixed.artefacts
    assert artefacts.written == ("app.py", "requirements.txt")
    assert runner.steps[0].name == "fix" and runner.steps[0].exit_code == 6
    assert runner.steps[0].argv[:4] == ("<harness-python>", "-I", "-m", "obelize")
    assert compile_written(runner, interpreter=Path(sys.executable), checkout=repo, written=artefacts.written)
    assert [step.name for step in runner.steps] == ["fix", "compile"]
