"""The kernel's pure part: the options a benchmark session's workers start with."""

from __future__ import annotations

import shlex

import pytest

from pytest_obelize_bench.session.kernel import SET_ASIDE_PLUGINS, worker_addopts


@pytest.mark.parametrize("current", [None, "", "   "])
def test_a_worker_with_no_options_of_the_user_gets_only_the_blocks(current: str | None) -> None:
    assert shlex.split(worker_addopts(current)) == [part for name in SET_ASIDE_PLUGINS for part in ("-p", f"no:{name}")]


def test_the_user_options_come_first_and_are_kept_whole() -> None:
    current = "-p no:cacheprovider -o 'addopts=-x -q'"
    words = shlex.split(worker_addopts(current))
    assert words[:4] == ["-p", "no:cacheprovider", "-o", "addopts=-x -q"]
    assert words[4:] == ["-p", "no:hypothesispytest", "-p", "no:randomly"]
