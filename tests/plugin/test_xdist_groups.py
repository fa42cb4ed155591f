"""The suite's own scheduling: slow tests sharing a module fixture are one group, so one worker runs it once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.groups import INNER_SESSIONS, SLOW, shared_fixture_groups, work_order, write_groups
from tests.helpers.project import PROJECT
from tests.helpers.rounds import INNER_ADDOPTS

MODULE = """
import pytest

slow = pytest.mark.slow

@pytest.fixture(scope="module")
def serial_round():
    return 1

@pytest.fixture(scope="module")
def parallel_round(serial_round):
    return 2

@pytest.fixture(scope="module")
def other_round():
    return 3

@pytest.fixture(scope="module", params=["bwrap", "none"])
def sandboxed(request):
    return request.param

@pytest.fixture(scope="module", autouse=True)
def _cleanup():
    yield

@pytest.fixture
def helper(serial_round):
    return serial_round

@slow
def test_serial(serial_round): pass

@slow
def test_parallel(parallel_round): pass

@slow
def test_through_a_function_fixture(helper): pass

@slow
def test_other(other_round): pass

@slow
def test_alone(): pass

def test_fast(serial_round): pass

@slow
def test_sandboxed(sandboxed): pass
"""


def test_tests_sharing_a_module_fixture_directly_or_not_are_one_group(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_shared=MODULE)
    items = pytester.getitems(pytester.path / "test_shared.py")
    groups = shared_fixture_groups(items)
    name = {item.nodeid.split("::", 1)[1]: groups.get(item.nodeid) for item in items}
    assert name["test_serial"] == name["test_parallel"] == name["test_through_a_function_fixture"]
    assert name["test_serial"] == "test_shared.py::parallel_round"  # the least fixture name of the group
    assert name["test_other"] == "test_shared.py::other_round"
    assert name["test_alone"] is None  # the autouse fixture groups nothing
    assert name["test_fast"] is None  # only slow tests are grouped
    assert name["test_sandboxed[bwrap]"] == "test_shared.py::sandboxed[bwrap]"
    assert name["test_sandboxed[none]"] == "test_shared.py::sandboxed[none]"


def test_the_tests_of_two_modules_sharing_a_folder_conftest_session_fixture_are_one_group(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_ADDOPTS", INNER_ADDOPTS)  # without the plugin, a round's options are unknown
    folder = pytester.mkdir("plugin")
    (folder / "conftest.py").write_text(
        "import pytest\n\n@pytest.fixture(scope='session')\ndef serial_round():\n    return 1\n", encoding="utf-8"
    )
    body = (
        "import pytest\n\n@pytest.mark.slow\ndef test_{0}(serial_round): pass\n\n"
        "def test_{0}_fast(serial_round): pass\n"
    )
    (folder / "test_one.py").write_text(body.format("one"), encoding="utf-8")
    (folder / "test_two.py").write_text(body.format("two"), encoding="utf-8")
    items, _ = pytester.inline_genitems("-p", "no:obelize_bench", str(folder))
    found = shared_fixture_groups(items)
    groups = {item.name: found.get(item.nodeid) for item in items}
    assert groups == {
        "test_one": "plugin/conftest.py::serial_round",
        "test_one_fast": None,
        "test_two": "plugin/conftest.py::serial_round",
        "test_two_fast": None,
    }


#: The project's own scheduling hooks, in a project of a few tests.
PROJECT_CONFTEST = f"""
import sys
sys.path.insert(0, {str(PROJECT)!r})
from tests.conftest import (  # noqa: F401
    pytest_collection_modifyitems,
    pytest_configure_node,
    pytest_unconfigure,
    pytest_xdist_make_scheduler,
)
"""

WORKER_TESTS = """
import json, os
import pytest

@pytest.fixture(scope="module")
def shared_round():
    return os.getpid()

@pytest.mark.parametrize("n", range(8))
def test_sharing(shared_round, n, pytester):
    with open(os.environ["WORKERS_LOG"], "a") as log:
        log.write(json.dumps(["shared", os.environ["PYTEST_XDIST_WORKER"]]) + "\\n")

@pytest.mark.parametrize("n", range(8))
def test_alone(n, pytester):
    with open(os.environ["WORKERS_LOG"], "a") as log:
        log.write(json.dumps(["alone", os.environ["PYTEST_XDIST_WORKER"]]) + "\\n")
"""


def test_under_two_workers_a_group_runs_on_one_worker(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeconftest(PROJECT_CONFTEST)
    pytester.makepyfile(test_workers=WORKER_TESTS)
    log = pytester.path / "workers.log"
    monkeypatch.setenv("WORKERS_LOG", str(log))
    result = pytester.runpytest_subprocess("-n", "2", "-p", "pytester")
    result.assert_outcomes(passed=16)
    runs = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert len({worker for kind, worker in runs if kind == "shared"}) == 1
    assert len([1 for kind, _ in runs if kind == "alone"]) == 8


def test_the_groups_file_is_replaced_whole(tmp_path: Path) -> None:
    path = tmp_path / "groups.json"
    write_groups(path, {"a::t": "a::f"})
    write_groups(path, {"b::t": "b::f"})
    assert json.loads(path.read_text(encoding="utf-8")) == {"groups": {"b::t": "b::f"}, "ranks": {}}
    assert [p.name for p in path.parent.iterdir()] == ["groups.json"]


def test_groups_go_first_then_slow_tests_by_rank_then_fast_ones_in_collection_order() -> None:
    scopes = [
        ("fast-a", ["fast-a"]),
        ("unit::x", ["unit::x"]),
        ("session", ["session"]),
        ("small-group", ["g1", "g2"]),
        ("fast-b", ["fast-b"]),
        ("slow", ["slow"]),
        ("big-group", ["h1", "h2", "h3"]),
    ]
    ranks = {"session": INNER_SESSIONS, "slow": SLOW, "g1": SLOW}
    assert work_order(scopes, ranks) == ["big-group", "small-group", "session", "slow", "fast-a", "unit::x", "fast-b"]
