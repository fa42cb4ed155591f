"""bubblewrap as the tests see it: probed once, when a test first asks, never at import."""

from __future__ import annotations

import functools

from pytest_obelize_bench.isolation.sandbox import Probe, probe_bwrap


@functools.cache
def bwrap_probe() -> Probe:
    return probe_bwrap()
