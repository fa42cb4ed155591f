"""cases/cases.yaml, the round-2 case file.

Facts must be the upstream round-1 facts, field by field, so a typo in a SHA or a line number
fails with the case and the field named. Prose must be our own words. The split must follow the
rule except where a move is recorded.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_obelize_bench.casefile.cases import load_case_file
from pytest_obelize_bench.casefile.split import SplitMember, compute_split, split_differences
from tests.helpers.project import PROJECT

OUR_CASES = PROJECT / "cases" / "cases.yaml"
#: Upstream's round-1 case file, byte for byte (tests/data/upstream/SOURCE.txt).
UPSTREAM_CASES = PROJECT / "tests" / "data" / "upstream" / "cases.yaml"

MOVED = {"kvcops__Virtual-Herbal-Garden", "LJX2017__A-Song-of-Ice-and-Fire"}

CASE_FACTS = (
    "id",
    "provider",
    "change",
    "from_version",
    "to_version",
    "full_name",
    "owner",
    "repo",
    "sha",
    "license",
    "split",
    "pattern_key",
    "python",
    "install",
    "test_cmd",
    "tests_require_network",
    "reviewer",
    "reviewed_at",
)
GROUND_TRUTH_FACTS = ("files_read", "tests_cover_change")
CALL_SITE_FACTS = ("path", "line", "kind", "symbol", "label")
MANIFEST_FACTS = ("path", "line", "symbol", "label")
FORBIDDEN_FACTS = ("path", "line")
CONTROL_FACTS = (
    "control",
    "shape",
    "full_name",
    "owner",
    "repo",
    "sha",
    "license",
    "witness",
    "query",
    "must_produce",
    "reviewer",
    "reviewed_at",
)
TOP_LEVEL_FACTS = ("reviewer", "reviewed_at", "from_version", "to_version")
# Keys a row may hold besides its facts; anything else is a key the upstream schema lacks.
ROW_PROSE = {"why"}
# The run of words two prose texts may not share.
SHARED_RUN = 8


def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data


OURS = _load(OUR_CASES)
OUR_CASE_IDS = [case["id"] for case in OURS["cases"]]
OUR_CONTROL_NAMES = [control["full_name"] for control in OURS["controls"]]
#: Controls round 2 adds to upstream's three: the protocol's documentation-only control.
ADDED_CONTROLS = {"hypothesisfactory/how": "docs-mention"}
CARRIED_CONTROL_NAMES = [name for name in OUR_CONTROL_NAMES if name not in ADDED_CONTROLS]


@pytest.fixture(scope="module")
def upstream() -> dict[str, Any]:
    return _load(UPSTREAM_CASES)


def _ours_case(case_id: str) -> dict[str, Any]:
    return next(case for case in OURS["cases"] if case["id"] == case_id)


def _same(a: Any, b: Any) -> bool:
    # Strict: YAML turns 1, true and "1" into different things, and so must we.
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


def _compare(where: str, ours: dict[str, Any], theirs: dict[str, Any], fields: tuple[str, ...]) -> Iterator[str]:
    for field in fields:
        if field not in theirs:
            continue
        if field not in ours:
            yield f"{where}.{field}: missing (upstream {theirs[field]!r})"
        elif not _same(ours[field], theirs[field]):
            yield f"{where}.{field}: ours {ours[field]!r} != upstream {theirs[field]!r}"


def _compare_rows(
    where: str, ours: list[dict[str, Any]], theirs: list[dict[str, Any]], fields: tuple[str, ...]
) -> Iterator[str]:
    if len(ours) != len(theirs):
        yield f"{where}: {len(ours)} rows, upstream has {len(theirs)}"
        return
    for index, (row, their_row) in enumerate(zip(ours, theirs, strict=True)):
        place = f"{where}[{index}]"
        yield from _compare(place, row, their_row, fields)
        extra = set(row) - set(their_row) - ROW_PROSE
        if extra:
            yield f"{place}: keys upstream does not have: {sorted(extra)}"
        if "why" in their_row and not row.get("why"):
            yield f"{place}: upstream row has a why, ours has none"


# --- (1) facts -------------------------------------------------------------------------------


def test_same_cases_and_controls_as_upstream(upstream: dict[str, Any]) -> None:
    assert [case["id"] for case in upstream["cases"]] == OUR_CASE_IDS
    assert [control["full_name"] for control in upstream["controls"]] == CARRIED_CONTROL_NAMES
    assert len(set(OUR_CASE_IDS)) == len(OUR_CASE_IDS)


def test_round_2_adds_the_documentation_only_control(upstream: dict[str, Any]) -> None:
    added = [c for c in OURS["controls"] if c["full_name"] in ADDED_CONTROLS]
    assert [(c["full_name"], c["control"]) for c in added] == list(ADDED_CONTROLS.items())
    assert "docs-mention" not in {c["control"] for c in upstream["controls"]}
    for control in added:
        assert control["license"] in {"MIT", "BSD-2-Clause", "BSD-3-Clause", "Apache-2.0", "ISC"}
        assert control["reviewed_at"] > upstream["reviewed_at"]
        assert set(control) == set(upstream["controls"][0]), "the same fields as upstream's controls"


def test_top_level_facts(upstream: dict[str, Any]) -> None:
    problems = list(_compare("top level", OURS, upstream, TOP_LEVEL_FACTS))
    assert not problems, "\n".join(problems)
    # Pointers at files this project does not have are dropped.
    assert not {"corpus", "draws", "scans"} & set(OURS)


@pytest.mark.parametrize("case_id", OUR_CASE_IDS)
def test_case_facts_match_upstream(case_id: str, upstream: dict[str, Any]) -> None:
    theirs = next((c for c in upstream["cases"] if c["id"] == case_id), None)
    assert theirs is not None, f"{case_id}: not an upstream case"
    ours = _ours_case(case_id)
    fields = tuple(f for f in CASE_FACTS if not (f == "split" and case_id in MOVED))
    problems = list(_compare(case_id, ours, theirs, fields))
    gt, their_gt = ours["ground_truth"], theirs["ground_truth"]
    where = f"{case_id}: ground_truth"
    problems += _compare(where, gt, their_gt, GROUND_TRUTH_FACTS)
    problems += _compare_rows(f"{where}.call_sites", gt["call_sites"], their_gt["call_sites"], CALL_SITE_FACTS)
    problems += _compare_rows(f"{where}.manifests", gt["manifests"], their_gt["manifests"], MANIFEST_FACTS)
    problems += _compare_rows(
        f"{where}.must_not_report",
        gt["must_not_report"],
        their_gt["must_not_report"],
        FORBIDDEN_FACTS,
    )
    assert set(gt) == set(their_gt), f"{where}: keys differ: {set(gt) ^ set(their_gt)}"
    added = set(ours) - set(theirs)
    assert added == {"has_test_files"}, f"{case_id}: keys upstream does not have: {added}"
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("full_name", CARRIED_CONTROL_NAMES)
def test_control_facts_match_upstream(full_name: str, upstream: dict[str, Any]) -> None:
    theirs = next((c for c in upstream["controls"] if c["full_name"] == full_name), None)
    assert theirs is not None, f"control {full_name}: not an upstream control"
    ours = next(c for c in OURS["controls"] if c["full_name"] == full_name)
    problems = list(_compare(f"control {full_name}", ours, theirs, CONTROL_FACTS))
    assert set(ours) == set(theirs), f"control {full_name}: keys differ"
    assert not problems, "\n".join(problems)


# --- (2) prose is ours -------------------------------------------------------------------------


def _prose_pairs(ours_case: dict[str, Any], their_case: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
    """(where, our text, upstream text) for every prose field the two cases share."""
    gt, their_gt = ours_case["ground_truth"], their_case["ground_truth"]
    yield "notes", ours_case["notes"], their_case["notes"]
    yield "ground_truth.what_it_is", gt["what_it_is"], their_gt["what_it_is"]
    yield (
        "ground_truth.tests_cover_change_why",
        gt["tests_cover_change_why"],
        their_gt["tests_cover_change_why"],
    )
    for table in ("call_sites", "manifests", "must_not_report"):
        for index, (row, their_row) in enumerate(zip(gt[table], their_gt[table], strict=True)):
            if "why" in their_row:
                yield f"ground_truth.{table}[{index}].why", row.get("why", ""), their_row["why"]


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _shared_run(ours: str, theirs: str, size: int = SHARED_RUN) -> str | None:
    mine, their = _words(ours), _words(theirs)
    runs = {tuple(their[i : i + size]) for i in range(len(their) - size + 1)}
    for i in range(len(mine) - size + 1):
        if tuple(mine[i : i + size]) in runs:
            return " ".join(mine[i : i + size])
    return None


def test_shared_run_detector() -> None:
    assert _shared_run("a b c d e f g h", "x a b c d e f g h y") == "a b c d e f g h"
    assert _shared_run("a b c d e f g", "a b c d e f g") is None
    assert _shared_run("A `b` c d, e f g h!", "a b c d e f g h") == "a b c d e f g h"


@pytest.mark.parametrize("case_id", OUR_CASE_IDS)
def test_case_prose_is_rewritten(case_id: str, upstream: dict[str, Any]) -> None:
    theirs = next(c for c in upstream["cases"] if c["id"] == case_id)
    problems = []
    for where, mine, their in _prose_pairs(_ours_case(case_id), theirs):
        if _words(mine) == _words(their):
            problems.append(f"{case_id}: {where} repeats the upstream text")
            continue
        run = _shared_run(mine, their)
        if run:
            problems.append(f"{case_id}: {where} shares {SHARED_RUN} words with upstream: {run!r}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("full_name", CARRIED_CONTROL_NAMES)
def test_control_notes_are_rewritten(full_name: str, upstream: dict[str, Any]) -> None:
    theirs = next(c for c in upstream["controls"] if c["full_name"] == full_name)["notes"]
    mine = next(c for c in OURS["controls"] if c["full_name"] == full_name)["notes"]
    assert _words(mine) != _words(theirs), f"control {full_name}: notes repeat upstream"
    run = _shared_run(mine, theirs)
    assert run is None, f"control {full_name}: notes share words with upstream: {run!r}"


def _all_prose() -> Iterator[tuple[str, str]]:
    for case in OURS["cases"]:
        gt = case["ground_truth"]
        yield f"{case['id']}: notes", case["notes"]
        yield f"{case['id']}: what_it_is", gt["what_it_is"]
        yield f"{case['id']}: tests_cover_change_why", gt["tests_cover_change_why"]
        for table in ("call_sites", "manifests", "must_not_report"):
            for index, row in enumerate(gt[table]):
                if "why" in row:
                    yield f"{case['id']}: {table}[{index}].why", row["why"]
    for control in OURS["controls"]:
        yield f"control {control['full_name']}: notes", control["notes"]
    for move in OURS["split_moves"]:
        yield f"split move {move['case']}: reason", move["reason"]


def test_prose_is_plain_text() -> None:
    # Short plain sentences: no markdown emphasis, code spans or links.
    problems = [
        f"{where}: {text!r}"
        for where, text in _all_prose()
        if not isinstance(text, str) or not text.strip() or re.search(r"`|\*\*|\]\(", text)
    ]
    assert not problems, "\n".join(problems)


# --- (3) round 2 and the split -----------------------------------------------------------------


def test_round_two_with_the_two_moves_recorded() -> None:
    assert OURS["round"] == 2
    moves = OURS["split_moves"]
    assert sorted(move["case"] for move in moves) == sorted(MOVED)
    for move in moves:
        assert set(move) == {"case", "from_split", "to_split", "round", "reason"}, move
        assert (move["from_split"], move["to_split"], move["round"]) == ("holdout", "dev", 2)
        assert isinstance(move["reason"], str) and move["reason"].strip(), move
        assert _ours_case(move["case"])["split"] == "dev"


def test_moves_start_from_the_upstream_side(upstream: dict[str, Any]) -> None:
    their_split = {case["id"]: case["split"] for case in upstream["cases"]}
    for move in OURS["split_moves"]:
        assert their_split[move["case"]] == move["from_split"], move["case"]


def _members(doc: dict[str, Any]) -> list[SplitMember]:
    return [
        SplitMember(
            id=case["id"],
            full_name=case["full_name"],
            owner=case["owner"],
            testable=case["has_test_files"],
        )
        for case in doc["cases"]
    ]


def test_rule_differs_from_the_file_exactly_in_the_moved_cases() -> None:
    file_splits = {case["id"]: case["split"] for case in OURS["cases"]}
    moves = {move["case"]: move["reason"] for move in OURS["split_moves"]}
    differences = split_differences(_members(OURS), file_splits, moves)
    assert {d.id for d in differences} == MOVED
    for difference in differences:
        assert (difference.file_split, difference.rule_split) == ("dev", "holdout")
        assert difference.reason == moves[difference.id]


def test_holdout_is_otherwise_frozen() -> None:
    rule = compute_split(_members(OURS))
    held = sorted(case["id"] for case in OURS["cases"] if case["split"] == "holdout")
    assert held == sorted(i for i, side in rule.items() if side == "holdout" and i not in MOVED)


def test_stratum_is_carried_on_every_case() -> None:
    problems = [case["id"] for case in OURS["cases"] if not isinstance(case.get("has_test_files"), bool)]
    assert not problems, f"has_test_files missing or not a boolean: {problems}"
    assert sum(case["has_test_files"] for case in OURS["cases"]) == 8
    # A test command needs a test file to run.
    for case in OURS["cases"]:
        if case["test_cmd"]:
            assert case["has_test_files"], case["id"]


# --- (4) rows -----------------------------------------------------------------------------------


def test_every_manual_row_and_forbidden_position_has_a_why() -> None:
    problems = []
    for case in OURS["cases"]:
        gt = case["ground_truth"]
        for table in ("call_sites", "manifests"):
            for index, row in enumerate(gt[table]):
                if row["label"] == "manual" and not str(row.get("why") or "").strip():
                    problems.append(f"{case['id']}: {table}[{index}] is manual without a why")
        for index, row in enumerate(gt["must_not_report"]):
            if not str(row.get("why") or "").strip():
                problems.append(f"{case['id']}: must_not_report[{index}] has no why")
    assert not problems, "\n".join(problems)


# --- the project's own model ----------------------------------------------------------------------


def test_the_case_model_reads_the_file_as_written() -> None:
    case_file = load_case_file(OUR_CASES)
    assert case_file.round == OURS["round"]
    assert (case_file.from_version, case_file.to_version) == (OURS["from_version"], OURS["to_version"])
    cases = [case for case in case_file.cases if not case.control]
    controls = [case for case in case_file.cases if case.control]
    # the model orders cases by id; the file keeps its own order
    assert sorted(case.id for case in cases) == sorted(OUR_CASE_IDS)
    assert sorted(str(case.full_name) for case in controls) == sorted(OUR_CONTROL_NAMES)
    for case in cases:
        row = _ours_case(case.id)
        assert (case.full_name, case.sha, case.split) == (row["full_name"], row["sha"], row["split"]), case.id


def test_a_run_names_the_case_file_by_the_bytes_it_was_loaded_from(tmp_path: Path) -> None:
    from pytest_obelize_bench.records.manifest import case_file_ref

    path = tmp_path / "cases.yaml"
    path.write_bytes(OUR_CASES.read_bytes())
    loaded = load_case_file(path)
    assert loaded.sha256 == hashlib.sha256(OUR_CASES.read_bytes()).hexdigest()
    path.write_text(path.read_text(encoding="utf-8") + "# edited after the session read it\n", encoding="utf-8")
    # the reference is the loaded model's, not a second read that would name the edited file
    ref = case_file_ref(loaded, tmp_path / "results")
    assert ref.sha256 == loaded.sha256 and ref.resolve(tmp_path / "results") == path.resolve()
