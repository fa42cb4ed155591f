"""One pytest item stack for every measurement: a round's cases, Gate 1's and the dry run's
repositories, the comparison's dev cases.

A measurement registers an ``ItemKind`` at configure time. The kernel owns everything pytest
sees of it: the File that collects the kind's files, the one Item class, the report hook that
copies an item's ``Handover`` onto its report (the part xdist carries to the controller), the
terminal status, the worker input and the options a worker starts with, and the preflight call
made once per session on the controller, after every selection (-k, -m, --lf) is made.
"""

from __future__ import annotations

import functools
import gc
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pytest

#: The names hypothesis and pytest-randomly register their pytest plugins under, set aside in every
#: benchmark session (the plugin's ``pytest_configure``; on workers before they load, below).
SET_ASIDE_PLUGINS = ("hypothesispytest", "randomly")
#: The variable whose options pytest reads before it loads installed plugins.
ADDOPTS_VARIABLE = "PYTEST_ADDOPTS"


@dataclass(frozen=True)
class Unit:
    """One item a kind's file yields."""

    name: str
    body: Callable[..., None]
    #: what ``pytest -v`` shows beside the item's location
    label: str
    markers: tuple[str | pytest.MarkDecorator, ...] = ()
    #: set on the item (``bench_case``, ``bench_attempt``, ``bench_repository``)
    attributes: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Handover:
    """What an item's body leaves for its report: plain values, so xdist can carry them."""

    #: set on the call report as attributes, for the controller's logreport hook
    attributes: Mapping[str, Any]
    #: the terminal's (category, letter, word) for a passed call
    status: tuple[str, str, Any] | None = None
    #: a JUnit property; junitxml reads the teardown report, which copies the item's list
    junit: tuple[str, str] | None = None
    #: the line pytest's summary shows for a call that passed but measured an error
    error_line: str | None = None
    #: a report section (title, text) shown with ``-rA``
    section: tuple[str, str] | None = None


class ItemKind(Protocol):
    """A measurement as pytest sees it."""

    def files(self) -> Mapping[Path, Sequence[Unit]]:
        """The files this session collects, each with the units it yields (resolved paths)."""
        ...

    def worker_input(self) -> Mapping[str, Any]:
        """What a worker needs, JSON-safe, under the kind's own keys (controller side)."""
        ...

    def preflight(self, names: list[str]) -> None:
        """Check the selected items' repositories before anything runs (controller side)."""
        ...


class ControllerPreflight:
    """For a kind whose preflight is its controller's: the plugin registered under ``controller_name``
    on the controller process (a worker has none, and never preflights)."""

    config: pytest.Config
    controller_name: str

    def preflight(self, names: list[str]) -> None:
        controller = self.config.pluginmanager.get_plugin(self.controller_name)
        if controller is not None:
            controller.preflight(names)


KIND_KEY: pytest.StashKey[ItemKind] = pytest.StashKey()
HANDOVER_KEY: pytest.StashKey[Handover] = pytest.StashKey()
_PREFLIGHTED_KEY: pytest.StashKey[bool] = pytest.StashKey()


def register_kind(config: pytest.Config, kind: ItemKind) -> None:
    """The session's one measurement; configure refuses two (the options allow only one)."""
    if KIND_KEY in config.stash:
        raise pytest.UsageError("one benchmark measurement per session")
    config.stash[KIND_KEY] = kind
    config.args = [str(path) for path in kind.files()]
    config.args_source = pytest.Config.ArgsSource.ARGS


class BenchItem(pytest.Function):
    """A measured unit: a pytest Function (so fixtures work) reported as what it measures."""

    bench_label: str = ""
    bench_case: Any = None
    #: 1 for a single run; under --bench-repeat, which attempt this item is.
    bench_attempt: int = 1
    bench_repository: Any = None

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, self.bench_label


