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


#: How much of a bad value a problem line quotes.
QUOTE_CHARS = 80


def quoted(value: object) -> str:
    """``repr(value)`` cut to about 80 characters: a problem line stays one readable line."""
    text = repr(value)
    return text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 3] + "..."


def message_of(error: ErrorDetails) -> str:
    """What is wrong, in the words every reader of a reviewed file sees: a missing or unknown field
    says so plainly, and a wrong value is quoted so the reader can find it."""
    kind = error["type"]
    if kind == "missing":
        return "a value is required"
    if kind == "extra_forbidden":
        return "is not a known field"
    message = error["msg"].removeprefix("Value error, ")
    if "input" in error and not kind.startswith("value_error") and not isinstance(error["input"], dict | list):
        message = f"{message} (got {quoted(error['input'])})"
    return message


def describe(error: ErrorDetails, empty: str = "(row)") -> tuple[str, str]:
    """``(field, message)`` of one pydantic error, for a caller that prefixes the row it concerns."""
    return field_path(tuple(error["loc"]), empty), message_of(error)


def problem_text(error: ErrorDetails, empty: str = "top level") -> str:
    """``<field>: <message>`` for one pydantic error: the one spelling of a validation problem."""
    return ": ".join(describe(error, empty))


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
    return f"{where}: {field_path(loc)}: {message_of(problem)}{more}"


__all__ = ["QUOTE_CHARS", "describe", "field_path", "message_of", "problem_text", "quoted", "row_problem"]
