"""A worker's own paths (remote.py): when it shares the controller's, and what it derives when not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_obelize_bench.case.context import RoundContext
from pytest_obelize_bench.session.remote import (
    REPO_CACHE_ENV,
    WORK_ENV,
    clone_refusal,
    file_sha256,
    localize,
    logs_of,
    own_tool,
    shares_controller_paths,
    write_session_marker,
)
from pytest_obelize_bench.tool.venv import resolve_tool


def context_at(work: Path, **fields: Any) -> RoundContext:
    """A controller's context; ``fields`` as the JSON a worker is handed would hold them."""
    base = {
        "mode": "fixtures",
        "round": None,
        "project_root": "/controller/project",
        "cases_path": "/controller/project/cases/cases.yaml",
        "fixtures_dir": "/controller/project/cases/fixtures",
        "results_dir": "/controller/project/results",
        "work_root": str(work),
        "repo_cache": "/controller/cache",
        "uv_cache": str(work / "uv-cache"),
    }
    return RoundContext.model_validate({**base, **fields})


def tool(**fields: Any) -> dict[str, Any]:
    """A tool as the context carries it: an installed one unless ``fields`` say otherwise."""
    base = {"argv_prefix": ["python"], "python": "python", "commit": None, "tree_dirty": None, "spec": None}
    return {**base, "source": "installed", "version": "0.9", **fields}


OWN = {"project_root": "/worker/clone", "cases_path": "/worker/clone/cases/cases.yaml"}


def test_a_worker_that_sees_the_session_marker_keeps_the_controllers_paths(tmp_path: Path) -> None:
    context = context_at(tmp_path, work_token=write_session_marker(tmp_path), env_templates=str(tmp_path / "shared"))
    assert shares_controller_paths(context)
    local = localize(context, workerid="gw0", own=OWN, environ={}, host="box")
    assert local == context.model_copy(update={"worker": "gw0@box"})
    assert not local.remote and local.templates_dir == tmp_path / "shared"


@pytest.mark.parametrize("token", [None, "", "0" * 32, "../../etc"])
def test_without_the_marker_a_worker_derives_its_own_paths(tmp_path: Path, token: str | None) -> None:
    write_session_marker(tmp_path)  # another session's marker does not count
    context = context_at(tmp_path / "controller", work_token=token, env_templates="/controller/templates")
    assert not shares_controller_paths(context)
    own = tmp_path / "worker"
    environ = {WORK_ENV: str(own), REPO_CACHE_ENV: str(tmp_path / "bare")}
    remote = localize(context, workerid="gw3", own=OWN, environ=environ, host="box")
    assert remote.remote and remote.worker == "gw3@box" and remote.refusal is None
    assert (remote.work_root, remote.uv_cache, remote.repo_cache, remote.templates_dir) == (
        str(own),
        str(own / "uv-cache"),
        str(tmp_path / "bare"),
        own / "env-templates",  # the controller's folder is not this machine's
    )
    assert (remote.project_root, remote.cases_path) == ("/worker/clone", "/worker/clone/cases/cases.yaml")
    assert remote.results_dir == context.results_dir  # not in ``own``: left as it was
    assert logs_of(remote, "ann__clean") == f"gw3@box:{own / 'fixtures' / 'ann__clean.logs'}"


def test_a_remote_worker_has_no_repository_cache_unless_its_machine_sets_one(tmp_path: Path) -> None:
    remote = localize(context_at(tmp_path), workerid="gw1", own={}, environ={WORK_ENV: str(tmp_path / "w")})
    assert remote.repo_cache is None


def test_the_work_variable_wins_even_beside_the_controller(tmp_path: Path) -> None:
    context = context_at(tmp_path, work_token=write_session_marker(tmp_path))
    remote = localize(context, workerid="gw0", own={}, environ={WORK_ENV: str(tmp_path / "mine")})
    assert remote.remote and remote.work_root == str(tmp_path / "mine")


