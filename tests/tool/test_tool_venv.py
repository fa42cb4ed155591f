"""A pinned release or a source checkout of obelize gets a venv of its own; the adapter's scan and
dry fix write nothing."""

from __future__ import annotations

import json
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench.isolation.policy import TOOL_INSTALL_ENVIRONMENT
from pytest_obelize_bench.tool import venv as tool_env
from pytest_obelize_bench.tool.fix_step import run_fix
from pytest_obelize_bench.tool.info import ToolError, ToolInfo
from pytest_obelize_bench.tool.packs import pack_provenance
from pytest_obelize_bench.tool.venv import resolve_tool
from tests.helpers.app_repo import APP, commit_all, make_app_repo
from tests.helpers.bytecode import every_module_up_to_date
from tests.helpers.packs import GEMINI, GEMINI_SHA
from tests.helpers.sdist import SdistUnavailable, obelize_sdist
from tests.helpers.step_runners import Done, FakeRunner, SubprocessRunner


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
    # compiled when installed: in the read-only sandbox no call could keep a bytecode cache
    assert every_module_up_to_date(_package(info))

    # reused, not rebuilt, while the marker names the same spec
    marker = Path(info.python).parent.parent / "bench-tool.json"
    stamp = marker.stat().st_mtime_ns
    assert resolve_tool("obelize==0.7.0", tool_root=root) == info
    assert marker.stat().st_mtime_ns == stamp

    provenance = pack_provenance(info, GEMINI)
    assert provenance.pack_sha256 is not None and len(provenance.pack_sha256) == 64
    assert ToolInfo.from_json(info.to_json()) == info


def _package(info: ToolInfo) -> Path:
    """The obelize package inside a release's tool venv."""
    (package,) = Path(info.python).parent.parent.glob("lib/python*/site-packages/obelize")
    return package


@pytest.mark.usefixtures("index_uv_cache")
def test_a_tool_venv_built_without_bytecode_is_rebuilt_with_it_and_keeps_its_moment(tmp_path: Path) -> None:
    """A venv whose marker predates the bytecode field (built by an earlier harness): rebuilt once,
    compiled, its release still exempted to the moment it was first built to."""
    root = tmp_path / "tools"
    first = resolve_tool("obelize==0.7.0", tool_root=root, exclude_newer="2026-12-01T00:00:00Z")
    assert first.exclude_newer_tool is not None
    venv = Path(first.python).parent.parent
    old = tool_env.read_marker(venv)
    assert old is not None and old[tool_env.BYTECODE_FIELD] == tool_env.COMPILED
    del old[tool_env.BYTECODE_FIELD]
    (venv / tool_env.MARKER).write_text(json.dumps(old), encoding="utf-8")
    shutil.rmtree(_package(first) / "__pycache__")
    (log,) = (root / "logs").glob("*.install.log")
    stamp = log.stat().st_mtime_ns
    again = resolve_tool("obelize==0.7.0", tool_root=root, exclude_newer="2026-12-01T00:00:00Z")
    assert again == first  # the same folder, release and moment
    assert [log] == list((root / "logs").glob("*.install.log")) and log.stat().st_mtime_ns > stamp  # installed again
    assert (tool_env.read_marker(venv) or {}).get(tool_env.BYTECODE_FIELD) == tool_env.COMPILED
    assert every_module_up_to_date(_package(again))


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
    repo = make_app_repo(tmp_path / "case")
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


@pytest.mark.parametrize("command", ["scan", "dry-fix"])
def test_the_adapter_drives_scan_and_a_dry_fix_without_writing(
    tmp_path: Path, installed: ToolInfo, command: str
) -> None:
    from pytest_obelize_bench.tool.adapter import OBELIZE

    repo = make_app_repo(tmp_path / "case")
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

    repo = make_app_repo(tmp_path / "case")
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
