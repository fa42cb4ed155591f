"""Replay round 1 on the real repositories: fill a repository cache, then compare the replay.

Two commands:

    .venv/bin/python benchmarks/replay_round1.py CACHE_DIR --snapshots DIR
    .venv/bin/python benchmarks/replay_round1.py --compare RUN_DIR

**Filling the cache.**  ``--bench-repo-cache=CACHE_DIR`` keeps one bare repository per
repository at ``CACHE_DIR/<owner>/<name>.git``, holding each pinned commit under
``refs/obelize-bench/<sha>`` (``checkout.py``); a case whose commit is there fetches nothing from
its remote.  This script fills that layout from *snapshots*: bare git directories, one per
repository, at ``DIR/<owner>+<name>/repo`` (a ``git clone --mirror`` of the repository, or any
bare copy of its history).  For every repository of round 1's case file
(``tests/data/upstream/cases.yaml``, byte for byte upstream's), it

1. checks the snapshot holds the pinned commit and every blob of its tree (a snapshot taken
   without large binary files holds the commit but not its whole tree, and no fetch of the pin
   can succeed from it);
2. if so, runs ``git init --bare CACHE_DIR/<owner>/<name>.git`` and ``git fetch --depth 1
   <snapshot> <sha>:refs/obelize-bench/<sha>``: the harness's own cache fetch, made shallow
   because a snapshot may lack objects of the pin's history (never of its tree, checked above),
   and the harness fetches the pin from the cache with ``--depth 1`` anyway;
3. prints one line per repository: ``complete``, ``lacks N blob(s)`` (and which paths), ``pin
   absent`` (the snapshot's history does not reach the pinned commit) or ``no snapshot``.

A repository that is not ``complete`` is left out of the cache, so its case fails at the
harness's preflight or fetch; the replay selects the complete ones with ``-k`` (the script prints
the command).  With GitHub reachable no snapshot is needed: ``--bench-repo-cache`` fills itself
from each case's ``repo`` on first use.

**Comparing.**  ``--compare RUN_DIR`` reads every record of a replay run folder and the published
round-1 record of the same case (``results/round-1/<id>.json``) and compares them field by field:
the tier, the error's step and reason, every measurement but ``runtime_seconds`` (a wall clock),
and both suites' status and counts.  A field round 1's records lack (``forbidden_reported``) is
not compared.  One line per case, ``equal`` or each differing field with both values.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
ROUND_1_CASES = ROOT / "tests" / "data" / "upstream" / "cases.yaml"
PUBLISHED = ROOT / "results" / "round-1"
CUTOFF = "2026-09-29T00:00:00Z"
#: A wall clock is never equal between two runs; every other measurement is compared.
NOT_COMPARED = frozenset({"runtime_seconds"})


@dataclass(frozen=True)
class Repository:
    case: str
    full_name: str
    sha: str

    @property
    def owner(self) -> str:
        return self.full_name.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.full_name.split("/", 1)[1]


def round_1_repositories(path: Path = ROUND_1_CASES) -> list[Repository]:
    """Every case and control of round 1's case file, with its repository and pin."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    rows = [*data["cases"], *data.get("controls", [])]
    return [
        Repository(str(row["full_name"]).replace("/", "__"), str(row["full_name"]), str(row["sha"])) for row in rows
    ]


