"""Which case file each round of a results folder was run from.

A results folder can hold rounds of more than one case file: round 3's file carries round 2's rows
and adds its own, while round 2's published figures stay checkable against round 2's file. Each
round names its file: its publication note (``case_file``), else the newest of its runs that names
one; a round that names none (an imported round, or none run yet) belongs to the project's file.
Only paths are resolved here; the callers load each file once.
"""

from __future__ import annotations

from pathlib import Path

from pytest_obelize_bench.grading.record import RecordError
from pytest_obelize_bench.records.manifest import resolve_portable
from pytest_obelize_bench.records.publication_note import read_publication
from pytest_obelize_bench.records.runs import list_runs

__all__ = ["round_case_path"]


def round_case_path(results: Path, round_number: int, default: Path) -> Path:
    """The case file round ``round_number`` of ``results`` was published or run from; ``default`` when it
    names none, or names one that is no longer there (its figures are then checked against the default)."""
    folder = Path(results) / f"round-{round_number}"
    named = None
    try:
        note = read_publication(folder) if folder.is_dir() else None
    except RecordError:
        note = None
    if note is not None and note.case_file is not None:
        named = note.case_file.path
    elif note is None:
        for _, manifest, _ in reversed(list_runs(results, round_number)):
            if manifest is not None and manifest.case_file is not None:
                named = manifest.case_file.path
                break
    if named is None:
        return Path(default)
    path = resolve_portable(named, Path(results))
    return path if path.is_file() else Path(default)
