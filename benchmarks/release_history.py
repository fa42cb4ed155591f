"""The history of obelize releases, measured: every release on a round and on each pack's frame.

Run: .venv/bin/python benchmarks/release_history.py --repo-cache ~/.cache/obelize-bench-repos \
         --unreachable ../shared/snapshots/pins.tsv

For each release (0.1.0 to 0.8.0 unless ``--releases`` says otherwise) it runs, one after another,
what the histories lack:

* the round (``--round``, 2 by default) with ``--bench-repeat=2`` under one ``--exclude-newer``, kept
  unpublished in ``results/round-N/runs/`` (``--bench-no-publish``);
* the fix dry run of each pack's frame (``cases/dryrun/<pack>/frame.yaml``), kept per release in
  ``results/dryrun/<pack>/releases/``.

A release is lacking when the history would not use any of its runs (``collect_history`` and
``collect_frame_history`` decide, as ``obelize-bench history`` does): so the script resumes where an
interrupted one stopped, and a release whose run was not whole is run again. Then it writes each
history (``obelize-bench history --round N`` and ``--frame PACK``), which puts their blocks, figures
and pages in. Every command is printed before it runs, with how long it took after. Each run starts
from the checkout as it is, which should be a clean commit: the records name the harness commit.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from pytest_obelize_bench.dryrun.outcomes import pack_slug  # noqa: E402
from pytest_obelize_bench.dryrun.release_files import collect_frame_history  # noqa: E402
from pytest_obelize_bench.promotion.history_report import collect_history  # noqa: E402

RELEASES = ("0.1.0", "0.2.0", "0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0", "0.8.0")
PACKS = ("gemini/google-generativeai-to-google-genai", "openai/openai-0-to-1", "py-pdf/pypdf2-to-pypdf")


def _round_has(results: Path, cases: Path, number: int) -> set[str]:
    try:
        return {release.label for release in collect_history(results, cases, number).releases}
    except (OSError, ValueError):
        return set()


def _frame_has(results: Path, pack: str, cases: Path) -> set[str]:
    try:
        return {release.label for release in collect_frame_history(results, pack, cases.parent).releases}
    except (OSError, ValueError):
        return set()


def _run(argv: list[str], log: list[str]) -> int:
    print("$ " + shlex.join(argv), flush=True)
    started = time.monotonic()
    status = subprocess.call(argv, cwd=PROJECT)
    seconds = time.monotonic() - started
    log.append(f"{seconds:7.1f} s  exit {status}  {shlex.join(argv[3:6])}")
    print(f"  ... exit {status} after {seconds:.1f} s", flush=True)
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", nargs="+", default=list(RELEASES))
    parser.add_argument("--round", type=int, default=2, dest="number")
    parser.add_argument("--cases", type=Path, default=Path("cases/cases.yaml"))
    parser.add_argument("--packs", nargs="*", default=list(PACKS), help="the frames to run (none: the round only)")
    parser.add_argument("--no-round", action="store_true", help="the frames only")
    parser.add_argument("--exclude-newer", default="2026-12-01T00:00:00Z")
    parser.add_argument("--repo-cache", type=Path, default=None)
    parser.add_argument("--unreachable", type=Path, default=None, help="a pins.tsv naming the rows out of reach")
    parser.add_argument("--work", type=Path, default=Path.home() / ".cache" / "obelize-bench-history-work")
    parser.add_argument("-n", dest="workers", default="2")
    parser.add_argument("--dry", action="store_true", help="say what is lacking and run nothing")
    args = parser.parse_args(argv)
    results, cases = PROJECT / "results", PROJECT / args.cases
    python = str(Path(sys.executable))
    common = ["-p", "no:cacheprovider", "-n", args.workers, "--bench-interpreter=minor"]
    if args.repo_cache is not None:
        common.append(f"--bench-repo-cache={args.repo_cache.expanduser()}")
    if args.unreachable is not None:
        common.append(f"--bench-unreachable={args.unreachable.resolve()}")
    plans: list[tuple[str, list[str]]] = []
    if not args.no_round:
        have = _round_has(results, cases, args.number)
        for release in [r for r in args.releases if r not in have]:
            plans.append((f"round {args.number}, obelize {release}", [
                python, "-m", "pytest", f"--bench-round={args.number}", f"--bench-cases={args.cases}",
                "--bench-repeat=2", f"--exclude-newer={args.exclude_newer}", f"--obelize=obelize=={release}",
                "--bench-no-publish", "--bench-sandbox=bwrap",
                f"--bench-work={args.work.expanduser() / f'round-{args.number}-{release}'}", *common,
            ]))  # fmt: skip
    for pack in args.packs:
        have = _frame_has(results, pack, cases)
        slug = pack_slug(pack)
        for release in [r for r in args.releases if r not in have]:
            plans.append((f"dry run {pack}, obelize {release}", [
                python, "-m", "pytest", f"--bench-dryrun={pack}", f"--bench-frame=cases/dryrun/{slug}/frame.yaml",
                f"--obelize=obelize=={release}", f"--exclude-newer={args.exclude_newer}",
                f"--bench-work={args.work.expanduser() / f'dryrun-{slug}-{release}'}", *common,
            ]))  # fmt: skip
    for what, _ in plans:
        print(f"lacking: {what}")
    if not plans:
        print("nothing lacking: every release has a run each history uses")
    if args.dry:
        return 0
    log: list[str] = []
    started = time.monotonic()
    failed = [what for what, command in plans if _run(command, log) not in (0, 1)]
    bench = str(Path(sys.executable).with_name("obelize-bench"))
    if not args.no_round:
        _run([bench, "history", "--round", str(args.number), "--cases", str(args.cases)], log)
    for pack in args.packs:
        _run([bench, "history", "--frame", pack], log)
    print(f"\nall in {time.monotonic() - started:.0f} s on {os.cpu_count()} cores:")
    print("\n".join(log))
    for what in failed:
        print(f"did not finish: {what} (run the script again to resume)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
