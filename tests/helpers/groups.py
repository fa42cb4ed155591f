"""Which slow tests share a module fixture, so that xdist runs each such set on one worker.

A module fixture of ``tests/plugin/`` runs a whole round (a minute or more) once for the tests
that read it. Under ``-n`` with xdist's ``--dist=load``, those tests were handed to both workers,
and each worker ran the round for itself: the same round twice. ``xdist_group`` cannot help here:
xdist 3.8 names a grouped item by assigning ``item._nodeid``, which pytest 9 no longer reads.

So the workers say which tests share a fixture (``shared_fixture_groups``, written to a file the
controller names) and the controller schedules with ``shared_fixture_scheduling``: xdist's
scheduling by scope, each group one scope and every other test a scope of its own, as under
``load``. A group goes to one worker, which runs its round once, while the other worker runs
everything else; the largest groups start first, then the slow tests, the fast ones last
(``work_order``), so a long test never starts when the other workers have nothing left to do.

A group is every slow test of a module that needs, directly or through another fixture, a
module-scoped fixture of that module or a session-scoped fixture of its folder's ``conftest.py``
(one round read by the tests of several modules), joined with every other test needing one of the same (so
the tests of ``parallel_round``, which needs ``serial_round``, join those of ``serial_round``). A
parametrized module fixture is one fixture per parameter: each parameter's round is its own group.
An autouse fixture groups nothing: it is what a test asks for that counts.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

#: The ``workerinput`` key naming the file in which the workers write the groups.
WORKERINPUT_KEY = "obelize_tests_groups_file"


def _module_fixtures(item: pytest.Item) -> set[str]:
    """``where::name[param]`` of each fixture the item needs that runs a round once for several tests: a
    module-scoped fixture of the item's own module (``where`` is the module's path), or a session-scoped
    one of a folder's ``conftest.py`` (``where`` is that conftest), shared by the folder's modules."""
    info = getattr(item, "_fixtureinfo", None)
    module = getattr(item, "module", None)
    if info is None or module is None:
        return set()
    params = getattr(getattr(item, "callspec", None), "params", {})
    found: set[str] = set()
    pending, seen = list(info.argnames), set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        definitions = info.name2fixturedefs.get(name)
        if not definitions:
            continue
        definition = definitions[-1]
        pending.extend(definition.argnames)
        label = f"{name}[{params[name]}]" if name in params else name
        if definition.scope == "module" and getattr(definition.func, "__module__", None) == module.__name__:
            found.add(f"{item.nodeid.split('::', 1)[0]}::{label}")
        elif definition.scope == "session" and (folder := _folder_conftest(definition.func)) is not None:
            found.add(f"{folder}::{label}")
    return found


def _folder_conftest(func: Any) -> str | None:
    """``plugin/conftest.py`` when ``func`` is defined in a conftest below ``tests/``, else None
    (the root conftest's session fixtures, the shared uv caches, are every slow test's)."""
    code = getattr(func, "__code__", None)
    path = Path(code.co_filename) if code is not None else None
    if path is None or path.name != "conftest.py" or path.parent.name == "tests":
        return None
    return f"{path.parent.name}/conftest.py"


def shared_fixture_groups(items: Iterable[pytest.Item]) -> dict[str, str]:
    """Node id -> group name, for each slow item sharing a module fixture with others."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    needs: dict[str, list[str]] = {}
    for item in items:
        if item.get_closest_marker("slow") is None:
            continue
        keys = sorted(_module_fixtures(item))
        if not keys:
            continue
        needs[item.nodeid] = keys
        for key in keys:
            parent.setdefault(key, key)
        for key in keys[1:]:
            parent[root(key)] = root(keys[0])
    # Each group is named after the least of its fixtures: the same name on every worker.
    names: dict[str, str] = {}
    for key in sorted(parent):
        names.setdefault(root(key), key)
    return {nodeid: names[root(keys[0])] for nodeid, keys in needs.items()}


#: The rank of a slow test that runs benchmark sessions itself (``tests/plugin/``), of any other slow
#: test; a test with neither rank is fast.
INNER_SESSIONS, SLOW = 0, 1


def slow_ranks(items: Iterable[pytest.Item]) -> dict[str, int]:
    """Node id -> rank, for each slow item: the ones ``work_order`` sends before the fast ones."""
    return {
        item.nodeid: INNER_SESSIONS if item.nodeid.startswith("tests/plugin/") else SLOW
        for item in items
        if item.get_closest_marker("slow") is not None
    }


def work_order(scopes: list[tuple[str, list[str]]], ranks: dict[str, int]) -> list[str]:
    """The scopes in the order the workers get them: groups first, largest first (xdist's order),
    then single slow tests by rank, then the fast ones; ties keep the collection's order.

    Why: a random collection order (pytest-randomly) left some runs with a minute-long test
    starting last, on one worker, while the others had nothing left; the fast tests, about a
    twentieth of the suite's work, now fill the others' time at the end instead.
    """

    def key(scope: tuple[str, list[str]]) -> tuple[int, int]:
        nodeids = scope[1]
        if len(nodeids) > 1:
            return (0, -len(nodeids))
        return (1, ranks.get(nodeids[0], SLOW + 1))

    return [name for name, _ in sorted(scopes, key=key)]


def write_groups(path: Path, groups: dict[str, str], ranks: dict[str, int] | None = None) -> None:
    """Every worker writes the same groups and ranks; each write replaces the file whole."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        json.dump({"groups": groups, "ranks": ranks or {}}, stream, sort_keys=True)
    os.replace(temporary, path)


def shared_fixture_scheduling(config: pytest.Config, log: Any, groups_file: Path) -> Any:
    """xdist's scheduling by scope, where a scope is a group of ``shared_fixture_groups`` or one test."""
    from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]  # only under xdist

    class SharedFixtureScheduling(LoadScopeScheduling):  # type: ignore[misc]
        groups: dict[str, str] | None = None
        ranks: dict[str, int] | None = None
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:  # the workers wrote it as they collected, before any test is sent
                try:
                    found = json.loads(groups_file.read_text(encoding="utf-8"))
                    self.groups, self.ranks = dict(found["groups"]), dict(found["ranks"])
                except (OSError, ValueError, KeyError, TypeError):
                    self.groups, self.ranks = {}, {}
            return str(self.groups.get(nodeid, nodeid))

        def _assign_work_unit(self, node: Any) -> None:
            if not self.ordered:  # the queue is whole when the first unit is taken from it
                self.ordered = True
                queue = self.workqueue
                scopes = [(name, list(units)) for name, units in queue.items()]
                order = work_order(scopes, self.ranks or {})
                units = {name: queue[name] for name in order}
                queue.clear()
                queue.update(units)
            super()._assign_work_unit(node)

    return SharedFixtureScheduling(config, log)


__all__ = [
    "INNER_SESSIONS",
    "SLOW",
    "WORKERINPUT_KEY",
    "shared_fixture_groups",
    "shared_fixture_scheduling",
    "slow_ranks",
    "work_order",
    "write_groups",
]
