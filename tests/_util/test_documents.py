"""The one loader of untrusted documents, on hostile files: each problem one line naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

from pytest_obelize_bench._util.documents import load_json, read_yaml, validated
from pytest_obelize_bench._util.safe_io import UntrustedFileError
from pytest_obelize_bench.casefile.cases import CaseFileError, load_case_file
from pytest_obelize_bench.measure.frame import FrameError, load_frame


class Row(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    name: str
    count: int


def problem(path: Path, cap: int = 1024) -> str:
    with pytest.raises(UntrustedFileError) as caught:
        read_yaml(path, cap)
    assert "\n" not in str(caught.value) and str(caught.value).startswith(str(path))
    return str(caught.value)


def test_a_symlink_is_refused_whatever_it_points_at(tmp_path: Path) -> None:
    (tmp_path / "real.yaml").write_text("name: a\ncount: 1\n")
    (tmp_path / "link.yaml").symlink_to(tmp_path / "real.yaml")
    assert "symlink" in problem(tmp_path / "link.yaml")


def test_a_file_over_its_cap_is_refused_unread(tmp_path: Path) -> None:
    (tmp_path / "big.yaml").write_text("name: " + "a" * 5000 + "\n")
    assert "byte cap" in problem(tmp_path / "big.yaml", cap=1024)


def test_bytes_that_are_not_utf8_name_their_line(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_bytes(b"name: a\ncount: 1\nnote: caf\xe9\n")
    assert "is not UTF-8 text (line 3, byte" in problem(tmp_path / "bad.yaml")


def test_an_alias_bomb_is_refused_before_it_expands(tmp_path: Path) -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    lines += [f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]" for i in range(8)]
    (tmp_path / "bomb.yaml").write_text("\n".join(lines) + "\n")
    assert "an alias (*name) is not allowed" in problem(tmp_path / "bomb.yaml")


def test_a_duplicate_key_is_refused(tmp_path: Path) -> None:
    (tmp_path / "twice.yaml").write_text("name: a\nname: b\n")
    assert "duplicate key 'name'" in problem(tmp_path / "twice.yaml")


def test_validation_names_the_field(tmp_path: Path) -> None:
    (tmp_path / "row.yaml").write_text("name: a\ncount: two\n")
    with pytest.raises(UntrustedFileError, match=r"row\.yaml: count: Input should be a valid integer"):
        validated(Row, read_yaml(tmp_path / "row.yaml", 1024), str(tmp_path / "row.yaml"))
    (tmp_path / "row.json").write_text('{"name": "a", "count": 1, "extra": 2}')
    with pytest.raises(UntrustedFileError, match=r"row\.json: extra: is not a known field"):
        load_json(tmp_path / "row.json", Row, 1024)
    (tmp_path / "ok.json").write_text('{"name": "a", "count": 1}')
    assert load_json(tmp_path / "ok.json", Row, 1024) == Row(name="a", count=1)


def test_the_case_file_and_a_frame_refuse_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "real.yaml").write_text("round: 2\ncases: []\n")
    (tmp_path / "cases.yaml").symlink_to(tmp_path / "real.yaml")
    with pytest.raises(CaseFileError) as caught:
        load_case_file(tmp_path / "cases.yaml")
    assert caught.value.problems == [f"{tmp_path / 'cases.yaml'} is a symlink; refused"] or "symlink" in str(
        caught.value
    )
    (tmp_path / "frame.yaml").symlink_to(tmp_path / "real.yaml")
    with pytest.raises(FrameError, match="symlink"):
        load_frame(tmp_path / "frame.yaml")
