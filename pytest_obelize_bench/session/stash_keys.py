"""Names the plugin and the controller share: the session's stash keys and the worker-input key.

They live apart from both so that neither imports the other for a constant.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_obelize_bench.case.context import RoundContext
    from pytest_obelize_bench.casefile.cases import Case
    from pytest_obelize_bench.session.round_controller import Controller
    from pytest_obelize_bench.session.startup import RoundFiles

#: The xdist workerinput key that carries the cases a rerun is limited to.
ONLY_WORKERINPUT_KEY = "obelize_bench_only"
#: The xdist workerinput key that carries each case's seconds in the latest run (``ordering.py``).
ORDER_WORKERINPUT_KEY = "obelize_bench_case_seconds"

CONTEXT_KEY: pytest.StashKey[RoundContext] = pytest.StashKey()
COLLECT_PATHS_KEY: pytest.StashKey[dict[Path, list[Case]]] = pytest.StashKey()
ONLY_KEY: pytest.StashKey[frozenset[str]] = pytest.StashKey()
ORDER_KEY: pytest.StashKey[dict[str, float]] = pytest.StashKey()
#: the case file and the reviews as the session read them at configure (``startup.RoundFiles``)
ROUND_FILES_KEY: pytest.StashKey[RoundFiles] = pytest.StashKey()
#: the round's controller, on the controller process only
CONTROLLER_KEY: pytest.StashKey[Controller] = pytest.StashKey()

__all__ = [
    "COLLECT_PATHS_KEY",
    "CONTEXT_KEY",
    "CONTROLLER_KEY",
    "ONLY_KEY",
    "ONLY_WORKERINPUT_KEY",
    "ORDER_KEY",
    "ORDER_WORKERINPUT_KEY",
    "ROUND_FILES_KEY",
]
