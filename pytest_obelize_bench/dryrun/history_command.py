"""``obelize-bench history --frame PACK [--find REPOSITORY]``: a pack's history of releases, written or searched.

Without ``--find`` it writes ``results/dryrun/<pack>/history.json`` (one file, atomically) from each
release's kept dry run and prints a line per release and per step; ``summarize`` then puts its block,
figure and page in. With ``--find`` it names the first release at which the repository's result
changed, with the two dry runs that show it, and every later change.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from pytest_obelize_bench._util.first_change import ReleaseChange, change_lines
from pytest_obelize_bench._util.safe_io import write_atomically
from pytest_obelize_bench.dryrun.outcomes import DryRunRecordError
from pytest_obelize_bench.dryrun.release_files import collect_frame_history, pack_folder
from pytest_obelize_bench.dryrun.release_history import FRAME_HISTORY_NAME, FrameHistory, first_changes

__all__ = ["run_frame_history"]


def _find(history: FrameHistory, repository: str, out: TextIO) -> int:
    if not any(repository in release.results for release in history.releases):
        print(f"obelize-bench history: no release's dry run of {history.pack} has {repository}", file=out)
        return 1
    changes = first_changes(history, repository)
    if not changes:
        labels = ", ".join(r.label for r in history.releases if repository in r.results)
        print(f"{repository}: the same result under every release ({labels})", file=out)
        return 0
    said = [
        ReleaseChange(
            before=before.label,
            before_at=f"run at {before.run_at}",
            was=before.results[repository],
            after=after.label,
            after_at=f"run at {after.run_at}",
            now=after.results[repository] + (f" ({after.errors[repository]})" if repository in after.errors else ""),
        )
        for before, after in changes
    ]
    for line in change_lines(repository, said):
        print(line, file=out)
    return 0


def run_frame_history(results: Path, pack: str, cases_dir: Path, *, find: str | None, out: TextIO) -> int:
    """0 when written (or found), 1 with a one-line reason."""
    try:
        history = collect_frame_history(results, pack, cases_dir)
    except (ValueError, DryRunRecordError) as exc:
        print(f"obelize-bench history: {str(exc).splitlines()[0]}", file=out)
        return 1
    for item in history.left_out:
        print(f"left out: {item.release}: {item.reason}", file=out)
    if not history.releases:
        folder = pack_folder(results, pack) / "releases"
        print(f"obelize-bench history: no release's dry run of {pack} is kept in {folder}", file=out)
        return 1
    if find is not None:
        return _find(history, find, out)
    for release in history.releases:
        if release.state == "pack_absent":
            print(f"obelize {release.label}: does not ship the pack", file=out)
            continue
        counts = ", ".join(f"{int(rate['k'])} {name}" for name, rate in release.outcomes.items())
        errors = f", {len(release.errors)} could not run" if release.errors else ""
        print(f"obelize {release.label}: {counts} (of {release.with_outcome}){errors}", file=out)
    for step in history.steps:
        said = step.note or f"{len(step.changed)} repositories changed outcome"
        print(f"{step.after} against {step.before}: {said}", file=out)
    path = pack_folder(results, pack) / FRAME_HISTORY_NAME
    write_atomically(path, history.to_json())
    print(f"history written: {path}; `obelize-bench summarize` puts its block into the results document", file=out)
    return 0
