"""The protocol's four negative controls: from round 2 on, one of each shape (check-cases)."""

from __future__ import annotations

from pytest_obelize_bench.casefile.rules import CONTROL_SET_FROM_ROUND, control_set_problems
from pytest_obelize_bench.casefile.schema import CONTROL_SHAPES, Case, Retired


def control(shape: str, *, retired: bool = False) -> Case:
    return Case(
        id=f"o__{shape}",
        origin="corpus",
        control=True,
        control_shape=shape,
        provider="gemini",
        change="google-generativeai-to-google-genai",
        retired=Retired(reason="gone", round=2) if retired else None,
    )


def test_every_shape_present_is_no_problem() -> None:
    assert list(control_set_problems(2, [control(shape) for shape in CONTROL_SHAPES])) == []


def test_the_documentation_only_control_is_required_from_round_2() -> None:
    three = [control(shape) for shape in CONTROL_SHAPES if shape != "docs-mention"]
    assert list(control_set_problems(CONTROL_SET_FROM_ROUND, three)) == [
        (
            "control_set",
            "controls: expected one that names the SDK only in documentation (control: docs-mention), "
            "found none that is not retired",
        )
    ]
    # round 1 was published with these three and is not held to it
    assert list(control_set_problems(1, three)) == []


def test_a_retired_control_or_a_case_is_not_a_control_of_the_set() -> None:
    cases = [control(shape) for shape in CONTROL_SHAPES if shape != "vertex-preview"]
    cases.append(control("vertex-preview", retired=True))
    assert [rule for rule, _ in control_set_problems(2, cases)] == ["control_set"]
    assert len(list(control_set_problems(2, []))) == len(CONTROL_SHAPES)
