"""The one spelling of a moment in records, manifests, locks and cutoffs: ``YYYY-MM-DDTHH:MM:SSZ``.

uv reads the same spelling for ``--exclude-newer``, so a record's times and a round's cutoff compare
as text and parse with one format.
"""

from __future__ import annotations

import time

UTC_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def utc_now(now: float | None = None) -> str:
    return time.strftime(UTC_FORMAT, time.gmtime(time.time() if now is None else now))


__all__ = ["UTC_FORMAT", "utc_now"]
