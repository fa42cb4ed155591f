"""The collected file and the reviewer file: upstream's files load unchanged, ours carry the facts
over, and hostile or malformed files get one line naming the file and the field."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from pytest_obelize_bench.casefile.reviews import ReviewFileError
from pytest_obelize_bench.error_analysis import collected as errors_collected
from pytest_obelize_bench.error_analysis import review as errors_review
from pytest_obelize_bench.error_analysis.collected import (
    CollectedFileError,
    applied_positions,
    collect_case,
    collected_round,
    graded_facts_of,
    read_collected,
)
from pytest_obelize_bench.error_analysis.review import read_review
from pytest_obelize_bench.grading.graded_facts import Artefacts, Finding, PlanEdit, Withheld
from tests.helpers.project import PROJECT

ROUND_1 = PROJECT / "results" / "errors" / "round-1.json"
ROUND_1_EARLIER = PROJECT / "tests" / "data" / "errors" / "round-1@36ccdf0.json"
REVIEW_1 = PROJECT / "cases" / "errors-round-1.yaml"
#: Upstream's own reviewer file, byte for byte (tests/data/upstream/SOURCE.txt).
UPSTREAM = PROJECT / "tests" / "data" / "upstream" / "errors"


@pytest.mark.parametrize("path", [ROUND_1, ROUND_1_EARLIER])
def test_both_upstream_versions_load_and_write_back_byte_for_byte(path: Path) -> None:
    collected = read_collected(path)
    assert collected.round == 1 and collected.schema_version == 1
    assert collected.to_json() == path.read_text(encoding="utf-8")


def test_the_two_versions_differ_where_upstream_said() -> None:
    later, earlier = read_collected(ROUND_1), read_collected(ROUND_1_EARLIER)
    assert later.obelize_version == ["0.1.0"] and earlier.obelize_version == ["0.1.0.dev0"]
    assert later.pack_sha256 != earlier.pack_sha256
    assert set(later.cases) == set(earlier.cases)


def write(tmp_path: Path, data: object, name: str = "round-1.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def round_1_data() -> dict[str, object]:
    data: dict[str, object] = json.loads(ROUND_1.read_text(encoding="utf-8"))
    return data


def test_an_unknown_field_is_refused_naming_it(tmp_path: Path) -> None:
    data = round_1_data()
    data["cases"]["000wan__ara-ai-bot"]["findings"][0]["evidence"] = "quoted source"  # type: ignore[index]
    with pytest.raises(CollectedFileError) as caught:
        read_collected(write(tmp_path, data))
    message = str(caught.value)
    assert "\n" not in message
    assert "cases.000wan__ara-ai-bot.findings.0.evidence" in message and str(tmp_path) in message


@pytest.mark.parametrize(
    "mutate,needle",
    [
        (lambda d: d.update(schema_version=2), "schema_version"),
        (lambda d: d["cases"]["000wan__ara-ai-bot"]["findings"][0].update(line="7"), "line"),
        (lambda d: d["cases"]["000wan__ara-ai-bot"]["findings"][0].update(line=0), "line"),
        (lambda d: d["cases"]["000wan__ara-ai-bot"].update(applied=[["a.py"]]), "applied"),
        (lambda d: d["cases"]["000wan__ara-ai-bot"]["withheld"][0].pop("caused_by"), "caused_by"),
        (lambda d: d.pop("round"), "round"),
    ],
)
def test_a_wrong_shape_is_one_line(tmp_path: Path, mutate: object, needle: str) -> None:
    data = round_1_data()
    mutate(data)  # type: ignore[operator]
    with pytest.raises(CollectedFileError, match=needle) as caught:
        read_collected(write(tmp_path, data))
    assert "\n" not in str(caught.value)


def test_hostile_collected_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(CollectedFileError, match="not JSON"):
        read_collected(write(tmp_path, "{not json"))
    bad = tmp_path / "latin.json"
    bad.write_bytes(b'{"round": "\xff"}')
    with pytest.raises(CollectedFileError, match="not UTF-8"):
        read_collected(bad)
    with pytest.raises(CollectedFileError, match="expected a JSON object"):
        read_collected(write(tmp_path, "[]", "list.json"))
    link = tmp_path / "link.json"
    os.symlink(ROUND_1, link)
    with pytest.raises(CollectedFileError, match="symlink"):
        read_collected(link)
    with pytest.raises(CollectedFileError, match=r"absent\.json: missing"):
        read_collected(tmp_path / "absent.json")
    monkeypatch.setattr(errors_collected, "MAX_COLLECTED_BYTES", 1000)
    with pytest.raises(CollectedFileError, match="byte cap"):
        read_collected(ROUND_1)
    deep = write(tmp_path, "[" * 100_000, "deep.json")
    with pytest.raises(CollectedFileError):
        read_collected(deep)


def artefacts(**overrides: object) -> Artefacts:
    values: dict[str, object] = {
        "findings": (Finding("app.py", 3, "import", "google.generativeai", "eligible", None, "alias_resolved"),),
        "edits": (
            PlanEdit("app.py", 3, "auto", "p:import", None),
            PlanEdit("app.py", 3, "auto", "p:import-2", None),
            PlanEdit("b.py", 1, "auto", "p:import", None),
            PlanEdit("requirements.txt", 1, "needs_review", None, "repo_not_fully_migrated"),
        ),
        "written": ("app.py",),
        "withheld": (
            Withheld("requirements.txt", 1, "google-generativeai", "repo_not_fully_migrated"),
            Withheld("c.py", 2, "google.generativeai", "file_not_fully_migrated", ("local_import",)),
        ),
        "exit_code": 6,
        "model_used": False,
        "llm_tokens_in": None,
        "llm_tokens_out": None,
        "llm_cost_usd": None,
        "run_id": "20261203T000000Z-0123abcd",
    }
    values.update(overrides)
    return Artefacts(**values)  # type: ignore[arg-type]


def test_a_case_is_collected_from_its_graded_facts() -> None:
    case = collect_case(artefacts(), "facts.json")
    # only auto edits in files obelize wrote, once per position
    assert case.applied == [("app.py", 3)] == applied_positions(artefacts())
    assert case.findings[0].confidence_reason == "alias_resolved"
    assert case.withheld[1].caused_by == ["local_import"] and case.withheld[0].caused_by is None
    assert (case.run_id, case.exit_code) == ("20261203T000000Z-0123abcd", 6)


def test_facts_without_a_run_id_cannot_be_collected() -> None:
    with pytest.raises(ValueError, match=r"facts\.json: the graded facts name no run_id"):
        collect_case(artefacts(run_id=None), "facts.json")


def test_a_collected_entry_reads_back_as_the_graded_facts_it_was_collected_from() -> None:
    for case in read_collected(ROUND_1).cases.values():
        assert collect_case(graded_facts_of(case), "x") == case


def test_round_1_records_are_graded_again_from_the_collected_file() -> None:
    """Upstream's round 1 published no graded facts; its collected file grades every record's
    counts again, the controls' included."""
    from pytest_obelize_bench.casefile.cases import load_case_file
    from pytest_obelize_bench.grading.grade import grade
    from pytest_obelize_bench.grading.record import SuiteResult, read_round

    keys = load_case_file(PROJECT / "cases" / "cases.yaml").by_id()
    records = read_round(PROJECT / "results" / "round-1")
    cases = read_collected(ROUND_1).cases
    assert set(cases) == set(records)
    fields = ("detected", "false_positive", "missed_call_site", "unmigrated", "patch_applied", "false_positive_edit")
    for case_id, case in cases.items():
        again = grade(keys[case_id], graded_facts_of(case), baseline=SuiteResult(), after=SuiteResult(),
                      patch_compiles=None, runtime_seconds=None)  # fmt: skip
        measured = records[case_id].measurements
        assert [getattr(again, f) for f in fields] == [getattr(measured, f) for f in fields], case_id


