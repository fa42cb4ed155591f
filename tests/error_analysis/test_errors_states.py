"""Row states and levers: small rounds worked out by hand, then round 1 as upstream published it."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pytest_obelize_bench.error_analysis.collected import (
    CollectedCase,
    CollectedRound,
    read_collected,
)
from pytest_obelize_bench.error_analysis.states import (
    RoundKeys,
    bails_of,
    case_states,
    levers,
    migrated,
    observed_causes,
    row_states,
    unexpected_findings,
)
from pytest_obelize_bench.grading.record import read_round
from tests.helpers.error_rounds import ROUND_1, round_1
from tests.helpers.project import PROJECT

ROUND_1_EARLIER = PROJECT / "tests" / "data" / "errors" / "round-1@36ccdf0.json"
RECORDS_1 = PROJECT / "results" / "round-1"
G = "google.generativeai"


def withheld(path: str, line: int, symbol: str, bail: str, caused_by: list[str] | None = None) -> dict[str, Any]:
    return {"path": path, "line": line, "symbol": symbol, "bail": bail, "caused_by": caused_by}


def finding(path: str, line: int, kind: str, symbol: str) -> dict[str, Any]:
    return {
        "path": path,
        "line": line,
        "kind": kind,
        "symbol": symbol,
        "scan_status": "eligible",
        "bail": None,
        "confidence_reason": "alias_resolved",
    }


def collected(**cases: dict[str, Any]) -> CollectedRound:
    return CollectedRound.model_validate_json(
        json.dumps(
            {
                "round": 3,
                "schema_version": 1,
                "obelize_version": ["0.8.0"],
                "pack_sha256": [],
                "cases": {
                    name: {"run_id": "r", "exit_code": 4, "applied": [], "findings": [], "withheld": [], **case}
                    for name, case in cases.items()
                },
            }
        )
    )


def keys(**rows: list[tuple[str, int, str]]) -> RoundKeys:
    return RoundKeys(rows=dict(rows), actionable={name: Counter() for name in rows})


# One repository, worked by hand:
#   a.py holds two bails (local_import on line 2, multiple_configure_calls on line 3) and one
#        row held only by F-1 (line 1, caused_by both);
#   b.py holds one bail (receiver_unresolved, line 4) and one F-1 row (line 1);
#   c.py migrated (line 1 applied);
#   requirements.txt:1 held by F-2;
#   d.py:9 was never reported (a miss).
REPO = {
    "applied": [["c.py", 1], ["requirements.txt", 1]],
    "withheld": [
        withheld("a.py", 1, G, "file_not_fully_migrated", ["local_import", "multiple_configure_calls"]),
        withheld("a.py", 2, G, "local_import"),
        withheld("a.py", 3, f"{G}.configure", "multiple_configure_calls"),
        withheld("b.py", 1, G, "file_not_fully_migrated", ["receiver_unresolved"]),
        withheld("b.py", 4, f"{G}.GenerativeModel.generate_content", "receiver_unresolved"),
        withheld("requirements.txt", 1, "google-generativeai", "repo_not_fully_migrated"),
    ],
}
REPO_KEY = [
    ("a.py", 1, G),
    ("a.py", 2, G),
    ("a.py", 3, f"{G}.configure"),
    ("b.py", 1, G),
    ("b.py", 4, f"{G}.GenerativeModel.generate_content"),
    ("c.py", 1, G),
    ("requirements.txt", 1, "google-generativeai"),
    ("d.py", 9, f"{G}.configure"),
]


def test_each_key_row_gets_its_state_and_its_cause() -> None:
    round_ = collected(repo=REPO)
    states = {
        (s.path, s.line): s
        for s in row_states(keys(repo=REPO_KEY), round_, {("repo", "d.py", 9, f"{G}.configure"): "star_import_binding"})
    }
    assert {k: s.state for k, s in states.items()} == {
        ("a.py", 1): "derived",
        ("a.py", 2): "withheld",
        ("a.py", 3): "withheld",
        ("b.py", 1): "derived",
        ("b.py", 4): "withheld",
        ("c.py", 1): "migrated",
        # an applied google-genai add on the pin's line does not migrate the withheld pin
        ("requirements.txt", 1): "derived",
        ("d.py", 9): "missed",
    }
    assert states[("a.py", 1)].attributed == ("local_import", "multiple_configure_calls")
    assert states[("requirements.txt", 1)].attributed == (
        "local_import",
        "multiple_configure_calls",
        "receiver_unresolved",
    )
    assert states[("d.py", 9)].cause == "star_import_binding"
    assert states[("b.py", 4)].cause == "receiver_unresolved"


def test_nothing_lifted_reproduces_the_round_and_everything_lifted_misses_only_the_missed() -> None:
    round_, k = collected(repo=REPO), keys(repo=REPO_KEY)
    assert migrated(k, round_) == 1
    assert migrated(k, round_, bails_of(round_)) == len(REPO_KEY) - 1


def test_a_lever_is_zero_while_another_bail_holds_the_same_file() -> None:
    round_, k = collected(repo=REPO), keys(repo=REPO_KEY)
    found = levers(
        k, round_, ["local_import", "multiple_configure_calls", "receiver_unresolved", "file_not_fully_migrated"]
    )
    assert found == {
        "local_import": 0,  # a.py still held by multiple_configure_calls
        "multiple_configure_calls": 0,  # a.py still held by local_import
        "receiver_unresolved": 2,  # b.py's two rows; the pin stays (a.py is not migrated)
        "file_not_fully_migrated": 0,  # atomicity is not a cause of its own
    }
    # levers do not add up: both of a.py's bails together free a.py's three rows
    assert migrated(k, round_, {"local_import", "multiple_configure_calls"}) - 1 == 3
    # the pin goes only once every file migrates (F-2)
    assert migrated(k, round_, {"local_import", "multiple_configure_calls", "receiver_unresolved"}) - 1 == 6


def test_a_file_held_by_atomicity_with_no_named_cause_stays_held_until_atomicity_is_lifted() -> None:
    round_ = collected(
        x={
            "withheld": [
                withheld("e.py", 1, G, "file_not_fully_migrated", None),
                withheld("pyproject.toml", 3, "google-generativeai", "repo_not_fully_migrated"),
            ]
        }
    )
    k = keys(x=[("e.py", 1, G), ("pyproject.toml", 3, "google-generativeai")])
    assert migrated(k, round_) == 0
    assert migrated(k, round_, {"file_not_fully_migrated"}) == 2
    assert migrated(k, round_, bails_of(round_)) == 2


def test_a_bail_of_its_own_wins_over_atomicity_at_the_same_position() -> None:
    case = CollectedCase.model_validate_json(
        json.dumps(
            {
                "run_id": "r",
                "exit_code": 4,
                "applied": [],
                "findings": [],
                "withheld": [
                    withheld("a.py", 2, G, "file_not_fully_migrated", ["local_import"]),
                    withheld("a.py", 2, G, "local_import"),
                ],
            }
        )
    )
    [state] = case_states("x", [("a.py", 2, G)], case, {})
    assert (state.state, state.cause) == ("withheld", "local_import")


def test_unexpected_findings_are_the_multiset_excess_over_the_key_and_controls_count_whole() -> None:
    round_ = collected(
        case={
            "findings": [
                finding("a.py", 1, "import", G),
                finding("a.py", 1, "import", G),
                finding("a.py", 5, "text_mention", G),
            ]
        },
        control={"findings": [finding("z.py", 2, "call", f"{G}.configure")]},
    )
    k = RoundKeys(
        rows={"case": [("a.py", 1, G)]},
        actionable={"case": Counter({("a.py", 1, "import", G): 1}), "control": Counter()},
    )
    assert [u.key for u in unexpected_findings(k, round_)] == ["case:a.py:1", "control:z.py:2"]


def test_observed_causes_name_classes_rows_and_attributions() -> None:
    round_, k = collected(repo=REPO), keys(repo=REPO_KEY)
    states = row_states(k, round_, {("repo", "d.py", 9, f"{G}.configure"): "star_import_binding"})
    seen = observed_causes(states, [], {})
    assert {c: (sorted(o.classes), o.rows, o.attributed) for c, o in seen.items()} == {
        "file_not_fully_migrated": (["derived"], 2, 0),
        "repo_not_fully_migrated": (["derived"], 1, 0),
        "local_import": (["withheld"], 1, 2),
        "multiple_configure_calls": (["withheld"], 1, 2),
        "receiver_unresolved": (["withheld"], 1, 2),
        "star_import_binding": (["missed"], 1, 0),
    }


# -- round 1, from the project's own copy of upstream's data ---------------------------------------


def test_round_1_states_match_what_upstream_published() -> None:
    analysis = round_1()
    assert len(analysis.states) == 277
    assert analysis.counts == {"migrated": 25, "withheld": 129, "derived": 98, "missed": 25}
    assert analysis.migrated_none == 25
    assert analysis.migrated_all == 252 == 277 - 25
    assert analysis.uncollected == [] and analysis.unkeyed == []


def test_round_1_levers_and_unexpected_findings() -> None:
    analysis = round_1()
    assert analysis.levers["local_import"] == 26
    assert analysis.levers["generation_config_not_static"] == 26
    assert max(analysis.levers.values()) == 26
    assert analysis.levers["multiple_configure_calls"] == 0
    assert analysis.causes["multiple_configure_calls"].rows == 19
    assert [u.key for u in analysis.unexpected] == [
        "ImprintLab__Medical-Graph-RAG:camel/utils/token_counting.py:422",
        "LJX2017__A-Song-of-Ice-and-Fire:basic_game.py:27",
        "LJX2017__A-Song-of-Ice-and-Fire:reconstruct_timeline.py:10",
    ]


def published_records() -> dict[str, dict[str, Any]]:
    return {case: record.model_dump(mode="json") for case, record in read_round(RECORDS_1).items()}


def test_round_1_reconciles_with_its_published_records() -> None:
    """Per case, the rows not migrated are the record's ``unmigrated``; the unexpected findings
    are the records' ``false_positive`` (the protocol's definitions, two ways)."""
    analysis = round_1()
    records = published_records()
    per_case = analysis.case_counts()
    for case_id, counts in per_case.items():
        assert sum(counts.values()) - counts["migrated"] == records[case_id]["measurements"]["unmigrated"], case_id
    assert len(analysis.unexpected) == sum(r["measurements"]["false_positive"] or 0 for r in records.values()) == 3


def test_the_earlier_version_of_round_1_gives_its_own_figures() -> None:
    """36ccdf0's file came from an earlier obelize (0.1.0.dev0): 34 migrated, 118 withheld, 100 derived."""
    analysis = round_1(ROUND_1_EARLIER)
    assert analysis.counts == {"migrated": 34, "withheld": 118, "derived": 100, "missed": 25}
    assert (analysis.migrated_none, analysis.migrated_all) == (34, 252)
    assert analysis.levers["local_import"] == analysis.levers["generation_config_not_static"] == 26
    assert analysis.levers["multiple_configure_calls"] == 0
    # The published records are the later run's: exactly two cases disagree with this version.
    records = published_records()
    differ = sorted(
        case
        for case, counts in analysis.case_counts().items()
        if sum(counts.values()) - counts["migrated"] != records[case]["measurements"]["unmigrated"]
    )
    assert differ == ["Satheesh2908__AI-Assistant-for-Satheesh", "navamai__navamai"]


@pytest.mark.parametrize("path", [ROUND_1, ROUND_1_EARLIER])
def test_each_version_has_all_23_round_1_cases(path: Path) -> None:
    assert len(read_collected(path).cases) == 23
