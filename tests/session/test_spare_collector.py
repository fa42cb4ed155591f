"""A benchmark session's objects leave the garbage collector's view, and a process that runs
sessions one after another gets an earlier session's back as the next starts."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from pytest_obelize_bench.session.kernel import spare_collector
from tests.helpers import casefile


class Node:
    """An object in a reference cycle: only the collector frees it."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def thawed() -> Iterator[None]:
    """The test process's objects as pytest keeps them: frozen by nothing, before and after."""
    gc.unfreeze()
    yield
    gc.unfreeze()


@pytest.mark.usefixtures("thawed")
def test_an_earlier_session_s_garbage_is_collected_when_the_next_starts() -> None:
    node = Node()
    alive = weakref.ref(node)
    spare_collector()  # the first session: node is one of its objects
    assert gc.get_freeze_count() > 0
    del node
    gc.collect()
    assert alive() is not None  # frozen: garbage the collector does not look at
    spare_collector()  # the next session
    assert alive() is None


@pytest.mark.usefixtures("thawed")
def test_a_benchmark_session_freezes_what_it_built_and_another_session_does_not(pytester: pytest.Pytester) -> None:
    casefile.write(pytester.path / "cases" / "cases.yaml", casefile.standard())
    pytester.makepyfile(test_unit="def test_one():\n    pass\n")
    assert pytester.runpytest("-q", "test_unit.py").ret == 0
    assert gc.get_freeze_count() == 0
    assert pytester.runpytest("--bench-round=2", "--collect-only", "-q").ret == 0
    assert gc.get_freeze_count() > 0
