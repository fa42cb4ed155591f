"""``obelize-bench``: the same library as the plugin, for what is not a test run.

Each subcommand is a thin reader/printer around pure functions; exit status 0 means the
check holds, 1 that it does not, 2 that the input could not be read. What a subcommand needs is
imported inside it, for start-up time: ``obelize-bench --help`` loads no round, no chart library.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from pytest_obelize_bench import __version__
from pytest_obelize_bench.casefile.cases import (
    CaseFileError,
    check_case_file,
    load_case_file,
)

if TYPE_CHECKING:
    pass

DEFAULT_CASES = Path("cases/cases.yaml")
DEFAULT_RESULTS = Path("results")


def _print_problems(problems: Sequence[str], out: TextIO) -> None:
    for line in problems:
        print(line, file=out)


def check_cases(path: Path, out: TextIO) -> int:
    """Print yes/NO for every rule of the protocol, then each problem; exit 1 on any NO."""
    from pytest_obelize_bench.casefile.cases import UNREADABLE, Problem
    from pytest_obelize_bench.casefile.rules import RULES, control_set_problems

    case_file, problems = check_case_file(path)
    unreadable = [problem.text for problem in problems if problem.rule == UNREADABLE]
    if unreadable:  # no rule can be checked: one line, and the status of input that cannot be used
        print(f"obelize-bench check-cases: {unreadable[0]}", file=out)
        return 2
    if case_file is not None:
        found = control_set_problems(case_file.round, case_file.cases)
        problems = [*problems, *(Problem(rule, f"{path}: {text}") for rule, text in found)]
    broken = {problem.rule for problem in problems}
    for rule, text in RULES.items():
        print(f"{'NO ' if rule in broken else 'yes'}  {text}", file=out)
    if case_file is not None:
        cases = [c for c in case_file.cases if not c.control]
        print(
            f"{path}: round {case_file.round}, {len(cases)} cases, {len(case_file.cases) - len(cases)} controls",
            file=out,
        )
    _print_problems([problem.text for problem in problems], out)
    return 1 if problems else 0


def split_report(path: Path, out: TextIO) -> int:
    """Recompute the dev/holdout split from the rule and say where the file differs, and why."""
    from pytest_obelize_bench.casefile.split import SplitMember, compute_split, split_differences

    case_file = load_case_file(path)
    cases = [c for c in case_file.cases if not c.control]
    unknown = [c.id for c in cases if c.has_test_files is None]
    if unknown:
        print(f"{path}: has_test_files is missing for {', '.join(unknown)}; the rule needs it", file=out)
        return 2
    members = [SplitMember(c.id, c.full_name or "", c.owner or "", bool(c.has_test_files)) for c in cases]
    kept = {c.id: c.split or "" for c in cases if c.id in case_file.kept_sides}
    rule = compute_split(members, kept)
    moves = {move.case: move.reason for move in case_file.split_moves}
    differences = split_differences(members, {c.id: c.split or "" for c in cases}, moves, kept)
    if kept:
        print(f"sides kept from an earlier round: {len(kept)} cases; the rule assigns the others", file=out)
    for stratum in (True, False):
        ids = [m.id for m in members if m.testable is stratum]
        held = sum(rule[i] == "holdout" for i in ids)
        label = "with a Python test file" if stratum else "without one"
        print(f"stratum {label}: {len(ids)} cases, holdout {held} by the rule", file=out)
    for difference in differences:
        why = f"because: {difference.reason}" if difference.reason else "UNEXPLAINED (no split_moves entry)"
        print(
            f"{difference.id}: file says {difference.file_split}, the rule says {difference.rule_split}; {why}",
            file=out,
        )
    if not differences:
        print("the file's split is the rule's split", file=out)
    return 1 if any(d.reason is None for d in differences) else 0


def ceiling_report(path: Path, out: TextIO) -> int:
    """What caps each case below verified_success, from its key alone, before the round runs."""
    from collections import Counter

    from pytest_obelize_bench.grading.tiers import ceiling

    case_file = load_case_file(path)
    tally: Counter[str] = Counter()
    for case in case_file.cases:
        if case.control:
            continue
        cap = ceiling(case, reviewed=True)  # before it runs, its patch's review is still to come
        tally[cap or "nothing: can reach verified_success"] += 1
        print(f"{case.id}  [{case.split}]  {'can reach' if cap is None else 'capped: ' + cap}", file=out)
    reachable = sum(1 for c in case_file.cases if not c.control and ceiling(c, reviewed=True) is None)
    graded = sum(1 for c in case_file.cases if not c.control)
    print(
        f"{reachable} of {graded} cases can reach verified_success; "
        + "; ".join(f"{n} {why}" for why, n in sorted(tally.items())),
        file=out,
    )
    return 0


def _add_paths(p: argparse.ArgumentParser, *, from_run: bool = False) -> None:
    where = "the run's or round's own (recorded when it ran), else " if from_run else ""
    p.add_argument("--cases", type=Path, default=None, help=f"the case file (default: {where}{DEFAULT_CASES})")
    p.add_argument("--results", type=Path, default=None, help=f"the results folder (default: {DEFAULT_RESULTS})")


def _run_command(args: argparse.Namespace, results: Path, out: TextIO) -> int:
    """``regrade``, ``history``, ``compare``, ``runs``, ``publish`` and ``show`` (``summary.runcommands``)."""
    from pytest_obelize_bench.report import runcommands

    given, default = args.cases, DEFAULT_CASES
    if args.command == "regrade":
        return runcommands.regrade(results, args.round_number, given, default, write=args.write, out=out)
    if args.command == "history" and args.frame is not None:
        return runcommands.frame_history(results, args.frame, given or DEFAULT_CASES, args.find, out)
    if args.command == "history":
        return runcommands.history(results, args.round_number, given or DEFAULT_CASES, args.find, out)
    if args.command == "compare":
        return runcommands.compare(results, args.first, args.second, given, default, args.round_number, out)
    if args.command == "runs":
        return runcommands.list_runs_report(results, given, default, args.round_number, out)
    if args.command == "publish":
        return runcommands.publish(
            results,
            args.run,
            args.round_number,
            given,
            default,
            with_infra_errors=args.with_infra_errors,
            results_given=args.results is not None,
            wait=args.wait,
            out=out,
        )
    return runcommands.show(
        results,
        args.case,
        run_name=args.run,
        round_number=args.round_number,
        given=given,
        default=default,
        work=args.work,
        as_json=args.json,
        out=out,
    )


def _incumbent_case_file(results: Path, incumbent: str, out: TextIO) -> Path:
    """The case file the incumbent run ran from (for rows per case), else the project's."""
    from pytest_obelize_bench.records.runref import choose_case_file, find_run

    try:
        run = find_run(results, incumbent)
    except ValueError:
        return DEFAULT_CASES
    path, lines = choose_case_file(results, run.manifest.case_file, None, DEFAULT_CASES, f"run {run.run_id}")
    for line in lines:
        print(line, file=out)
    return path


