"""Step time limits: ``--bench-step-timeout`` over the defaults (``policy.DEFAULT_LIMITS``).

A limit is named as the steps are in the records (``fetch``, ``venv``, ``install``, ``baseline``,
``after``, ``fix``, ``compile``); ``suite`` sets both suites at once.  ``install`` covers the
reviewed install commands and both pinned SDK installs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from pytest_obelize_bench.isolation.policy import DEFAULT_LIMITS

#: Names that set several limits at once.
ALIASES: dict[str, tuple[str, ...]] = {"suite": ("baseline", "after")}


class LimitError(ValueError):
    """A ``--bench-step-timeout`` value that cannot be read; the text is the usage error."""


def parse_limits(text: str | None) -> dict[str, float]:
    """``"suite=900,install=1200"`` over the defaults; every name and value checked."""
    limits = dict(DEFAULT_LIMITS)
    if not text:
        return limits
    known = sorted([*DEFAULT_LIMITS, *ALIASES])
    for part in text.split(","):
        name, equals, value = part.strip().partition("=")
        if not equals or not name:
            raise LimitError(f"--bench-step-timeout: expected NAME=SECONDS, got {part.strip()[:80]!r}")
        if name not in DEFAULT_LIMITS and name not in ALIASES:
            raise LimitError(f"--bench-step-timeout: unknown step {name[:80]!r}; known: {', '.join(known)}")
        try:
            seconds = float(value)
        except ValueError:
            raise LimitError(f"--bench-step-timeout: {name}: expected seconds, got {value[:80]!r}") from None
        if not math.isfinite(seconds) or seconds <= 0:
            raise LimitError(f"--bench-step-timeout: {name}: expected a positive number of seconds, got {value[:80]!r}")
        for target in ALIASES.get(name, (name,)):
            limits[target] = seconds
    return limits


def limit(limits: Mapping[str, float], step: str) -> float:
    """The limit of ``step``; the default where a context predates a name."""
    return float(limits.get(step, DEFAULT_LIMITS[step]))
