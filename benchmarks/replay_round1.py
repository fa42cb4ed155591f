"""Replay round 1 on the real repositories: fill a repository cache, then compare the replay.

    .venv/bin/python benchmarks/replay_round1.py CACHE_DIR --snapshots DIR
    .venv/bin/python benchmarks/replay_round1.py --compare RUN_DIR
    .venv/bin/python benchmarks/replay_round1.py --compare-errors COLLECTED

**Filling the cache.**  ``CACHE_DIR`` becomes a ``--bench-repo-cache`` holding every round-1
repository whose snapshot is complete at its pin, filled by ``snapshot_cache.py`` (read its
docstring for the layout and the checks) from round 1's case file,
``tests/data/upstream/cases.yaml`` (byte for byte upstream's).  One line per repository says
``complete``, ``lacks N blob(s)``, ``pin absent`` or ``no snapshot``; the script then prints the
command that replays the complete ones (``-k``), with obelize 0.1.0, round 1's SDK pins (the case
file's) and its cutoff.

**Comparing.**  ``--compare RUN_DIR`` reads every record of a replay's run folder and the
published round-1 record of the same case (``results/round-1/<id>.json``) and compares them field
by field: the tier, the error's step and reason, every measurement but ``runtime_seconds`` (a wall
clock), and both suites' status and counts.  A measurement round 1's records lack
(``forbidden_reported``, ``manifest_reported``) is not compared.  One line per case, ``equal`` or
each differing field with both values; the exit status is 1 when any differs.

**The error-analysis rows.**  ``--compare-errors COLLECTED`` reads the file ``obelize-bench
errors collect --round 1 --run RUN --results SCRATCH`` wrote over the replay
(``SCRATCH/errors/round-1.json``) and compares each case's rows with upstream's collected file
(``results/errors/round-1.json``): the exit code, the applied positions, every finding and every
withheld row.  Only ``run_id`` (obelize's run folder, named for the moment it ran) is not compared.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.snapshot_cache import fill, pins_of, print_results

ROOT = Path(__file__).resolve().parents[1]
ROUND_1_CASES = ROOT / "tests" / "data" / "upstream" / "cases.yaml"
PUBLISHED = ROOT / "results" / "round-1"
PUBLISHED_ERRORS = ROOT / "results" / "errors" / "round-1.json"
CUTOFF = "2026-09-29T00:00:00Z"
#: A wall clock is never equal between two runs; every other measurement is compared.
NOT_COMPARED = frozenset({"runtime_seconds"})


def _suite(value: object) -> object:
    if not isinstance(value, dict):
        return value
    return {key: value.get(key) for key in ("status", "passed", "failed", "skipped")}


def differences(replayed: dict[str, Any], published: dict[str, Any]) -> list[str]:
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


def compare_errors(collected: Path) -> int:
    """Print one line per collected case of the replay; the number whose rows differ from upstream's."""
    ours = json.loads(collected.read_text(encoding="utf-8"))
    theirs = json.loads(PUBLISHED_ERRORS.read_text(encoding="utf-8"))
    differing = 0
    for key in ("obelize_version", "pack_sha256"):
        if ours.get(key) != theirs.get(key):
            print(f"{key}: {theirs.get(key)} -> {ours.get(key)}")
    for case, rows in sorted(ours["cases"].items()):
        published = theirs["cases"].get(case)
        if published is None:
            print(f"{case}: no collected round-1 rows")
            differing += 1
            continue
        fields = sorted(k for k in set(rows) | set(published) if k != "run_id" and rows.get(k) != published.get(k))
        differing += bool(fields)
        print(f"{case}: {'equal' if not fields else 'differs in ' + ', '.join(fields)}")
    return differing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("cache", nargs="?", type=Path, help="the repository cache to fill (--bench-repo-cache)")
    parser.add_argument("--snapshots", type=Path, help="bare snapshots at DIR/<owner>+<name>/repo")
    parser.add_argument("--compare", type=Path, metavar="RUN_DIR", help="compare a replay run folder with round 1")
    parser.add_argument(
        "--compare-errors", type=Path, metavar="COLLECTED", help="compare a replay's collected rows with round 1's"
    )
    args = parser.parse_args(argv)
    if args.compare:
        return 1 if compare(args.compare) else 0
    if args.compare_errors:
        return 1 if compare_errors(args.compare_errors) else 0
    if args.cache is None or args.snapshots is None:
        parser.error("give CACHE_DIR and --snapshots DIR, or --compare RUN_DIR")
    results = fill(args.cache.expanduser().resolve(), args.snapshots.expanduser(), pins_of(ROUND_1_CASES))
    complete = print_results(results)
    if complete:
        print(
            "replay them with:\n  .venv/bin/python -m pytest --bench-round=1"
            " --bench-cases=tests/data/upstream/cases.yaml"
            f" --obelize=obelize==0.1.0 --exclude-newer={CUTOFF} --bench-interpreter=minor"
            f" --bench-repo-cache={args.cache} --bench-results=SCRATCH --bench-no-publish"
            f" -k '{' or '.join(complete)}'"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