def build_parser() -> argparse.ArgumentParser:
    """The console script's arguments; every one of them carries its explanation."""
    parser = argparse.ArgumentParser(
        prog="obelize-bench",
        description="The obelize migration benchmark's commands for what is not a test run "
        "(a round itself is `pytest --bench-round=N`).",
    )
    parser.add_argument("--version", action="version", version=f"obelize-bench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("check-cases", help="check a case file against every rule of the protocol")
    p.add_argument("path", nargs="?", type=Path, default=DEFAULT_CASES, help="the case file (default: %(default)s)")
    p = sub.add_parser("split", help="recompute the dev/holdout split and report where the file differs")
    p.add_argument("path", nargs="?", type=Path, default=DEFAULT_CASES, help="the case file (default: %(default)s)")
    p = sub.add_parser("ceiling", help="what caps each case before the round runs")
    p.add_argument("path", nargs="?", type=Path, default=DEFAULT_CASES, help="the case file (default: %(default)s)")
    p = sub.add_parser("summarize", help="rewrite (or --check) the round blocks of results/BENCHMARK_RESULTS.md")
    p.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 when the document differs from a fresh render, a round folder holds an "
        "unknown or refused file or a stored tier tier() disagrees with, "
        "or the published records are not one complete run",
    )
    _add_paths(p)
    p = sub.add_parser("regrade", help="re-grade a round from its stored artefacts and the current case file")
    p.add_argument("--round", type=int, required=True, dest="round_number", help="the round to re-grade")
    _add_paths(p, from_run=True)
    p.add_argument("--write", action="store_true", help="rewrite the records that changed")
    p = sub.add_parser(
        "history", help="the history of obelize releases over a round's runs, case by case, or over a pack's frame"
    )
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--round", type=int, dest="round_number", help="the round whose runs to read")
    which.add_argument("--frame", metavar="PACK", help="the pack whose releases' dry runs to read (its frame)")
    p.add_argument(
        "--find", metavar="CASE", help="the first release at which CASE's (with --frame, a repository's) result changed"
    )
    _add_paths(p)
    p = sub.add_parser(
        "compare", help="two rounds, runs or folders of records: paired verified_success (exact McNemar) and tier moves"
    )
    p.add_argument("first", help="a round number, a run (its id, round-N:RUN or its folder), or a folder of records")
    p.add_argument("second", help="the same, for the other side")
    p.add_argument(
        "--round", type=int, dest="round_number", help="the round a run id or folder belongs to (default: searched)"
    )
    _add_paths(p, from_run=True)
    p = sub.add_parser(
        "runs", help="list the runs of a round: id, tool, complete or not, tier counts, which is published"
    )
    p.add_argument("--round", type=int, dest="round_number", help="only this round (default: every round)")
    _add_paths(p, from_run=True)
    p = sub.add_parser(
        "publish", help="publish an earlier complete run as its round (records, summary.json, the block)"
    )
    p.add_argument("--round", type=int, dest="round_number", help="the round the run belongs to (default: searched)")
    p.add_argument(
        "--run", required=True, help="the run: its id, round-N:RUN, or its folder (see `obelize-bench runs`)"
    )
    p.add_argument(
        "--with-infra-errors",
        action="store_true",
        help="publish even though some cases errored for infrastructure reasons (the document says how many)",
    )
    p.add_argument(
        "--wait",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="how long to wait for another publisher of the round before giving up (default: %(default)s)",
    )
    _add_paths(p, from_run=True)
    p = sub.add_parser("show", help="explain one case's record: tier and why, steps, logs, unmigrated rows, patch")
    p.add_argument("case", help="the case id")
    p.add_argument("--round", type=int, dest="round_number", help="the round (default: the case file's)")
    p.add_argument("--run", help="a run (its id, round-N:RUN or its folder): its record instead of the published one")
    p.add_argument(
        "--work",
        help="the work root the round ran under, for the logs "
        "(default: the run's own, else <system temp>/obelize-bench-<uid>)",
    )
    p.add_argument("--json", action="store_true", help="print the same as JSON")
    _add_paths(p, from_run=True)
    p = sub.add_parser("review", help="print the patch a run's record graded and a review entry keyed to it")
    p.add_argument("case", help="the case id")
    p.add_argument("--run", required=True, help="the run whose record was graded")
    p.add_argument("--round", type=int, dest="round_number", help="the round (default: the case file's)")
    p.add_argument("--attempt", type=int, default=1, help="the attempt under --bench-repeat (default: 1)")
    p.add_argument("--work", help="the work root the run left its logs under (default: the system temp one)")
    _add_paths(p)
    p = sub.add_parser(
        "gate",
        help="the pre-registered promotion decision between an incumbent run and candidate runs "
        "(exit 0 promote, 1 reject, 3 insufficient evidence)",
    )
    p.add_argument(
        "--policy", type=Path, default=Path("cases/promotion.yaml"), help="the policy (default: %(default)s)"
    )
    p.add_argument("--incumbent", required=True, metavar="RUN", help="a run: its id, round-N:RUN, or its folder")
    p.add_argument(
        "--candidate",
        required=True,
        action="append",
        metavar="RUN",
        help="a run: its id, round-N:RUN, or its folder (repeatable)",
    )
    _add_paths(p, from_run=True)
    p = sub.add_parser("fixtures", help="run the offline fixtures pass; --update rewrites their expected.json")
    p.add_argument(
        "--update",
        action="store_true",
        help="rewrite each expected.json from this run (only when obelize changed on purpose)",
    )
    p.add_argument(
        "--fixtures", type=Path, default=Path("cases/fixtures"), help="the fixtures folder (default: %(default)s)"
    )
    # error analysis, the comparison's review check and the generated reference pages: each runs its handler
    from pytest_obelize_bench.comparison.block_text import add_comparison_commands
    from pytest_obelize_bench.error_analysis.commands import add_errors_commands, run_errors_command
    from pytest_obelize_bench.session.reference_docs import add_docs_command

    add_errors_commands(sub, DEFAULT_CASES, DEFAULT_RESULTS)
    sub.choices["errors"].set_defaults(handler=run_errors_command)
    add_comparison_commands(sub, DEFAULT_CASES, DEFAULT_RESULTS)
    add_docs_command(sub)
    return parser


