"""One line per pydantic error in a document of rows."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from pytest_obelize_bench._util.validation import field_path, row_problem


class Row(BaseModel):
    model_config = ConfigDict(extra="forbid")
    full_name: str
    count: int


class Document(BaseModel):
    rows: list[Row]


def error_of(data: object) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        Document.model_validate(data)
    return caught.value


def test_a_bad_row_is_named_by_its_repository_and_field() -> None:
    data = {"rows": [{"full_name": "a/b", "count": 1}, {"full_name": "c/d", "count": "many"}]}
    line = row_problem(error_of(data), data, "rows")
    assert line.startswith("c/d: count: ") and "integer" in line


def test_a_row_without_a_name_is_named_by_its_index_and_more_errors_are_counted() -> None:
    data = {"rows": [{"count": "x"}]}
    exc = error_of(data)
    assert row_problem(exc, data, "rows").startswith("rows[0]: ")
    assert row_problem(exc, data, "rows", count_more=True).endswith("(and 1 more)")


def test_a_problem_outside_the_rows_is_at_the_top_level() -> None:
    data = {"rows": "not a list"}
    assert row_problem(error_of(data), data, "rows").startswith("top level: rows: ")
    assert field_path(()) == "(row)" and field_path(("a", 0, "b")) == "a.0.b"
