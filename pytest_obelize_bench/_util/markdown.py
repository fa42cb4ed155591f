"""Markdown tables for the results document: one way to write a cell and a table for every block."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

#: How a value that was not measured reads in any table.
NULL = "--"
#: What a page or the results document must never take from text a repository or a tool wrote:
#: a tag or an entity, a link, a code span, a table's pipe, an escape. Each becomes a numeric
#: reference, in one pass, so no reference is read twice.
_NEUTRAL = str.maketrans({char: f"&#{ord(char)};" for char in "&<>\"'`[]|\\"})
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff]")


def cell(value: object) -> str:
    """A table cell: null is ``--``; pipes and line breaks cannot break the table."""
    if value is None:
        return NULL
    return " ".join(str(value).replace("|", "\\|").split())


def plain(value: object, limit: int = 300) -> str:
    """Untrusted text (an error's detail, a file name) as one line of inert Markdown: no tag,
    link, code span or pipe survives, control characters read U+FFFD, and it is cut at ``limit``."""
    line = _CONTROL.sub("\ufffd", " ".join(str(value).split()))
    if len(line) > limit:
        line = line[:limit] + " [cut]"
    return line.translate(_NEUTRAL)


def table(
    header: Sequence[str],
    align: Sequence[str],
    rows: Iterable[Sequence[object]],
    render: Callable[[object], str] = cell,
) -> list[str]:
    """A header, its alignment row and one line per row, each value through ``render``."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines.extend("| " + " | ".join(render(value) for value in row) + " |" for row in rows)
    return lines
