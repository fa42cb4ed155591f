"""The case and record models against the upstream round-1 data, and the record's own rules."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from pytest_obelize_bench._util.safe_io import write_atomically
from pytest_obelize_bench.casefile.cases import (
    CaseFileError,
    key_symbols,
    load_case_file,
    load_fixtures,
)
from pytest_obelize_bench.grading.record import (
    Measurements,
    Record,
    RecordError,
    comparable,
    differences,
    parse_record,
    read_round,
)
from pytest_obelize_bench.grading.tiers import tier
from tests.helpers.project import PROJECT

#: Upstream's round-1 publication, byte for byte (tests/data/upstream/SOURCE.txt).
UPSTREAM = PROJECT / "tests" / "data" / "upstream"
#: The round-1 records, which must be upstream's bytes (checked below against upstream's digests).
ROUND_1 = PROJECT / "results" / "round-1"


def test_the_upstream_case_file_loads_unchanged() -> None:
    case_file = load_case_file(UPSTREAM / "cases.yaml")
    assert case_file.round == 1
    cases = [c for c in case_file.cases if not c.control]
    controls = [c for c in case_file.cases if c.control]
    assert len(cases) == 20 and len(controls) == 3
    assert {c.id for c in controls} == {
        "ParamveerSinghS__alex-ai-assistant",
        "GoogleCloudPlatform__Open_Data_QnA",
        "pfnet-research__japanese-lm-fin-harness",
    }
    assert all(c.split is None and c.from_version == "0.8.6" for c in controls)
    assert all(list(c.pattern_key) == key_symbols(c.ground_truth) for c in cases)


def test_our_case_file_loads_and_is_round_2() -> None:
    case_file = load_case_file(PROJECT / "cases" / "cases.yaml")
    assert case_file.round == 2
    moved = {move.case for move in case_file.split_moves}
    assert moved == {"kvcops__Virtual-Herbal-Garden", "LJX2017__A-Song-of-Ice-and-Fire"}
    assert all(case_file.by_id()[case].split == "dev" for case in moved)


def test_the_shipped_fixtures_load() -> None:
    fixtures = load_fixtures(PROJECT / "cases" / "fixtures")
    assert len(fixtures) >= 7
    assert all(f.origin == "fixture" and f.source and Path(f.source).is_dir() for f in fixtures)


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(CaseFileError) as caught:
        load_case_file(tmp_path / "nope.yaml")
    assert len(caught.value.problems) == 1 and "nope.yaml: missing" in caught.value.problems[0]


def test_upstream_records_load_and_their_tiers_recompute() -> None:
    records = read_round(ROUND_1)
    assert len(records) == 23
    for record in records.values():
        assert record.schema_version == 2
        assert tier(record.error, record.measurements) == record.tier


def test_round_1_records_in_results_are_the_upstream_bytes() -> None:
    digests = {}
    for line in (UPSTREAM / "results-round-1.sha256").read_text(encoding="utf-8").splitlines():
        digest, name = line.split("  ", 1)
        digests[name] = digest
    assert len(digests) == 23
    ours = {path.name for path in ROUND_1.glob("*.json")} - {"publication.json"}
    assert ours == set(digests)
    for name, digest in digests.items():
        assert hashlib.sha256((ROUND_1 / name).read_bytes()).hexdigest() == digest, name


def record(**measurements: object) -> Record:
    return Record(
        case="a__b",
        origin="corpus",
        control=False,
        split="dev",
        measurements=Measurements.model_validate(measurements),
        tier="unsupported",
    )


def test_a_record_round_trips_with_sorted_keys_and_a_newline() -> None:
    text = record(detected=3, patch_applied=False).to_json()
    assert text.endswith("}\n")
    data = json.loads(text)
    assert list(data) == sorted(data)
    assert parse_record(text) == record(detected=3, patch_applied=False)


def test_unmeasured_is_null_not_zero() -> None:
    data = json.loads(record().to_json())["measurements"]
    assert data["detected"] is None and data["unmigrated"] is None and data["patch_applied"] is None
    assert data["tests_baseline"] == {"status": "not_run", "passed": None, "failed": None, "skipped": None}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "not JSON"),
        ("[]", "expected a JSON object"),
        ('{"schema_version": 9}', "schema_version 9 is not one of (2, 3)"),
        ('{"schema_version": 3, "case": "x"}', "Field required"),
    ],
)
def test_a_bad_record_names_the_file(text: str, message: str) -> None:
    with pytest.raises(RecordError) as caught:
        parse_record(text, "results/round-2/x.json")
    assert str(caught.value).startswith("results/round-2/x.json: ") and message in str(caught.value)


def test_atomic_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "round-2" / "a.json"
    write_atomically(target, "one\n")
    write_atomically(target, "two\n")
    assert target.read_text() == "two\n"
    assert [p.name for p in target.parent.iterdir()] == ["a.json"]


def test_comparable_leaves_out_runtime_and_differences_name_fields() -> None:
    a = comparable(record(detected=3, runtime_seconds=1.0))
    b = comparable(record(detected=4, runtime_seconds=9.0))
    assert "runtime_seconds" not in a["measurements"]
    assert differences(a, b) == ["measurements.detected: got 3, expected 4"]
    assert differences(a, comparable(record(detected=3, runtime_seconds=5.0))) == []
