"""Replace absolute paths by labels, because results are public.

A record may name ``<case>``, ``<logs>``, ``<work>``, ``<repo>`` or ``<harness-python>``, never the
machine's real paths.  A path can reach text in several spellings: as the harness wrote it, made
absolute, or resolved through symlinks (a venv's ``sys.executable`` prints the resolved form; on
macOS ``/var/...`` resolves to ``/private/var/...``).  Every spelling is replaced, and the longest
first, in one pass: replacing ``/var/x`` before ``/private/var/x`` is what left ``/private<case>``
in every record the upstream harness published.  A spelling is replaced only where a path can
begin and end: ``/root`` is not the start of ``/rootfs``, nor the end of ``/mnt/root``.

What a step printed can name any other path of the machine as well; ``label_other_paths`` shows
each one left as ``<path>``.
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
    "<home>",
)

#: What an absolute path that no harness label names reads as in public text.
OTHER_PATH = "<path>"

#: Where an absolute path can begin: at the start of a text, after a space, a quote, ``=``, ``:``, a
#: comma or an opening bracket, after a short option (``-I/usr/include``) and after ``file://``;
#: never inside a name or a relative path (``src/app``, ``./x``, ``~/x``), nor right after a label
#: (``<case>/x``), nor inside a URL's ``//``.
_PATH_START = r"(?:(?<![\w.~/<>)\]}-])|(?<=\s-[A-Za-z])|(?<=^-[A-Za-z])|(?<=file://))"
#: Where a spelling ends: not before more of a name (``/root`` is not ``/rootfs`` nor ``/root.bak``;
#: a full stop that ends a sentence is not part of the path).
_PATH_END = r"(?![\w.-]*[\w-])"
#: An absolute path left in a text: from a path's start up to a space, a quote, a bracket, ``<``,
#: ``>``, ``|``, a comma, ``;`` or ``:`` (``/x/y.py:12:`` keeps its line number).
_ANY_PATH = re.compile(_PATH_START + r"/[\w.~@+%$-][^\s'\"`,;:()\[\]{}<>|]*")


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
        alternatives = "|".join(re.escape(text) for text, _ in self.replacements)
        self._pattern = re.compile(f"{_PATH_START}(?:{alternatives}){_PATH_END}") if self.replacements else None
        self._table = table

    def text(self, s: str) -> str:
        """``s`` with every known spelling replaced by its label."""
        if self._pattern is None:
            return s
        return self._pattern.sub(lambda match: self._table[match.group(0)], s)

    def argv(self, seq: Sequence[str | os.PathLike[str]]) -> tuple[str, ...]:
        """Each argument elided, as a tuple."""
        return tuple(self.text(os.fspath(arg)) for arg in seq)


def label_other_paths(text: str) -> str:
    """``text`` with every absolute path not already labelled shown as ``<path>``.

    Run after an ``Elider``: what it labelled (``<case>/src/app.py``) is kept, as is a relative
    path (``tests/test_app.py``) and a URL (``https://example.org/simple``); a full stop after a
    path stays, as the end of a sentence.
    """

    def replace(match: re.Match[str]) -> str:
        path = match.group(0)
        kept = path.rstrip(".")
        return OTHER_PATH + path[len(kept) :] if kept != "/" else path

    return _ANY_PATH.sub(replace, text)


#: An environment value longer than this is treated as a possible secret in public text.
SECRET_MIN_CHARS = 9
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
