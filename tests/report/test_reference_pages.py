"""The generated reference blocks: the record schema and the case file's rules, rendered from the code."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel

from pytest_obelize_bench.casefile.rules import RULES
from pytest_obelize_bench.grading.record import TIERS, Measurements, Provenance, Record
from pytest_obelize_bench.report.reference_pages import (
    begin_marker,
    case_file_rules_block,
    end_marker,
    prose,
    record_schema_block,
    replace_block,
    type_text,
)


class _Inner(BaseModel):
    x: int


def test_type_text_reads_as_json_types() -> None:
    assert type_text(int | None) == "integer or null"
    assert type_text(Literal["a", "b"]) == 'one of "a", "b"'
    assert type_text(list[_Inner]) == "list of [_Inner](#_inner)"
    assert type_text(bool) == "boolean"


def test_every_field_of_every_record_model_has_a_row_with_its_description() -> None:
    block = record_schema_block()
    for model in (Record, Measurements, Provenance):
        assert f"### {model.__name__}\n" in block
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} has no docstring to document it"
            assert f"| `{name}` |" in block
    assert " | ".join(f'"{tier}"' for tier in TIERS).replace(" | ", ", ") in block


def test_the_rules_block_lists_every_rule_in_check_cases_order() -> None:
    block = case_file_rules_block()
    positions = [block.index(f"| `{rule}` |") for rule in RULES]
    assert positions == sorted(positions)
    assert f"these {len(RULES)} rules" in block


def test_prose_keeps_angle_brackets_and_stars_literal() -> None:
    assert prose("<work>/a*b & c") == "&lt;work&gt;/a\\*b &amp; c"


def test_replace_block_rewrites_only_between_its_markers() -> None:
    page = f"intro\n{begin_marker('x')}\nold\n{end_marker('x')}\noutro\n"
    assert replace_block(page, "x", "new\n") == f"intro\n{begin_marker('x')}\nnew\n{end_marker('x')}\noutro\n"


@pytest.mark.parametrize("copies", [0, 2])
def test_a_page_without_exactly_one_block_is_refused_naming_it(copies: int) -> None:
    page = f"{begin_marker('x')}\n{end_marker('x')}\n" * copies
    with pytest.raises(ValueError, match=rf"docs/p.md: .*'x'.*found {copies}"):
        replace_block(page, "x", "new", source="docs/p.md")
