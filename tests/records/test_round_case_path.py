"""Which case file each round of a results folder was run from: its publication, else its newest run."""

from __future__ import annotations

from pathlib import Path

from pytest_obelize_bench.records.manifest import CaseFileRef, RunManifest, write_manifest
from pytest_obelize_bench.records.publication_note import Publication
from pytest_obelize_bench.records.runref import round_case_path


def _files(project: Path, *names: str) -> None:
    for name in names:
        (project / "cases" / name).parent.mkdir(parents=True, exist_ok=True)
        (project / "cases" / name).write_text("round: 1\n", encoding="utf-8")


def test_each_round_names_its_own_case_file(tmp_path: Path) -> None:
    results, default = tmp_path / "results", tmp_path / "cases" / "cases.yaml"
    _files(tmp_path, "cases.yaml", "cases-round-3.yaml")
    two = results / "round-2"
    two.mkdir(parents=True)
    note = Publication(round=2, run="r2", records={}, case_file=CaseFileRef(path="cases/cases.yaml", sha256="a" * 64))
    (two / "publication.json").write_text(note.to_json(), encoding="utf-8")
    for run, path in (
        ("20261207T000000Z-aaaaaa", "cases/cases.yaml"),
        ("20261207T010000Z-bbbbbb", "cases/cases-round-3.yaml"),
    ):
        folder = results / "round-3" / "runs" / run
        folder.mkdir(parents=True)
        write_manifest(folder, RunManifest(run=run, round=3, case_file=CaseFileRef(path=path, sha256="b" * 64)))
    imported = results / "round-1"
    imported.mkdir(parents=True)
    (imported / "publication.json").write_text(
        Publication(round=1, run="imported", kind="imported", records={}).to_json(), encoding="utf-8"
    )
    assert round_case_path(results, 2, default) == (tmp_path / "cases" / "cases.yaml").resolve()
    assert round_case_path(results, 3, default) == (tmp_path / "cases" / "cases-round-3.yaml").resolve()
    assert round_case_path(results, 1, default) == default  # imported: names none
    assert round_case_path(results, 4, default) == default  # not run at all


def test_a_named_file_that_is_gone_falls_back_to_the_project_s(tmp_path: Path) -> None:
    results, default = tmp_path / "results", tmp_path / "cases" / "cases.yaml"
    folder = results / "round-3" / "runs" / "20261207T000000Z-aaaaaa"
    folder.mkdir(parents=True)
    write_manifest(
        folder,
        RunManifest(
            run="20261207T000000Z-aaaaaa", round=3, case_file=CaseFileRef(path="cases/x.yaml", sha256="c" * 64)
        ),
    )
    assert round_case_path(results, 3, default) == default
