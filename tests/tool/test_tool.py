"""The tool seam (its environment, the adapter, the fix step), against the real obelize 0.8.0 beside the harness."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench.case.suite import compile_written
from pytest_obelize_bench.casefile.cases import CallSite, Case, GroundTruth, ManifestRow
from pytest_obelize_bench.grading.grade import grade
from pytest_obelize_bench.grading.record import SuiteResult
from pytest_obelize_bench.isolation.policy import TOOL_INSTALL_ENVIRONMENT, uv_binary
from pytest_obelize_bench.tool import venv as tool_env
from pytest_obelize_bench.tool.adapter import DOCUMENTED_EXIT_CODES
from pytest_obelize_bench.tool.evidence_copy import copy_artefacts, patch_digest
from pytest_obelize_bench.tool.fix_step import fix_argv, run_fix
from pytest_obelize_bench.tool.info import ToolError, ToolInfo
from pytest_obelize_bench.tool.packs import PackInfo, pack_provenance
from pytest_obelize_bench.tool.runfolder import load_artefacts_dir, locate_run_folder
from pytest_obelize_bench.tool.venv import resolve_tool
from tests.helpers.sdist import SdistUnavailable, obelize_sdist

GEMINI = "gemini/google-generativeai-to-google-genai"
GEMINI_SHA = "5017c6856ceb122c86fd13377b2ee4e8156741433d484ad46aa1ea4c97f728f7"

APP = """\
import os

import google.generativeai as genai

genai.configure(api_key=os.environ["GEMINI_API_KEY"])

model = genai.GenerativeModel("gemini-1.5-flash")


def ask(question):
    response = model.generate_content(question)
    return response.text
