"""``obelize-bench``: the same library as the plugin, for what is not a test run.

Each subcommand is a thin reader/printer around pure functions; exit status 0 means the
check holds, 1 that it does not, 2 that the input could not be read.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from pytest_obelize_bench.cases import CaseFileError, check_case_file, load_case_file

DEFAULT_CASES = Path("cases/cases.yaml")
DEFAULT_RESULTS = Path("results")


def _print_problems(problems: Sequence[str], out: TextIO) -> None:
    for line in problems:
        print(line, file=out)


def check_cases(path: Path, out: TextIO) -> int:
    """Print yes/NO for every rule of the protocol, then each problem; exit 1 on any NO."""
    from pytest_obelize_bench.rules import RULES

    case_file, problems = check_case_file(path)
    broken = {problem.rule for problem in problems}
    for rule, text in RULES.items():
        print(f"{'NO ' if rule in broken else 'yes'}  {text}", file=out)
    if case_file is not None:
        cases = [c for c in case_file.cases if not c.control]
        print(f"{path}: round {case_file.round}, {len(cases)} cases, {len(case_file.cases) - len(cases)} controls", file=out)
    _print_problems([problem.text for problem in problems], out)
    return 1 if problems else 0


def split_report(path: Path, out: TextIO) -> int:
    """Recompute the dev/holdout split from the rule and say where the file differs, and why."""
    from pytest_obelize_bench.split import SplitMember, compute_split, split_differences

    case_file = load_case_file(path)
    cases = [c for c in case_file.cases if not c.control]
    unknown = [c.id for c in cases if c.has_test_files is None]
    if unknown:
        print(f"{path}: has_test_files is missing for {', '.join(unknown)}; the rule needs it", file=out)
        return 2
    members = [SplitMember(c.id, c.full_name or "", c.owner or "", bool(c.has_test_files)) for c in cases]
    rule = compute_split(members)
    moves = {move.case: move.reason for move in case_file.split_moves}
    differences = split_differences(members, {c.id: c.split or "" for c in cases}, moves)
    for stratum in (True, False):
        ids = [m.id for m in members if m.testable is stratum]
        held = sum(rule[i] == "holdout" for i in ids)
        label = "with a Python test file" if stratum else "without one"
        print(f"stratum {label}: {len(ids)} cases, holdout {held} by the rule", file=out)
    for difference in differences:
        why = f"because: {difference.reason}" if difference.reason else "UNEXPLAINED (no split_moves entry)"
        print(f"{difference.id}: file says {difference.file_split}, the rule says {difference.rule_split}; {why}", file=out)
    if not differences:
        print("the file's split is the rule's split", file=out)
    return 1 if any(d.reason is None for d in differences) else 0


def ceiling_report(path: Path, out: TextIO) -> int:
    """What caps each case below verified_success, from its key alone, before the round runs."""
    from collections import Counter

    from pytest_obelize_bench.tiers import ceiling

    case_file = load_case_file(path)
    tally: Counter[str] = Counter()
    for case in case_file.cases:
        if case.control:
            continue
        cap = ceiling(case)
        tally[cap or "nothing: can reach verified_success"] += 1
        print(f"{case.id}  [{case.split}]  {'can reach' if cap is None else 'capped: ' + cap}", file=out)
    reachable = sum(1 for c in case_file.cases if not c.control and ceiling(c) is None)
    graded = sum(1 for c in case_file.cases if not c.control)
    print(f"{reachable} of {graded} cases can reach verified_success; " + "; ".join(f"{n} {why}" for why, n in sorted(tally.items())), file=out)
    return 0


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    parser = argparse.ArgumentParser(
        prog="obelize-bench",
        description="The obelize migration benchmark's commands for what is not a test run "
        "(a round itself is `pytest --bench-round=N`).",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("check-cases", help="check a case file against every rule of the protocol")
    p.add_argument("path", nargs="?", type=Path, default=DEFAULT_CASES)
    p = sub.add_parser("split", help="recompute the dev/holdout split and report where the file differs")
    p.add_argument("path", nargs="?", type=Path, default=DEFAULT_CASES)
    p = sub.add_parser("ceiling", help="what caps each case before the round runs")
    p.add_argument("path", nargs="?", type=Path, default=DEFAULT_CASES)
    p = sub.add_parser("summarize", help="rewrite (or --check) the round blocks of results/BENCHMARK_RESULTS.md")
    p.add_argument("--check", action="store_true", help="exit 1 when the document differs from a fresh render")
    p.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    p.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    p = sub.add_parser("regrade", help="re-grade a round from its stored artefacts and the current case file")
    p.add_argument("--round", type=int, required=True, dest="round_number")
    p.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    p.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    p.add_argument("--write", action="store_true", help="rewrite the records that changed")
    p = sub.add_parser("compare", help="paired comparison of verified_success between two rounds (exact McNemar)")
    p.add_argument("first", type=int)
    p.add_argument("second", type=int)
    p.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    p.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    p = sub.add_parser(
        "gate",
        help="the pre-registered promotion decision between an incumbent run and candidate runs "
        "(exit 0 promote, 1 reject, 3 insufficient evidence)",
    )
    p.add_argument("--policy", type=Path, default=Path("cases/promotion.yaml"), help="the policy (default: %(default)s)")
    p.add_argument("--incumbent", required=True, metavar="RUN", help="a run folder, or round-N:RUN_ID")
    p.add_argument("--candidate", required=True, action="append", metavar="RUN", help="a run folder, or round-N:RUN_ID (repeatable)")
    p.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    p.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    p = sub.add_parser("fixtures", help="run the offline fixtures pass; --update rewrites their expected.json")
    p.add_argument("--update", action="store_true")
    p.add_argument("--fixtures", type=Path, default=Path("cases/fixtures"))
    # error analysis (pytest_obelize_bench.errors_commands)
    from pytest_obelize_bench.errors_commands import add_errors_commands

    add_errors_commands(sub, DEFAULT_CASES, DEFAULT_RESULTS)

    args = parser.parse_args(argv)
    try:
        if args.command == "check-cases":
            return check_cases(args.path, out)
        if args.command == "split":
            return split_report(args.path, out)
        if args.command == "ceiling":
            return ceiling_report(args.path, out)
        if args.command == "summarize":
            from pytest_obelize_bench.summary import summarize

            return summarize(args.results, args.cases, check=args.check, out=out)
        if args.command == "regrade":
            from pytest_obelize_bench.regrade import regrade_round

            return regrade_round(args.results, args.cases, args.round_number, write=args.write, out=out)
        if args.command == "compare":
            from pytest_obelize_bench.summary import compare_rounds, load_round

            case_file = load_case_file(args.cases)
            lines = compare_rounds(
                load_round(args.results, case_file, args.first), load_round(args.results, case_file, args.second)
            )
            _print_problems(lines, out)
            return 0
        if args.command == "gate":
            from pytest_obelize_bench.gate import run_gate

            return run_gate(
                args.policy, args.incumbent, args.candidate, results_dir=args.results, cases_path=args.cases, out=out
            )
        if args.command == "fixtures":
            import pytest

            extra = ["--bench-update-expected"] if args.update else []
            return int(pytest.main(["--fixtures-only", f"--bench-fixtures={args.fixtures}", "-p", "no:cacheprovider", *extra]))
        if args.command == "errors":
            from pytest_obelize_bench.errors_commands import run_errors_command

            return run_errors_command(args, out)
    except CaseFileError as exc:
        _print_problems(exc.problems, out)
        return 2
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
