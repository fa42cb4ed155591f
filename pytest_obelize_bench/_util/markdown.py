"""Markdown tables for the results document: one way to write a cell and a table for every block."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

#: How a value that was not measured reads in any table.
NULL = "--"


def cell(value: object) -> str:
    """A table cell: null is ``--``; pipes and line breaks cannot break the table."""
    if value is None:
        return NULL
    return " ".join(str(value).replace("|", "\\|").split())


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
