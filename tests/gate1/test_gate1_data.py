"""The Gate 1 inputs: the sample frame, the answer keys and the published scan records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_obelize_bench.gate1.labels import LabelError, load_keys
from pytest_obelize_bench.measure.frame import FrameError, load_frame
from pytest_obelize_bench.measure.scanrecord import ScanRecordError, load_scan_document
from tests.helpers.project import PROJECT

SAMPLE = PROJECT / "cases" / "gate1" / "sample.yaml"
LABELS = PROJECT / "cases" / "gate1" / "labels"
SCAN = PROJECT / "results" / "gate1" / "scan.json"


def test_the_sample_frame_loads_with_its_bands_and_rejections() -> None:
    frame = load_frame(SAMPLE)
    assert len(frame.repositories) == 80
    assert sum(band.allocated for band in frame.bands) == 80
    assert frame.population == sum(band.population for band in frame.bands)
    assert len(frame.rejected) == 6 and not frame.is_fixture
    assert len({repo.id for repo in frame.repositories}) == 80


def test_the_five_answer_keys_hold_sixty_four_actionable_rows() -> None:
    keys = load_keys(LABELS, load_frame(SAMPLE))
    assert len(keys) == 5
    assert sum(len(key.call_sites) for key in keys.values()) == 64
    assert sum(len(key.must_not_report) for key in keys.values()) == 13


def test_the_published_scan_records_load_unchanged() -> None:
    document = load_scan_document(SCAN)
    assert document.obelize_version == "0.1.0"
    assert [repo.full_name for repo in document.scanned] == [r.full_name for r in load_frame(SAMPLE).repositories]
    assert json.loads(document.to_json()) == json.loads(SCAN.read_text(encoding="utf-8"))


def _write(path: Path, data: object) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_a_bad_frame_field_is_one_line_naming_file_repository_and_field(tmp_path: Path) -> None:
    data = yaml.safe_load(SAMPLE.read_text(encoding="utf-8"))
    data["repositories"][2]["sha"] = "not-a-sha"
    path = _write(tmp_path / "sample.yaml", data)
    with pytest.raises(FrameError) as caught:
        load_frame(path)
    want = f"{path}: SONA1114/CHATBOT: sha: String should match pattern '^[0-9a-f]{{40}}$' (got 'not-a-sha')"
    assert caught.value.problems == [want]


def test_a_frame_that_is_not_yaml_or_lists_a_repository_twice_is_refused(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("repositories: [\n", encoding="utf-8")
    with pytest.raises(FrameError, match="is not valid YAML"):
        load_frame(broken)
    data = yaml.safe_load(SAMPLE.read_text(encoding="utf-8"))
    data["repositories"].append(dict(data["repositories"][0]))
    with pytest.raises(FrameError, match="LucasHJin/vit: full_name: listed twice"):
        load_frame(_write(tmp_path / "twice.yaml", data))


def test_a_key_whose_pin_differs_from_the_frame_is_refused(tmp_path: Path) -> None:
    source = LABELS / "LucasHJin__vit.yaml"
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    data["sha"] = "0" * 40
    _write(tmp_path / "LucasHJin__vit.yaml", data)
    with pytest.raises(LabelError) as caught:
        load_keys(tmp_path, load_frame(SAMPLE))
    expected = (
        f"{tmp_path / 'LucasHJin__vit.yaml'}: LucasHJin/vit: sha: the key labels {'0' * 40}, the frame pins "
        "472b94039b5c314bda67136432ea70be5f516215"
    )
    assert caught.value.problems == [expected]


def test_a_key_row_of_an_unknown_kind_names_the_row(tmp_path: Path) -> None:
    data = yaml.safe_load((LABELS / "LucasHJin__vit.yaml").read_text(encoding="utf-8"))
    data["call_sites"][3]["kind"] = "manifest"
    _write(tmp_path / "k.yaml", data)
    with pytest.raises(LabelError) as caught:
        load_keys(tmp_path, load_frame(SAMPLE))
    (line,) = caught.value.problems
    assert line.startswith(f"{tmp_path / 'k.yaml'}: LucasHJin/vit: call_sites.3.kind: Input should be")


def test_a_scan_document_with_a_bad_field_names_the_repository(tmp_path: Path) -> None:
    data = json.loads(SCAN.read_text(encoding="utf-8"))
    data["scanned"][1]["findings"][0]["line"] = 0
    path = tmp_path / "scan.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ScanRecordError) as caught:
        load_scan_document(path)
    assert (
        str(caught.value)
        == f"{path}: aryanbrite/project-ai: findings.0.line: Input should be greater than or equal to 1 (got 0)"
    )


def test_a_symlinked_or_oversized_scan_document_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    link = tmp_path / "scan.json"
    link.symlink_to(SCAN)
    with pytest.raises(ScanRecordError, match="is a symlink"):
        load_scan_document(link)
    from pytest_obelize_bench.measure import scanrecord

    monkeypatch.setattr(scanrecord, "MAX_SCAN_DOCUMENT_BYTES", 1000)
    with pytest.raises(ScanRecordError, match="larger than the 1000 byte cap"):
        load_scan_document(SCAN)


def test_a_fixture_path_may_not_leave_the_frame_folder(tmp_path: Path) -> None:
    (tmp_path / "frames").mkdir()
    (tmp_path / "repos").mkdir()
    data: dict[str, Any] = {
        "term": "x",
        "repositories": [{"full_name": "f/one", "band": "b", "path": "../repos", "expected": "none"}],
    }
    path = _write(tmp_path / "frames" / "frame.yaml", data)
    with pytest.raises(FrameError) as caught:
        load_frame(path)
    assert caught.value.problems == [f"{path}: f/one: path: '../repos' leaves the checkout ('..')"]
    data["repositories"][0].update(url="https://example.invalid/f/one")
    with pytest.raises(FrameError, match="f/one: \\(row\\): a fixture's local path replaces url and sha"):
        load_frame(_write(tmp_path / "frames" / "frame.yaml", data))
