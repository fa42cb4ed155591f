"""benchmarks/round_phases.py: the plugin the round-speed benchmark loads into a round, in real sessions.

What it reports is how a round's fixed cost splits (README's round-speed section), so these tests run
real pytest sessions, one process and under ``-n 2``, and check that each process says when it
reached each phase, in order, and that the parts add up to no more than the session's wall time.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from benchmarks.round_phases import FILE_VARIABLE, PHASES, fixed_cost_parts, read_phases
from tests.helpers.project import PROJECT

SLOW_TESTS = """\
import time

def test_one():
    time.sleep(0.3)

def test_two():
    time.sleep(0.3)
"""


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["one-process", "n2"])
def test_every_process_says_when_it_reached_each_phase(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: tuple[str, ...]
) -> None:
    pytester.makepyfile(test_sleeps=SLOW_TESTS)
    phases_file = pytester.path / "phases.jsonl"
    monkeypatch.setenv("PYTHONPATH", str(PROJECT / "benchmarks"))
    monkeypatch.setenv(FILE_VARIABLE, str(phases_file))
    launched = time.monotonic()
    result = pytester.runpytest_subprocess("-p", "round_phases", "-p", "no:randomly", *workers)
    ended = time.monotonic()
    result.assert_outcomes(passed=2)

    phases = read_phases(phases_file)
    assert set(phases) == ({"controller", "gw0", "gw1"} if workers else {"controller"})
    for process, marks in phases.items():
        reached = [phase for phase in PHASES if phase in marks]
        # every phase (the controller's cases as their reports arrive), but a worker xdist gave no case
        assert set(PHASES) - set(reached) <= ({"first_case", "last_case_end"} if process != "controller" else set())
        assert [marks[phase] for phase in reached] == sorted(marks[phase] for phase in reached), process
        assert launched < marks["configure"] and marks["unconfigure"] < ended
    if workers:  # a worker starts after the controller has started xdist; the cases ran on the workers
        assert all(phases[w]["configure"] > phases["controller"]["sessionstart"] for w in ("gw0", "gw1"))
        assert any("first_case" in phases[w] for w in ("gw0", "gw1"))

    parts = fixed_cost_parts(phases, launched, ended)
    assert all(seconds > 0 for seconds in parts.values()), parts
    # the cases took at least 0.3 s (two workers) or 0.6 s (one): the rest is less than the wall
    assert sum(parts.values()) < (ended - launched) - (0.3 if workers else 0.6)


def test_without_the_variable_it_writes_nothing(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_sleeps=SLOW_TESTS)
    monkeypatch.setenv("PYTHONPATH", str(PROJECT / "benchmarks"))
    monkeypatch.delenv(FILE_VARIABLE, raising=False)
    result = pytester.runpytest_subprocess("-p", "round_phases", "-p", "no:randomly")
    result.assert_outcomes(passed=2)
    assert sorted(path.name for path in Path(pytester.path).iterdir() if path.suffix == ".jsonl") == []
