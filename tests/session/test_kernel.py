"""The options a benchmark session's workers start with: the pure part, and the xdist hook that sets them."""

from __future__ import annotations

import shlex
from types import SimpleNamespace
from typing import Any, cast

import pytest
from execnet import XSpec

from pytest_obelize_bench.session.kernel import (
    ADDOPTS_VARIABLE,
    KIND_KEY,
    SET_ASIDE_PLUGINS,
    pytest_xdist_setupnodes,
    worker_addopts,
)


@pytest.mark.parametrize("current", [None, "", "   "])
def test_a_worker_with_no_options_of_the_user_gets_only_the_blocks(current: str | None) -> None:
    assert shlex.split(worker_addopts(current)) == [part for name in SET_ASIDE_PLUGINS for part in ("-p", f"no:{name}")]


def test_the_user_options_come_first_and_are_kept_whole() -> None:
    current = "-p no:cacheprovider -o 'addopts=-x -q'"
    words = shlex.split(worker_addopts(current))
    assert words[:4] == ["-p", "no:cacheprovider", "-o", "addopts=-x -q"]
    assert words[4:] == ["-p", "no:hypothesispytest", "-p", "no:randomly"]


def _session(benchmark: bool) -> pytest.Config:
    """What the hook reads of a session: its stash, holding a kind in a benchmark session."""
    stash = pytest.Stash()
    if benchmark:
        stash[KIND_KEY] = cast(Any, object())
    return cast(pytest.Config, SimpleNamespace(stash=stash))


def test_local_workers_start_from_the_controller_options_and_remote_ones_from_their_spec(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ADDOPTS_VARIABLE, "-p no:cacheprovider")
    blocks = worker_addopts(None)
    local, own, remote, remote_own = (
        XSpec("popen"),
        XSpec("popen//env:PYTEST_ADDOPTS=-x"),
        XSpec("ssh=user@host//python=/clone/.venv/bin/python"),
        XSpec("socket=192.0.2.1:8888//env:PYTEST_ADDOPTS=-q"),
    )
    pytest_xdist_setupnodes(_session(True), [local, own, remote, remote_own])
    assert local.env == {ADDOPTS_VARIABLE: f"-p no:cacheprovider {blocks}"}
    assert own.env == {ADDOPTS_VARIABLE: f"-x {blocks}"}
    assert remote.env == {ADDOPTS_VARIABLE: blocks}
    assert remote_own.env == {ADDOPTS_VARIABLE: f"-q {blocks}"}


def test_another_session_leaves_its_workers_as_they_are(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ADDOPTS_VARIABLE, raising=False)
    spec = XSpec("popen")
    pytest_xdist_setupnodes(_session(False), [spec])
    assert spec.env == {}
