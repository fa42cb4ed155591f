"""The one rule for a name the harness makes a folder of: a case id above all.

A case's work folder is ``<work>/round-N/<id>`` and its logs sit beside it in ``<id>.logs``, so an
id must be a single plain path component and must not end in ``.logs``. The case file's rules and
the workspace both ask this module, so ``check-cases`` refuses exactly what the round would.
"""

from __future__ import annotations

import re

COMPONENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
#: The suffix of a case's log folder, beside its work folder.
LOGS_SUFFIX = ".logs"
RULE = f"use letters, digits, '.', '_' and '-', starting with a letter or digit, not ending in '{LOGS_SUFFIX}'"


def is_safe_component(text: object) -> bool:
    """Whether ``text`` can name a case's folder without meeting a separator, a hidden name or the logs."""
    return isinstance(text, str) and COMPONENT.fullmatch(text) is not None and not text.endswith(LOGS_SUFFIX)


__all__ = ["COMPONENT", "LOGS_SUFFIX", "RULE", "is_safe_component"]
