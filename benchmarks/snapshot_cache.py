"""Fill a repository cache (``--bench-repo-cache``) from bare snapshots of the repositories.

Run: .venv/bin/python benchmarks/snapshot_cache.py CACHE_DIR --snapshots DIR FILE [FILE ...]

Each FILE is a case file (its ``cases`` and ``controls``) or a frame (its ``repositories``); every
row names a repository (``full_name``) and a pinned commit (``sha``).

``--bench-repo-cache=CACHE_DIR`` keeps one bare repository per repository at
``CACHE_DIR/<owner>/<name>.git``, holding each pinned commit under ``refs/obelize-bench/<sha>``
(the harness's checkout step); a case or frame repository whose commit is there fetches nothing
from its remote.  A *snapshot* is a bare git directory of one repository at
``DIR/<owner>+<name>/repo`` (a ``git clone --mirror``, or any bare copy of its history).  For
each row, this script

1. checks the snapshot holds the pinned commit and every blob of its tree: a snapshot taken
   without large binary files holds the commit but not its whole tree, and no checkout of the pin
   can be made from it;
2. if so, runs ``git init --bare CACHE_DIR/<owner>/<name>.git`` and ``git fetch --depth 1
   <snapshot> <sha>:refs/obelize-bench/<sha>``: the harness's own cache fetch, made shallow
   because a snapshot may lack objects of the pin's history (never of its tree, checked above),
   and the harness fetches the pin from the cache with ``--depth 1`` anyway;
3. prints one line per row: ``complete``, ``lacks N blob(s)`` (and which paths), ``pin absent``
   (the snapshot's history does not reach the pinned commit) or ``no snapshot``.

A row that is not ``complete`` is left out of the cache, so it fails the harness's preflight or
fetch.  With GitHub reachable no snapshot is needed: ``--bench-repo-cache`` fills itself from
each row's URL on first use.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Pin:
    id: str
    full_name: str
    sha: str

    @property
    def owner(self) -> str:
        return self.full_name.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.full_name.split("/", 1)[1]


def pins_of(path: Path) -> list[Pin]:
    """Every row of a case file or a frame that names a repository at a commit."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    rows = [*data.get("cases", []), *data.get("controls", []), *data.get("repositories", [])]
    return [
        Pin(str(row["full_name"]).replace("/", "__"), str(row["full_name"]), str(row["sha"]))
        for row in rows
        if row.get("full_name") and row.get("sha")
    ]


def _git(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {"GIT_TERMINAL_PROMPT": "0", "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/nonexistent"}
    return subprocess.run(["git", *args], input=stdin, capture_output=True, text=True, env=env, check=False)


def snapshot_state(snapshot: Path, sha: str) -> tuple[str, list[str]]:
    """``("complete" | "lacks" | "pin absent" | "no snapshot", the missing paths)``."""
    if not (snapshot / "HEAD").is_file():
        return "no snapshot", []
    if _git("--git-dir", str(snapshot), "cat-file", "-e", f"{sha}^{{commit}}").returncode != 0:
        return "pin absent", []
    listed = _git("--git-dir", str(snapshot), "ls-tree", "-r", "-z", sha)
    if listed.returncode != 0:
        return "lacks", ["(the commit's tree cannot be read)"]
    entries = []
    for entry in listed.stdout.split("\0"):
        if entry:
            meta, path = entry.split("\t", 1)
            _mode, kind, obj = meta.split()
            if kind == "blob":
                entries.append((obj, path))
    probe = _git("--git-dir", str(snapshot), "cat-file", "--batch-check", stdin="".join(f"{o}\n" for o, _ in entries))
    answers = probe.stdout.splitlines()
    missing = [path for (_obj, path), answer in zip(entries, answers, strict=True) if answer.endswith(" missing")]
    return ("lacks", missing) if missing else ("complete", [])


def fill(cache: Path, snapshots: Path, pins: Iterable[Pin]) -> list[tuple[Pin, str]]:
    """Put every complete pin in ``cache``; each pin with what was found (``complete`` or why not)."""
    sys.path.insert(0, str(ROOT))
    from pytest_obelize_bench.case.checkout import cache_repository

    results = []
    for pin in pins:
        snapshot = snapshots / f"{pin.owner}+{pin.name}" / "repo"
        state, missing = snapshot_state(snapshot, pin.sha)
        line = state
        if state == "lacks":
            line = f"lacks {len(missing)} blob(s): {', '.join(missing)}"
        elif state == "complete":
            bare = cache_repository(cache, pin.owner, pin.name)
            if not (bare / "HEAD").is_file():
                bare.parent.mkdir(parents=True, exist_ok=True)
                _git("init", "--bare", "-q", str(bare))
            if _git("--git-dir", str(bare), "cat-file", "-e", f"{pin.sha}^{{commit}}").returncode != 0:
                fetched = _git(
                    "--git-dir", str(bare), "fetch", "-q", "--depth", "1", "--end-of-options",
                    snapshot.resolve().as_uri(), f"{pin.sha}:refs/obelize-bench/{pin.sha}",
                )  # fmt: skip
                if fetched.returncode != 0:
                    line = f"fetch failed: {fetched.stderr.strip()[:200]}"
        results.append((pin, line))
    return results


def print_results(results: list[tuple[Pin, str]]) -> list[str]:
    """Print one line per pin; the ids that are complete in the cache."""
    width = max((len(pin.id) for pin, _ in results), default=0)
    for pin, line in results:
        print(f"{pin.id:<{width}}  {line}")
    complete = [pin.id for pin, line in results if line == "complete"]
    print(f"\n{len(complete)} of {len(results)} repositories complete in the cache")
    return complete


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("cache", type=Path, help="the repository cache to fill (--bench-repo-cache)")
    parser.add_argument("--snapshots", type=Path, required=True, help="bare snapshots at DIR/<owner>+<name>/repo")
    parser.add_argument("files", nargs="+", type=Path, help="case files or frames naming the pins")
    args = parser.parse_args(argv)
    pins = [pin for path in args.files for pin in pins_of(path)]
    complete = print_results(fill(args.cache.expanduser().resolve(), args.snapshots.expanduser(), pins))
    return 0 if len(complete) == len(pins) else 1


if __name__ == "__main__":
    sys.exit(main())
