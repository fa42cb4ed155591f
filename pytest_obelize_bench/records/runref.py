"""One way to name a run everywhere, and the case file and work root a run or a round belongs to.

A run is named by its bare id (searched in every round), by ``round-N:RUN`` (or ``N:RUN``), or by
its folder. Commands given no ``--cases`` read the case file from the run's manifest (or from the
round's publication note), so a run of another case file is read with its own cases; an explicit
``--cases`` that differs is used, and said.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pytest_obelize_bench.grading.record import RecordError
from pytest_obelize_bench.records.publication_note import read_publication
from pytest_obelize_bench.records.runs import MANIFEST_NAME, CaseFileRef, RunManifest, read_manifest, runs_root

_SPEC = re.compile(r"(?:round-)?([1-9][0-9]*):([A-Za-z0-9][A-Za-z0-9._-]{0,127})")
_ROUND = re.compile(r"round-([1-9][0-9]*)")


@dataclass(frozen=True)
class RunRef:
    """A run found on disk: its round, id, folder and manifest."""

    round: int
    run_id: str
    folder: Path
    manifest: RunManifest


def round_numbers(results: Path) -> list[int]:
    """Every ``round-N`` folder's N under ``results``, ascending."""
    if not Path(results).is_dir():
        return []
    found = [int(m.group(1)) for p in Path(results).iterdir() if (m := _ROUND.fullmatch(p.name)) and p.is_dir()]
    return sorted(found)


def _ref(folder: Path) -> RunRef:
    manifest = read_manifest(folder)
    return RunRef(manifest.round, manifest.run, folder, manifest)


def find_run_folder(results: Path, text: str, round_number: int | None = None) -> Path:
    """The folder of the run ``text`` names (bare id, ``round-N:RUN`` or a folder), its manifest unread;
    ValueError in one line when it names none."""
    match = _SPEC.fullmatch(text)
    if match is not None:
        folder = runs_root(results, int(match.group(1))) / match.group(2)
        if not (folder / MANIFEST_NAME).is_file():
            raise ValueError(f"no run {match.group(2)} in {folder.parent}")
        return folder
    path = Path(text)
    if (path / MANIFEST_NAME).is_file():
        return path
    rounds = [round_number] if round_number is not None else round_numbers(results)
    hits = [runs_root(results, n) / text for n in rounds if "/" not in text and text not in ("", ".", "..")]
    hits = [folder for folder in hits if (folder / MANIFEST_NAME).is_file()]
    if len(hits) > 1:
        raise ValueError(f"run {text} is in several rounds; name it as round-N:{text}")
    if hits:
        return hits[0]
    where = f"round {round_number}" if round_number is not None else "any round"
    raise ValueError(f"{text} names no run: not a run id in {where} of {results}, not round-N:RUN, not a run folder")


def find_run(results: Path, text: str, round_number: int | None = None) -> RunRef:
    """The run ``text`` names, with its manifest; ValueError in one line otherwise."""
    folder = find_run_folder(results, text, round_number)
    try:
        return _ref(folder)
    except RecordError as exc:
        raise ValueError(str(exc).splitlines()[0]) from None


def published_case_file(results: Path, round_number: int) -> CaseFileRef | None:
    """The case file round n was published from, when its note names one."""
    try:
        note = read_publication(Path(results) / f"round-{round_number}")
    except RecordError:
        return None
    return None if note is None else note.case_file


def round_case_path(results: Path, round_number: int, default: Path) -> Path:
    """The case file round ``round_number`` of ``results`` was published or run from: its publication's
    (``published_case_file``), else the newest of its runs that names one; ``default`` for a round that
    names none (imported, or not run yet) or names one that is no longer there.

    A results folder can hold rounds of more than one case file (round 3's carries round 2's rows and
    adds its own), so each round is read with its own."""
    named: CaseFileRef | None = published_case_file(results, round_number)
    if named is None and not (Path(results) / f"round-{round_number}" / "publication.json").is_file():
        for folder in sorted(runs_root(results, round_number).glob("*"), reverse=True):
            try:
                named = read_manifest(folder).case_file if (folder / MANIFEST_NAME).is_file() else None
            except RecordError:
                continue
            if named is not None:
                break
    if named is None:
        return Path(default)
    # beside the results folder (the project that published it), else beside the project's own case file:
    # a results folder copied elsewhere is still read with the case files of the project it came from
    for path in (named.resolve(Path(results)), Path(default).resolve().parent.parent / named.path):
        if path.is_file():
            return path
    return Path(default)


def choose_case_file(
    results: Path, recorded: CaseFileRef | None, given: Path | None, default: Path, what: str
) -> tuple[Path, list[str]]:
    """The case file to read ``what`` with, and the line saying so when ``--cases`` overrides the record."""
    own = recorded.resolve(results) if recorded is not None else None
    if given is None:
        if own is not None and own.is_file():
            return own, []
        return default, []
    if own is not None and Path(given).resolve() != own.resolve():
        return given, [
            f"note: --cases {given} is not the case file {what} ran from ({recorded.path if recorded else own})"
        ]
    return given, []


__all__ = [
    "RunRef",
    "choose_case_file",
    "find_run",
    "find_run_folder",
    "published_case_file",
    "round_case_path",
    "round_numbers",
]