#: The commands that read the project's case file or results folder by default.
PROJECT_COMMANDS = frozenset(
    {"summarize", "regrade", "compare", "runs", "publish", "show", "review", "gate", "errors", "comparison", "history"}
)


def outside_project(args: argparse.Namespace) -> str | None:
    """Why a command that reads the project by default cannot find it from here; None when it can."""
    if args.command not in PROJECT_COMMANDS or getattr(args, "cases", None) or getattr(args, "results", None):
        return None
    if DEFAULT_CASES.exists() or DEFAULT_RESULTS.exists():
        return None
    return (
        f"obelize-bench {args.command}: no {DEFAULT_CASES} and no {DEFAULT_RESULTS}/ in {Path.cwd()}: run it "
        "from the project root (the folder that holds cases/ and results/), or pass --cases and --results"
    )


def _results_case_file(results: Path, out: TextIO) -> Path | None:
    """The case file a results folder's newest published round was published from, when it names one
    and it is on disk: ``--results DIR`` alone then renders DIR with its own keys, not the default."""
    from pytest_obelize_bench.records.runref import published_case_file, round_numbers

    if results == DEFAULT_RESULTS:
        return None
    for number in sorted(round_numbers(results), reverse=True):
        ref = published_case_file(results, number)
        path = None if ref is None else ref.resolve(results)
        if path is not None and path.is_file():
            print(f"case file: {path} (round {number} of {results} was published from it)", file=out)
            return path
    return None


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    parser = build_parser()
    args = parser.parse_args(argv)
    results = getattr(args, "results", None) or DEFAULT_RESULTS
    elsewhere = outside_project(args)
    if elsewhere is not None:
        print(elsewhere, file=out)
        return 2
    try:
        if args.command == "check-cases":
            return check_cases(args.path, out)
        if args.command == "split":
            return split_report(args.path, out)
        if args.command == "ceiling":
            return ceiling_report(args.path, out)
        if args.command == "summarize":
            from pytest_obelize_bench.report.summarize import summarize

            cases = args.cases or _results_case_file(results, out) or DEFAULT_CASES
            return summarize(results, cases, check=args.check, out=out)
        if args.command in ("regrade", "compare", "runs", "publish", "show", "history"):
            return _run_command(args, results, out)
        if args.command == "review":
            from pytest_obelize_bench.report.patch_review import review_command

            args.cases, args.results = args.cases or DEFAULT_CASES, results
            return review_command(args, out)
        if args.command == "gate":
            from pytest_obelize_bench.promotion.gate import run_gate

            cases = args.cases or _incumbent_case_file(results, args.incumbent, out)
            return run_gate(args.policy, args.incumbent, args.candidate, results_dir=results, cases_path=cases, out=out)
        if args.command == "fixtures":
            import pytest

            extra = ["--bench-update-expected"] if args.update else []
            return int(
                pytest.main(["--fixtures-only", f"--bench-fixtures={args.fixtures}", "-p", "no:cacheprovider", *extra])
            )
        if getattr(args, "handler", None) is not None:
            if args.command == "errors" and getattr(args, "run", None):  # any naming of a run, as everywhere
                from pytest_obelize_bench.records.runref import find_run

                with contextlib.suppress(ValueError):  # a bare id is also a folder name under the round
                    args.run = find_run(results, args.run, args.round_number).run_id
            return int(args.handler(args, out))
    except CaseFileError as exc:
        _print_problems(exc.problems, out)
        return 2
    except ValueError as exc:
        print(f"obelize-bench {args.command}: {str(exc).splitlines()[0]}", file=out)
        return 2
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