def test_the_round_lists_distinct_provenance_sorted() -> None:
    case = collect_case(artefacts(), "x")
    whole = collected_round(2, {"b": case, "a": case}, ["0.8.0", None, "0.8.0"], ["f" * 64, "e" * 64])
    assert whole.obelize_version == ["0.8.0"] and whole.pack_sha256 == ["e" * 64, "f" * 64]
    assert list(whole.cases) == ["a", "b"]
    assert read_collected(write_text(whole.to_json())) == whole


def write_text(text: str) -> Path:
    import tempfile

    handle, name = tempfile.mkstemp(suffix=".json")
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        stream.write(text)
    return Path(name)


# -- the reviewer file --------------------------------------------------------------------------


def test_round_1_reviewer_file_carries_the_facts_over() -> None:
    ours = read_review(REVIEW_1)
    assert ours.round == 1 and ours.record == "results/errors/round-1.json"
    assert len(ours.causes) == 30 and len(ours.misses) == 25 and len(ours.unexpected) == 3
    theirs = yaml.safe_load((UPSTREAM / "errors.yaml").read_text(encoding="utf-8"))
    assert {k: (v.cause_class, v.disposition, v.recorded) for k, v in ours.causes.items()} == {
        k: (v["class"], v["disposition"], v["recorded"]) for k, v in theirs["causes"].items()
    }
    assert [m.model_dump() for m in ours.misses] == theirs["misses"]
    assert ours.unexpected == theirs["unexpected"]
    # the prose is our own
    for name, cause in ours.causes.items():
        assert cause.why.strip() != " ".join(theirs["causes"][name]["why"].split()), name


