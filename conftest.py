"""The project's own test configuration: plugin tests drive the real plugin through pytester."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``tutorial`` run only when ``-m`` names them: they repeat what .ci/run already runs."""
    if "tutorial" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="runs only with -m tutorial (.ci/run runs it)")
    for item in items:
        if item.get_closest_marker("tutorial") is not None:
            item.add_marker(skip)