class BenchFile(pytest.File):
    """One of the kind's files: one item per unit, in the kind's order."""

    def __init__(self, *, units: Sequence[Unit], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.units = units

    def collect(self) -> list[pytest.Item]:
        items: list[pytest.Item] = []
        for unit in self.units:
            item = BenchItem.from_parent(self, name=unit.name, callobj=unit.body)
            item.bench_label = unit.label
            for name, value in unit.attributes.items():
                setattr(item, name, value)
            for marker in unit.markers:
                item.add_marker(marker)
            items.append(item)
        return items


def hand_over(item: pytest.Item, handover: Handover) -> None:
    """Called by a body once its unit is measured."""
    item.stash[HANDOVER_KEY] = handover
    if handover.section is not None:
        item.add_report_section("call", *handover.section)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    kind = parent.config.stash.get(KIND_KEY, None)
    if kind is None:
        return None
    units = kind.files().get(file_path.resolve())
    if units is None:
        return None
    return BenchFile.from_parent(parent, path=file_path, units=units)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    handover = item.stash.get(HANDOVER_KEY, None)
    if call.when == "call" and handover is not None:
        for name, value in handover.attributes.items():
            setattr(report, name, value)
        if handover.status is not None:
            report.bench_status = list(handover.status)
        if handover.error_line is not None and report.passed:
            report.longrepr = handover.error_line
        if handover.junit is not None:
            item.user_properties.append(handover.junit)
    return report


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> tuple[str, str, Any] | None:
    shown = getattr(report, "bench_status", None)
    if shown is None or report.when != "call" or not report.passed:
        return None
    category, letter, word = shown
    return str(category), str(letter), tuple(word) if isinstance(word, list) else word


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    kind = node.config.stash.get(KIND_KEY, None)
    if kind is not None:
        node.workerinput.update(kind.worker_input())


def _preflight(config: pytest.Config, names: list[str]) -> None:
    kind = config.stash.get(KIND_KEY, None)
    if kind is None or config.stash.get(_PREFLIGHTED_KEY, False):
        return
    config.stash[_PREFLIGHTED_KEY] = True
    kind.preflight(names)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Without xdist the session's own items; under xdist the controller collects nothing."""
    config = session.config
    if not hasattr(config, "workerinput") and config.pluginmanager.get_plugin("dsession") is None:
        _preflight(config, [item.name for item in session.items])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """The first worker's collection: every worker collects the same items."""
    _preflight(node.config, [nodeid.rpartition("::")[2] for nodeid in ids])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """A benchmark session under ``-n`` (xdist's ``load``): each next case to a worker that has just
    finished one (``scheduler.py``).  Any other session, or another ``--dist``, is xdist's own."""
    if KIND_KEY not in config.stash or config.getvalue("dist") != "load":
        return None
    from pytest_obelize_bench.session.scheduler import FreeWorkerScheduling  # loads xdist's scheduler: -n only

    return FreeWorkerScheduling(config, log)


@contextmanager
def kept_objects() -> Iterator[None]:
    """A benchmark session's start: what it builds (the harness's modules, pydantic's models, the
    case file) lives as long as its process, so the garbage collector neither runs while it is
    built nor looks at it afterwards (``gc.freeze``).

    Why: a controller's start ran some 57 collections, two of them full, 50 ms; and a full
    collection over those objects took some 30 ms, of which a process of a round made two or three
    as it ended (pytest's ``unraisableexception`` collects in its unconfigure and its cleanup, the
    interpreter as it exits), while the controller waited for its workers to exit: 0.3 s from a
    round's last case to its end became 0.12 s.  A process that runs one session after another
    (pytester) gets back what an earlier one froze as the next starts, so at most one session's
    objects wait for the collector.
    """
    if gc.get_freeze_count():  # frozen by an earlier session of this process: collected first
        gc.unfreeze()
        gc.collect()
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if collecting:
            gc.enable()


def own_temp_folder(config: pytest.Config) -> None:
    """A benchmark session's pytest temp folder (``--basetemp``) is a new one of its own, removed as
    the session ends, unless the user named one.  Called on the controller, at configure.

    Why: xdist asks the controller for pytest's temp folder to give each worker one inside it, and by
    default that is a new numbered folder beside those of earlier pytest sessions, the oldest of
    which pytest removes as the session ends.  After a test suite's run they can hold gigabytes: a
    round waited 19 s past its last case while they were removed.
    """
    if config.option.basetemp is not None:
        return
    folder = tempfile.mkdtemp(prefix="obelize-bench-pytest-")
    config.option.basetemp = folder
    config.add_cleanup(functools.partial(shutil.rmtree, folder, ignore_errors=True))


def worker_addopts(current: str | None) -> str:
    """``PYTEST_ADDOPTS`` for a worker: ``current`` and a ``-p no:`` for each plugin set aside.

    Why: blocked at configure, a plugin has already been imported; pytest-randomly imports numpy,
    about 0.1 s and 0.15 processor-seconds in every process.  A worker reads these options before
    it loads installed plugins, so it never imports them.  The controller has loaded them before
    any hook of this plugin runs.
    """
    blocks = " ".join(f"-p no:{name}" for name in SET_ASIDE_PLUGINS)
    return f"{current} {blocks}" if current and current.strip() else blocks


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_setupnodes(config: pytest.Config, specs: Sequence[Any]) -> None:
    """A benchmark session's workers start with the set-aside plugins blocked (``worker_addopts``).

    A local (``popen``) worker inherits the controller's environment, so its options start from the
    controller's ``PYTEST_ADDOPTS``; a remote one only from what its ``--tx`` spec sets.
    """
    if KIND_KEY not in config.stash:
        return
    for spec in specs:
        inherited = os.environ.get(ADDOPTS_VARIABLE) if spec.popen else None
        spec.env[ADDOPTS_VARIABLE] = worker_addopts(spec.env.get(ADDOPTS_VARIABLE, inherited))


def partial_line(received: int, wanted: int, noun: str) -> str | None:
    """The one rule every measurement publishes by: a partial run is never published."""
    if received >= wanted:
        return None
    return f"not published: {received} of {wanted} {noun} ran, and a partial run is never published"


__all__ = [
    "ADDOPTS_VARIABLE",
    "HANDOVER_KEY",
    "KIND_KEY",
    "SET_ASIDE_PLUGINS",
    "BenchFile",
    "BenchItem",
    "ControllerPreflight",
    "Handover",
    "ItemKind",
    "Unit",
    "hand_over",
    "kept_objects",
    "own_temp_folder",
    "partial_line",
    "register_kind",
    "worker_addopts",
]
