"""A pytest plugin ``round_speed.py`` loads into a round: when each of its processes reached each phase.

Loaded with ``-p round_phases`` (this folder on PYTHONPATH) and ``ROUND_PHASES_FILE`` naming a file.
Every process of the session, the controller and each xdist worker, appends one JSON line when it
ends: its name and, for each phase it reached, ``time.monotonic()`` then.  The monotonic clock is the
machine's, so the benchmark, which noted it when it started the session, can tell what the session's
fixed cost is made of: the controller's start until xdist starts the workers (in ``sessionstart``),
a worker's start until its first case, and what follows the last case (the publication).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import pytest

FILE_VARIABLE = "ROUND_PHASES_FILE"
#: The phases, in the order a process reaches them; ``last_case_end`` is the last one to finish.
PHASES = ("configure", "sessionstart", "first_case", "last_case_end", "sessionfinish", "unconfigure")

_reached: dict[str, float] = {}


def _mark(phase: str, *, again: bool = False) -> None:
    if again or phase not in _reached:
        _reached[phase] = time.monotonic()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    _mark("configure")


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    _mark("sessionstart")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    _mark("first_case")


@pytest.hookimpl(trylast=True)
def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    _mark("last_case_end", again=True)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    _mark("sessionfinish")


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    _mark("unconfigure")
    target = os.environ.get(FILE_VARIABLE)
    if not target:
        return
    worker = getattr(config, "workerinput", {}).get("workerid")
    line = json.dumps({"process": worker or "controller", "phases": _reached}) + "\n"
    with open(target, "a", encoding="utf-8") as handle:  # one short write a process
        handle.write(line)


def read_phases(path: str | os.PathLike[str]) -> dict[str, dict[str, float]]:
    """Each process's phases, by process name, from the file the session wrote."""
    found: dict[str, dict[str, float]] = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            entry = json.loads(line)
            found[entry["process"]] = {name: float(at) for name, at in entry["phases"].items()}
    return found


def fixed_cost_parts(phases: dict[str, dict[str, float]], launched: float, ended: float) -> dict[str, float]:
    """Where a round's time outside its cases went, in seconds, from its processes' phases.

    ``launched`` and ``ended``: ``time.monotonic()`` when the session was started and when it exited.
    """
    controller = phases["controller"]
    workers = [marks for name, marks in phases.items() if name != "controller" and "first_case" in marks]
    first_case = min((marks["first_case"] for marks in workers), default=controller.get("first_case", ended))
    return {
        "controller start-up, until it starts the workers": controller["sessionstart"] - launched,
        "until the first case starts (a worker's start-up under xdist)": first_case - controller["sessionstart"],
        "after the last case (publication, exit)": ended - controller.get("last_case_end", ended),
    }


__all__ = ["FILE_VARIABLE", "PHASES", "fixed_cost_parts", "read_phases"]
