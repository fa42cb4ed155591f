"""One line for a pydantic error in a document of rows: which row, which field, what is wrong.

Documents the harness reads back (scan and dry-run documents, records of rows) all name a bad
row by its repository and the field by its dotted path, so the line reads the same everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails


def field_path(loc: Sequence[int | str], empty: str = "(row)") -> str:
    """``a.b.0.c`` for a pydantic location; ``empty`` when the location is the row itself."""
    return ".".join(str(part) for part in loc) or empty


def problem_text(error: ErrorDetails, empty: str = "top level") -> str:
    """``<field>: <message>`` for one pydantic error: the one spelling of a validation problem."""
    return f"{field_path(tuple(error['loc']), empty)}: {error['msg'].removeprefix('Value error, ')}"


def row_problem(exc: ValidationError, data: Any, rows_key: str, *, count_more: bool = False) -> str:
    """``<repository>: <field>: <message>`` for the first error of a document whose rows are
    ``data[rows_key]``; a row is named by its ``full_name`` (or its index when it has none)."""
    problem = exc.errors()[0]
    loc = tuple(problem["loc"])
    where = "top level"
    if len(loc) >= 2 and loc[0] == rows_key and isinstance(loc[1], int):
        try:
            where = str(data[rows_key][loc[1]]["full_name"])
        except (KeyError, IndexError, TypeError):
            where = f"{rows_key}[{loc[1]}]"
        loc = loc[2:]
    more = f" (and {exc.error_count() - 1} more)" if count_more and exc.error_count() > 1 else ""
    return f"{where}: {field_path(loc)}: {problem['msg']}{more}"


__all__ = ["field_path", "problem_text", "row_problem"]