def test_a_symlinked_or_oversized_marker_is_not_the_session(tmp_path: Path) -> None:
    token = write_session_marker(tmp_path)
    marker = tmp_path / ".sessions" / token
    marker.write_text(token + "x" * 100, encoding="ascii")
    assert not shares_controller_paths(context_at(tmp_path, work_token=token))
    real = tmp_path / "elsewhere"
    real.write_text(token, encoding="ascii")
    marker.unlink()
    marker.symlink_to(real)
    assert not shares_controller_paths(context_at(tmp_path, work_token=token))


def test_a_checkout_missing_on_the_worker_is_refused(tmp_path: Path) -> None:
    checkout = tool(source="checkout", spec="../obelize", commit="a" * 40, tree_dirty=False)
    context = context_at(tmp_path, tool=checkout, tool_checkout=str(tmp_path / "absent"))
    data, refusal = own_tool(context, tmp_path / "tools")
    assert data is None
    assert (
        refusal
        == f"the obelize checkout {tmp_path / 'absent'} is not on this machine; clone it there at commit {'a' * 40}"
    )


def test_a_dirty_controller_checkout_is_refused_on_a_remote_worker(tmp_path: Path) -> None:
    (tmp_path / "obelize").mkdir()
    dirty = tool(source="checkout", spec="x", commit="b" * 40, tree_dirty=True)
    _, refusal = own_tool(context_at(tmp_path, tool=dirty, tool_checkout=str(tmp_path / "obelize")), tmp_path)
    assert refusal is not None and "uncommitted changes" in refusal


def test_the_installed_tool_must_be_the_controllers_version(tmp_path: Path) -> None:
    installed = resolve_tool(None, tool_root=tmp_path)
    same = tool(version=installed.version)
    data, refusal = own_tool(context_at(tmp_path, tool=same), tmp_path)
    assert refusal is None and data is not None and data.version == installed.version
    _, refusal = own_tool(context_at(tmp_path, tool={**same, "version": "0.0.1"}), tmp_path)
    assert refusal == f"this machine's obelize is {installed.version}, the controller's is 0.0.1"


def test_a_clone_with_another_case_file_or_commit_is_refused(tmp_path: Path) -> None:
    cases = tmp_path / "cases.yaml"
    cases.write_text("round: 2\n", encoding="utf-8")
    context = context_at(tmp_path, cases_sha256=file_sha256(cases), harness={"commit": "c" * 40})
    own = {"cases_path": str(cases)}
    assert clone_refusal(context, own, lambda: "c" * 40) is None
    assert clone_refusal(context, own, lambda: "d" * 40) == (
        f"this clone is at {'d' * 40}, the controller's at {'c' * 40}; check out the same commit"
    )
    cases.write_text("round: 3\n", encoding="utf-8")
    refusal = clone_refusal(context, own, lambda: "c" * 40)
    assert refusal is not None and refusal.startswith(f"the case file {cases} here is not the controller's")
    remote = localize(context, workerid="gw0", own=own, environ={WORK_ENV: str(tmp_path / "w")})
    assert remote.refusal == refusal


def test_the_typed_context_survives_the_trip_to_a_worker(tmp_path: Path) -> None:
    """xdist hands a worker a string: the tool, packs, harness and sandbox come back as the same models."""
    context = context_at(
        tmp_path,
        tool=tool(source="checkout", spec="../obelize", commit="a" * 40, tree_dirty=False),
        packs={"p/c": {"pack": "p/c", "pack_sha256": "ab" * 32, "spec_sha256": None}},
        harness={"version": "1.0", "commit": "c" * 40, "tree_dirty": False},
        sandbox={"mode": "bwrap", "program": "/usr/bin/bwrap", "version": "0.10.0", "overlay": True},
        python_search=["/opt/python"],
    )
    text = context.to_json()
    assert isinstance(text, str)
    back = RoundContext.from_json(text)
    assert back == context
    assert back.tool is not None and back.tool.checkout == "../obelize" and back.tool.argv_prefix == ("python",)
    assert back.packs["p/c"].pack_sha256 == "ab" * 32
    assert (back.harness.commit, back.sandbox.overlay, back.python_search) == ("c" * 40, True, ("/opt/python",))