def _git(*args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    env = {"GIT_TERMINAL_PROMPT": "0", "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/nonexistent"}
    return subprocess.run(["git", *args], capture_output=True, text=True, env=env, check=check)


def snapshot_state(snapshot: Path, sha: str) -> tuple[str, list[str]]:
    """``("complete" | "lacks" | "pin absent" | "no snapshot", missing paths)``."""
    if not (snapshot / "HEAD").is_file():
        return "no snapshot", []
    if _git("--git-dir", str(snapshot), "cat-file", "-e", f"{sha}^{{commit}}").returncode != 0:
        return "pin absent", []
    listed = _git("--git-dir", str(snapshot), "ls-tree", "-r", "-z", sha)
    if listed.returncode != 0:
        return "lacks", ["(the commit's tree cannot be read)"]
    entries = []
    for entry in listed.stdout.split("\0"):
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        _mode, kind, obj = meta.split()
        if kind == "blob":
            entries.append((obj, path))
    probe = subprocess.run(
        ["git", "--git-dir", str(snapshot), "cat-file", "--batch-check"],
        input="".join(f"{obj}\n" for obj, _ in entries),
        capture_output=True,
        text=True,
        check=False,
    )
    answers = probe.stdout.splitlines()
    missing = [path for (_obj, path), answer in zip(entries, answers, strict=True) if answer.endswith(" missing")]
    return ("lacks", missing) if missing else ("complete", [])


def fill(cache: Path, snapshots: Path) -> list[tuple[Repository, str]]:
    """Fill ``cache`` from ``snapshots``; each repository with what was found."""
    from pytest_obelize_bench.checkout import cache_repository

    results = []
    for repo in round_1_repositories():
        snapshot = snapshots / f"{repo.owner}+{repo.name}" / "repo"
        state, missing = snapshot_state(snapshot, repo.sha)
        line = state
        if state == "lacks":
            line = f"lacks {len(missing)} blob(s): {', '.join(missing)}"
        elif state == "complete":
            bare = cache_repository(cache, repo.owner, repo.name)
            if not (bare / "HEAD").is_file():
                _git("init", "--bare", "-q", str(bare), check=True)
            if _git("--git-dir", str(bare), "cat-file", "-e", f"{repo.sha}^{{commit}}").returncode != 0:
                fetched = _git(
                    "--git-dir", str(bare), "fetch", "-q", "--depth", "1", "--end-of-options",
                    snapshot.resolve().as_uri(), f"{repo.sha}:refs/obelize-bench/{repo.sha}",
                )  # fmt: skip
                if fetched.returncode != 0:
                    line = f"fetch failed: {fetched.stderr.strip()[:200]}"
        results.append((repo, line))
    return results


def _suite(value: object) -> object:
    if not isinstance(value, dict):
        return value
    return {key: value.get(key) for key in ("status", "passed", "failed", "skipped")}


def differences(replayed: dict, published: dict) -> list[str]:
    """Each field where a replayed record differs from the published one, with both values."""
    out = []
    if replayed.get("tier") != published.get("tier"):
        out.append(f"tier {published.get('tier')} -> {replayed.get('tier')}")
    old_error, new_error = published.get("error") or {}, replayed.get("error") or {}
    for key in ("step", "reason"):
        if old_error.get(key) != new_error.get(key):
            out.append(f"error.{key} {old_error.get(key)} -> {new_error.get(key)}")
    old, new = published.get("measurements") or {}, replayed.get("measurements") or {}
    for key in sorted(old):
        if key in NOT_COMPARED:
            continue
        a, b = _suite(old.get(key)), _suite(new.get(key))
        if a != b:
            out.append(f"{key} {json.dumps(a, sort_keys=True)} -> {json.dumps(b, sort_keys=True)}")
    return out


def compare(run: Path) -> int:
    """Print one line per replayed record; the number of records that differ."""
    differing = 0
    for path in sorted(run.glob("*.json")):
        if path.name == "run.json" or ".attempt-" in path.name:
            continue
        replayed = json.loads(path.read_text(encoding="utf-8"))
        published_path = PUBLISHED / path.name
        if not published_path.is_file():
            print(f"{path.stem}: no published round-1 record")
            differing += 1
            continue
        found = differences(replayed, json.loads(published_path.read_text(encoding="utf-8")))
        differing += bool(found)
        print(f"{path.stem}: {'equal' if not found else '; '.join(found)}")
    return differing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("cache", nargs="?", type=Path, help="the repository cache to fill (--bench-repo-cache)")
    parser.add_argument("--snapshots", type=Path, help="bare snapshots at DIR/<owner>+<name>/repo")
    parser.add_argument("--compare", type=Path, metavar="RUN_DIR", help="compare a replay run folder with round 1")
    args = parser.parse_args(argv)
    if args.compare:
        return 1 if compare(args.compare) else 0
    if args.cache is None or args.snapshots is None:
        parser.error("give CACHE_DIR and --snapshots DIR, or --compare RUN_DIR")
    results = fill(args.cache.expanduser().resolve(), args.snapshots.expanduser())
    width = max(len(repo.case) for repo, _ in results)
    for repo, line in results:
        print(f"{repo.case:<{width}}  {line}")
    complete = [repo.case for repo, line in results if line == "complete"]
    print(f"\n{len(complete)} of {len(results)} repositories complete in the cache")
    if complete:
        selection = " or ".join(complete)
        print(
            "replay them with:\n  .venv/bin/python -m pytest --bench-round=1"
            " --bench-cases=tests/data/upstream/cases.yaml"
            f" --obelize=obelize==0.1.0 --exclude-newer={CUTOFF} --bench-interpreter=minor"
            f" --bench-repo-cache={args.cache} --bench-results=SCRATCH --bench-no-publish -k '{selection}'"
        )
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
