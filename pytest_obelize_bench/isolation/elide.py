"""Replace the harness's own absolute paths by labels, because results are public.

A record may name ``<case>``, ``<logs>``, ``<work>``, ``<repo>`` or ``<harness-python>``, never the
machine's real paths.  A path can reach text in several spellings: as the harness wrote it, made
absolute, or resolved through symlinks (a venv's ``sys.executable`` prints the resolved form; on
macOS ``/var/...`` resolves to ``/private/var/...``).  Every spelling is replaced, and the longest
first, in one pass: replacing ``/var/x`` before ``/private/var/x`` is what left ``/private<case>``
in every record the upstream harness published.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

LABELS: tuple[str, ...] = (
    "<case>",
    "<logs>",
    "<case-tmp>",
    "<work>",
    "<repo>",
    "<harness-python>",
    "<harness-uv>",
    "<uv-cache>",
    "<harness-home>",
)


def spellings(path: os.PathLike[str] | str) -> list[str]:
    """The spellings of ``path``: as given, absolute, and resolved; duplicates and "/" dropped."""
    given = os.fspath(path)
    found: list[str] = []
    for spelling in (given, os.path.abspath(given), str(Path(given).resolve())):
        text = spelling.rstrip(os.sep) if len(spelling) > 1 else spelling
        if len(text) > 1 and text not in found:
            found.append(text)
    return found


class Elider:
    """Replaces every spelling of each labelled path, longest spelling first, by substring.

    Built from ``(label, path)`` pairs.  When two labels share a spelling, the pair given first
    wins.  The root directory is never a spelling (it would replace every slash).
    """

    def __init__(self, pairs: Iterable[tuple[str, os.PathLike[str] | str]]) -> None:
        table: dict[str, str] = {}
        for label, path in pairs:
            if label not in LABELS:
                raise ValueError(f"unknown path label {label!r}; expected one of {LABELS}")
            for text in spellings(path):
                table.setdefault(text, label)
        self.replacements: tuple[tuple[str, str], ...] = tuple(sorted(table.items(), key=lambda item: -len(item[0])))
        self._pattern = (
            re.compile("|".join(re.escape(text) for text, _ in self.replacements)) if self.replacements else None
        )
        self._table = table

    def text(self, s: str) -> str:
        """``s`` with every known spelling replaced by its label."""
        if self._pattern is None:
            return s
        return self._pattern.sub(lambda match: self._table[match.group(0)], s)

    def argv(self, seq: Sequence[str | os.PathLike[str]]) -> tuple[str, ...]:
        """Each argument elided, as a tuple."""
        return tuple(self.text(os.fspath(arg)) for arg in seq)


#: An environment value longer than this is treated as a possible secret in public text.
SECRET_MIN_CHARS = 9
#: How long a public error detail may be.
DETAIL_CHARS = 200
REDACTED = "<redacted>"


def redact(text: str, environ: Iterable[tuple[str, str]], *, min_chars: int = SECRET_MIN_CHARS) -> str:
    """``text`` with the value of every harness environment variable of ``min_chars`` or more hidden.

    A failing install can echo a token or a machine path it was given; the value is what leaks,
    whatever the variable is called, so every long value is replaced, the longest first.
    """
    values = sorted({value for _, value in environ if len(value) >= min_chars}, key=len, reverse=True)
    if not values:
        return text
    pattern = re.compile("|".join(re.escape(value) for value in values))
    return pattern.sub(REDACTED, text)


def public_detail(detail: str, elider: Elider | None, environ: Iterable[tuple[str, str]]) -> str:
    """An error detail fit for a published record: harness paths labelled, secrets hidden, bounded."""
    text = elider.text(detail) if elider is not None else detail
    text = redact(text, environ)
    text = " ".join(text.split())
    return text if len(text) <= DETAIL_CHARS else text[: DETAIL_CHARS - 3] + "..."