def review_text(**changes: object) -> str:
    data = yaml.safe_load(REVIEW_1.read_text(encoding="utf-8"))
    data.update(changes)
    return yaml.safe_dump(data)


@pytest.mark.parametrize(
    "change,needle",
    [
        (
            {"causes": {"x": {"class": "withheld", "disposition": "wontfix", "recorded": "ADR-001", "why": "w"}}},
            "causes.x.disposition",
        ),
        (
            {"causes": {"x": {"class": "bogus", "disposition": "limitation", "recorded": "ADR-001", "why": "w"}}},
            "causes.x.class",
        ),
        ({"causes": {"x": {"class": "withheld", "disposition": "limitation", "recorded": "ADR-001"}}}, "causes.x.why"),
        ({"misses": [{"case": "a", "path": "p", "line": 0, "symbol": "s", "cause": "c"}]}, r"misses\.0\.line"),
        ({"extra": 1}, "extra"),
    ],
)
def test_a_malformed_reviewer_file_is_one_line_naming_the_field(
    tmp_path: Path, change: dict[str, object], needle: str
) -> None:
    path = tmp_path / "errors-round-1.yaml"
    path.write_text(review_text(**change), encoding="utf-8")
    with pytest.raises(ReviewFileError, match=needle) as caught:
        read_review(path)
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)


def test_hostile_reviewer_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("causes: [unclosed\n", encoding="utf-8")
    with pytest.raises(ReviewFileError, match="not valid YAML"):
        read_review(bad)
    bad.write_text("!!python/object/apply:os.system ['true']\n", encoding="utf-8")
    with pytest.raises(ReviewFileError, match="not valid YAML"):
        read_review(bad)
    bad.write_text("- a list\n", encoding="utf-8")
    with pytest.raises(ReviewFileError, match="expected a mapping"):
        read_review(bad)
    link = tmp_path / "link.yaml"
    os.symlink(REVIEW_1, link)
    with pytest.raises(ReviewFileError, match="symlink"):
        read_review(link)
    monkeypatch.setattr(errors_review, "MAX_REVIEW_BYTES", 100)
    with pytest.raises(ReviewFileError, match="byte cap"):
        read_review(REVIEW_1)