"""


@dataclass
class Done:
    exit_code: int = 0
    duration_s: float = 0.0
    timed_out: bool = False
    launch_error: str | None = None
    truncated: bool = False
    log: Path = Path("/dev/null")

    def output(self, limit: int = 65536) -> str:
        return ""


class SubprocessRunner:
    """Runs steps for real (no shell, a timeout, an own HOME); records (number, name, argv, cwd)."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.calls: list[tuple[int, str, list[str], Path | None]] = []

    def run(
        self,
        number: int,
        name: str,
        argv: Sequence[str],
        *,
        timeout: float,
        reason: str | None = None,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> Done:
        self.calls.append((number, name, list(argv), cwd))
        environment = {"PATH": os.environ.get("PATH", ""), "HOME": str(self.home), "LANG": "C.UTF-8"}
        start = time.monotonic()
        try:
            proc = subprocess.run(
                list(argv),
                cwd=cwd,
                env=environment,
                stdin=subprocess.DEVNULL,
                check=False,
                capture_output=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            return Done(124, round(time.monotonic() - start, 3), True)
        except OSError as error:
            return Done(127, round(time.monotonic() - start, 3), False, str(error))
        return Done(proc.returncode, round(time.monotonic() - start, 3))


class FakeRunner:
    """Answers the fix step without running obelize; ``act`` may write a run folder."""

    def __init__(self, act: Callable[[list[str]], Done]) -> None:
        self.act = act
        self.calls: list[list[str]] = []

    def run(
        self,
        number: int,
        name: str,
        argv: Sequence[str],
        *,
        timeout: float,
        reason: str | None = None,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> Done:
        self.calls.append(list(argv))
        return self.act(list(argv))


@pytest.fixture(scope="module")
def installed() -> ToolInfo:
    return resolve_tool(None, tool_root=Path("/nonexistent-tool-root"))


def make_repo(root: Path, app: str = APP, requirements: str = "google-generativeai==0.8.3\n") -> Path:
    root.mkdir(parents=True)
    (root / "app.py").write_text(app)
    (root / "requirements.txt").write_text(requirements)
    return root


def git(repo: Path, *args: str) -> None:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(repo), "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def commit_all(repo: Path) -> None:
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "-c", "user.email=bench@example.invalid", "-c", "user.name=bench", "commit", "-q", "-m", "init")


# -- resolving ------------------------------------------------------------------------------


def test_installed_tool(installed: ToolInfo) -> None:
    assert installed.source == "installed"
    assert installed.version == "0.8.0"
    assert installed.python == sys.executable
    assert installed.argv_prefix == (sys.executable, "-I", "-m", "obelize")
    assert (installed.commit, installed.tree_dirty, installed.spec) == (None, None, None)
    out = subprocess.run([*installed.argv_prefix, "--version"], check=False, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "obelize 0.8.0"


def test_tool_info_json_round_trip(installed: ToolInfo) -> None:
    text = installed.to_json()
    assert json.loads(text)["argv_prefix"] == list(installed.argv_prefix)
    assert ToolInfo.from_json(text) == installed
    checkout = installed.model_copy(
        update={"source": "checkout", "commit": "a" * 40, "tree_dirty": True, "spec": "../obelize"}
    )
    assert ToolInfo.from_json(checkout.to_json()) == checkout


@pytest.mark.parametrize(
    "text",
    [
        "nope",
        "[]",
        '{"argv_prefix": []}',
        json.dumps(
            {
                "argv_prefix": [],
                "python": "p",
                "version": "1",
                "commit": None,
                "tree_dirty": None,
                "source": "installed",
                "spec": None,
            }
        ),
        json.dumps(
            {
                "argv_prefix": ["p"],
                "python": "p",
                "version": "1",
                "commit": None,
                "tree_dirty": "no",
                "source": "installed",
                "spec": None,
            }
        ),
        json.dumps(
            {
                "argv_prefix": ["p"],
                "python": "p",
                "version": "1",
                "commit": None,
                "tree_dirty": None,
                "source": "pypi",
                "spec": None,
            }
        ),
    ],
)
def test_tool_info_from_bad_json(text: str) -> None:
    with pytest.raises(ToolError):
        ToolInfo.from_json(text)


@pytest.mark.parametrize(
    "spec,words",
    [
        ("", "empty"),
        ("   ", "empty"),
        ("requests==2.0", "not obelize"),
        ("obelize", "not pinned"),
        ("obelize>=0.7", "not pinned"),
        ("obelize==0.7.*", "not pinned"),
        ("obelize==0.7,<1", "not pinned"),
        ("obelize[mcp]==0.7.0", "plain pin"),
        ("obelize==0.7.0; python_version>'3'", "plain pin"),
        ("obelize @ https://example.invalid/o.whl", "plain pin"),
        ("obelize==", "neither a requirement"),
        ("some thing", "neither a requirement"),
        ("./does-not-exist", "not a directory"),
    ],
)
def test_bad_specs_are_one_line_tool_errors(tmp_path: Path, spec: str, words: str) -> None:
    with pytest.raises(ToolError) as excinfo:
        resolve_tool(spec, tool_root=tmp_path / "tools")
    message = str(excinfo.value)
    assert words in message
    assert "\n" not in message
    assert not (tmp_path / "tools").exists()  # nothing was built for a bad spec


def test_a_directory_that_is_not_an_obelize_checkout(tmp_path: Path) -> None:
    (tmp_path / "proj" / "src" / "other").mkdir(parents=True)
    (tmp_path / "proj" / "pyproject.toml").write_text("[project]\nname='other'\n")
    with pytest.raises(ToolError, match="not an obelize source checkout"):
        resolve_tool(str(tmp_path / "proj"), tool_root=tmp_path / "tools")


# -- pack provenance ------------------------------------------------------------------------


def test_pack_provenance_from_obelize_own_loader(installed: ToolInfo) -> None:
    provenance = pack_provenance(installed, GEMINI)
    assert provenance.pack == GEMINI
    assert provenance.pack_sha256 == GEMINI_SHA
    assert provenance.spec_sha256 is not None and len(provenance.spec_sha256) == 64
    assert set(provenance.model_dump()) == {"pack", "pack_sha256", "spec_sha256"}


def test_pack_provenance_of_an_unknown_pack_is_null(installed: ToolInfo) -> None:
    assert pack_provenance(installed, "gemini") == PackInfo(pack="gemini", pack_sha256=None, spec_sha256=None)


def test_pack_provenance_without_the_api_is_null_not_a_crash(tmp_path: Path, installed: ToolInfo) -> None:
    missing = installed.model_copy(update={"python": str(tmp_path / "no-such-python")})
    assert pack_provenance(missing, GEMINI) == PackInfo(pack=GEMINI, pack_sha256=None, spec_sha256=None)
    # an interpreter with no obelize at all: no loader API to ask
    subprocess.run(
        [uv_binary(), "venv", "-q", "--python", sys.executable, str(tmp_path / "bare")],
        check=True,
        capture_output=True,
        timeout=120,
    )
    bare = installed.model_copy(update={"python": str(tmp_path / "bare" / "bin" / "python")})
    assert pack_provenance(bare, GEMINI) == PackInfo(pack=GEMINI, pack_sha256=None, spec_sha256=None)


# -- the fix step ---------------------------------------------------------------------------


def test_fix_argv(installed: ToolInfo) -> None:
    assert fix_argv(installed, checkout=Path("/w/case"), pack=GEMINI) == [
        sys.executable,
        "-I",
        "-m",
        "obelize",
        "fix",
        "--repo",
        "/w/case",
        "--pack",
        GEMINI,
        "--apply",
        "--non-interactive",
        "--model",
        "none",
        "--json",
    ]
    assert "--verify" not in fix_argv(installed, checkout=Path("/w/case"), pack=GEMINI)


def test_documented_exit_codes() -> None:
    assert DOCUMENTED_EXIT_CODES == (0, 3, 4, 5, 6)


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
    repo = make_repo(tmp_path / "case")
    runner = SubprocessRunner(tmp_path / "home")
    fixed = run_fix(runner, installed, checkout=repo, pack=GEMINI)
    artefacts, runtime = fixed.artefacts, fixed.runtime_s
    assert runner.calls[0][:2] == (6, "fix") and runner.calls[0][3] == repo
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
    repo = make_repo(tmp_path / "case", app="import requests\n", requirements="requests==2.32.3\n")
    artefacts = run_fix(SubprocessRunner(tmp_path / "home"), installed, checkout=repo, pack=GEMINI).artefacts
    assert artefacts.exit_code == 4
    assert (artefacts.written, artefacts.findings) == ((), ())


def test_a_repository_cannot_shadow_the_tool_modules(tmp_path: Path, installed: ToolInfo) -> None:
    repo = make_repo(tmp_path / "case")
    for module in ("yaml.py", "pydantic.py", "typer.py", "libcst.py"):
        (repo / module).write_text("raise SystemExit(99)\n")
    (repo / "obelize").mkdir()
    (repo / "obelize" / "__init__.py").write_text("raise SystemExit(98)\n")
    artefacts = run_fix(SubprocessRunner(tmp_path / "home"), installed, checkout=repo, pack=GEMINI).artefacts
    assert artefacts.written == ("app.py", "requirements.txt")


def test_a_dirty_git_tree_is_an_error_not_unsupported(tmp_path: Path, installed: ToolInfo) -> None:
    repo = make_repo(tmp_path / "case")
    commit_all(repo)
    (repo / "requirements.txt").write_text("google-generativeai==0.8.3\nrequests\n")
    with pytest.raises(CaseError) as excinfo:
        run_fix(SubprocessRunner(tmp_path / "home"), installed, checkout=repo, pack=GEMINI)
    assert (excinfo.value.step, excinfo.value.reason) == ("fix", "obelize_failed")
    assert "tree_dirty" in excinfo.value.detail


def test_a_clean_git_tree_is_migrated(tmp_path: Path, installed: ToolInfo) -> None:
    repo = make_repo(tmp_path / "case")
    commit_all(repo)
    artefacts = run_fix(SubprocessRunner(tmp_path / "home"), installed, checkout=repo, pack=GEMINI).artefacts
    assert artefacts.written == ("app.py", "requirements.txt")


def test_an_unknown_pack_exits_2_and_fails_the_case(tmp_path: Path, installed: ToolInfo) -> None:
    repo = make_repo(tmp_path / "case")
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
    repo = make_repo(tmp_path / "case")
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
    repo = make_repo(tmp_path / "case")
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


# -- tool venvs from PyPI -------------------------------------------------------------------


@pytest.mark.usefixtures("index_uv_cache")
def test_a_pinned_release_gets_a_tool_venv_of_its_own(tmp_path: Path) -> None:
    root = tmp_path / "tools"
    with ThreadPoolExecutor(max_workers=2) as pool:  # two workers at once build it once
        infos = list(pool.map(lambda _: resolve_tool("obelize==0.7.0", tool_root=root), range(2)))
    assert infos[0] == infos[1]
    info = infos[0]
    assert (info.source, info.version, info.spec, info.commit, info.tree_dirty) == (
        "requirement",
        "0.7.0",
        "obelize==0.7.0",
        None,
        None,
    )
    assert Path(info.python).is_relative_to(root)
    assert info.argv_prefix == (info.python, "-I", "-m", "obelize")
    out = subprocess.run([*info.argv_prefix, "--version"], check=False, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "obelize 0.7.0"
    assert len(list((root / "logs").glob("*.install.log"))) == 1

    # reused, not rebuilt, while the marker names the same spec
    marker = Path(info.python).parent.parent / "bench-tool.json"
    stamp = marker.stat().st_mtime_ns
    assert resolve_tool("obelize==0.7.0", tool_root=root) == info
    assert marker.stat().st_mtime_ns == stamp

    provenance = pack_provenance(info, GEMINI)
    assert provenance.pack_sha256 is not None and len(provenance.pack_sha256) == 64
    assert ToolInfo.from_json(info.to_json()) == info


@pytest.mark.usefixtures("index_uv_cache")
def test_a_release_that_does_not_exist(tmp_path: Path) -> None:
    with pytest.raises(ToolError) as excinfo:
        resolve_tool("obelize==0.0.999", tool_root=tmp_path / "tools")
    assert "uv pip install failed" in str(excinfo.value) and "\n" not in str(excinfo.value)


@pytest.mark.usefixtures("index_uv_cache")
def test_a_source_checkout_is_installed_editable_with_its_commit(tmp_path: Path) -> None:
    try:
        sdist = obelize_sdist("0.8.0")
    except SdistUnavailable as unavailable:
        pytest.skip(str(unavailable))
    import tarfile

    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path / "src", filter="data")
    checkout = tmp_path / "src" / "obelize-0.8.0"
    commit_all(checkout)
    info = resolve_tool(str(checkout), tool_root=tmp_path / "tools")
    assert (info.source, info.version, info.tree_dirty) == ("checkout", "0.8.0", False)
    assert info.commit is not None and len(info.commit) == 40
    probe = subprocess.run(
        [info.python, "-I", "-c", "import obelize; print(obelize.__file__)"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert Path(probe.stdout.strip()).is_relative_to(checkout / "src" / "obelize")
    assert pack_provenance(info, GEMINI).pack_sha256 == GEMINI_SHA

    # an edit is live (editable) and shows as a dirty tree on the next resolve
    (checkout / "src" / "obelize" / "extra.py").write_text("x = 1\n")
    again = resolve_tool(str(checkout), tool_root=tmp_path / "tools")
    assert again.tree_dirty is True and again.python == info.python

    # the code that runs is the checkout's
    repo = make_repo(tmp_path / "case")
    artefacts = run_fix(SubprocessRunner(tmp_path / "home"), info, checkout=repo, pack=GEMINI).artefacts
    assert artefacts.written == ("app.py", "requirements.txt")


def test_tool_install_has_no_hidden_network_default() -> None:
    assert "UV_PYTHON_DOWNLOADS" not in TOOL_INSTALL_ENVIRONMENT
    source = {
        "PATH": "/bin",
        "HTTPS_PROXY": "http://proxy.invalid:3128",
        "UV_PYTHON_DOWNLOADS": "automatic",
        "UV_EXCLUDE_NEWER": "2020-01-01T00:00:00Z",  # the cutoff is the venv key's, passed on the command line
        "GEMINI_API_KEY": "secret",
        "GITHUB_TOKEN": "secret",
        "HOME": "/root",
    }
    env = tool_env.install_environment(Path("/h"), source)
    assert env == {
        "PATH": "/bin",
        "HTTPS_PROXY": "http://proxy.invalid:3128",
        "HOME": "/h",
        "UV_PYTHON_DOWNLOADS": "never",
    }


# -- the adapter ----------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["scan", "dry-fix"])
def test_the_adapter_drives_scan_and_a_dry_fix_without_writing(
    tmp_path: Path, installed: ToolInfo, command: str
) -> None:
    from pytest_obelize_bench.tool.adapter import OBELIZE

    repo = make_repo(tmp_path / "case")
    if command == "scan":
        argv = OBELIZE.scan_argv(installed.argv_prefix, checkout=repo, pack=GEMINI)
    else:
        argv = OBELIZE.fix_argv(installed.argv_prefix, checkout=repo, pack=GEMINI, apply=False)
    assert "--apply" not in argv and argv[: len(installed.argv_prefix)] == list(installed.argv_prefix)
    done = subprocess.run(argv, check=False, cwd=repo, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-500:]
    folder = OBELIZE.run_folder(repo)
    assert folder.parent == repo / ".obelize" / "runs" and (folder / "findings.json").is_file()
    if command == "dry-fix":  # a fix's documents, read as the grader reads them
        artefacts = OBELIZE.read(folder, repo)
        assert artefacts.written == ()
        assert ("app.py", 3, "import") in {(f.path, f.line, f.kind) for f in artefacts.findings}
    assert (repo / "app.py").read_text() == APP


def test_a_scan_whose_pointer_did_not_move_is_no_run_folder_too(tmp_path: Path, installed: ToolInfo) -> None:
    """Gate 1's scan and the dry run's fix go through the same guard as a case's fix."""
    from pytest_obelize_bench.tool.invoke import run_tool

    repo = make_repo(tmp_path / "case")
    run_fix(SubprocessRunner(tmp_path / "home"), installed, checkout=repo, pack=GEMINI)  # a committed old run
    with pytest.raises(CaseError) as excinfo:
        run_tool(
            FakeRunner(lambda argv: Done(exit_code=0)),
            number=1,
            name="scan",
            argv=["obelize"],
            checkout=repo,
            timeout=5,
        )
    assert (excinfo.value.step, excinfo.value.reason) == ("scan", "no_run_folder")
