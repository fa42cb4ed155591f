"""``obelize-bench``: the same library as the plugin, for what is not a test run.

Each subcommand is a thin reader/printer around pure functions; exit status 0 means the
check holds, 1 that it does not, 2 that the input could not be read.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
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
    from pytest_obelize_bench.casefile.cases import Problem
    from pytest_obelize_bench.casefile.rules import RULES, control_set_problems

    case_file, problems = check_case_file(path)
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
        cap = ceiling(case)
        tally[cap or "nothing: can reach verified_success"] += 1
        print(f"{case.id}  [{case.split}]  {'can reach' if cap is None else 'capped: ' + cap}", file=out)
    reachable = sum(1 for c in case_file.cases if not c.control and ceiling(c) is None)
    graded = sum(1 for c in case_file.cases if not c.control)
    print(
        f"{reachable} of {graded} cases can reach verified_success; "
        + "; ".join(f"{n} {why}" for why, n in sorted(tally.items())),
        file=out,
    )
    return 0


def list_runs_report(results: Path, cases: Path, round_number: int | None, out: TextIO) -> int:
    """Every run of a round (or of every round): id, tool, complete or not, tier counts."""
    from collections import Counter

    from pytest_obelize_bench.grading.record import TIERS, RecordError
    from pytest_obelize_bench.records.publication_note import expected_cases, read_publication
    from pytest_obelize_bench.records.runs import (
        incomplete_reasons,
        list_runs,
        read_run_records,
    )

    case_file = load_case_file(cases)
    ids = [case.id for case in case_file.cases]
    rounds = (
        [round_number]
        if round_number is not None
        else sorted(
            int(p.name.split("-", 1)[1]) for p in Path(results).glob("round-*") if p.name.split("-", 1)[1].isdigit()
        )
    )
    shown = 0
    for number in rounds:
        try:
            note = read_publication(Path(results) / f"round-{number}")
        except RecordError:
            note = None
        for folder, manifest, problem in list_runs(results, number):
            shown += 1
            if manifest is None:
                print(f"round {number}  {folder.name}  unreadable: {problem}", file=out)
                continue
            found = read_run_records(folder, ids)
            if manifest.kind == "imported":
                counts: Counter[str] = Counter()
                for case in manifest.cases_recorded:
                    record = _published_record(Path(results), number, case)
                    if record is not None:
                        counts[record] += 1
                state = "imported"
            else:
                counts = Counter(record.tier for record in found.records.values())
                expected = expected_cases(case_file, number) if number == case_file.round else manifest.cases_expected
                reasons = incomplete_reasons(manifest, found.records, expected)
                state = "complete" if not reasons else "partial: " + "; ".join(reasons)
            published = "  PUBLISHED" if note is not None and note.run == manifest.run else ""
            tools = ", ".join(manifest.tools_recorded) or "--"
            tiers = ", ".join(f"{tier} {counts[tier]}" for tier in TIERS if counts[tier])
            print(f"round {number}  {manifest.run}  {tools}  {state}  [{tiers or 'no records'}]{published}", file=out)
    if not shown:
        print(f"no runs under {results}", file=out)
    return 0


def _published_record(results: Path, number: int, case: str) -> str | None:
    from pytest_obelize_bench.records.published import read_published

    found = read_published(results / f"round-{number}", [case])
    record = found.records.get(case)
    return None if record is None else record.tier


def show(args: argparse.Namespace, out: TextIO) -> int:
    from pytest_obelize_bench.grading.graded_facts import artefacts_from_json
    from pytest_obelize_bench.grading.record import RecordError
    from pytest_obelize_bench.isolation.workspace import default_work_root
    from pytest_obelize_bench.records.published import read_case_record
    from pytest_obelize_bench.records.runs import list_runs, run_folder
    from pytest_obelize_bench.report.show import explain_case, print_explanation

    case_file = load_case_file(args.cases)
    number = args.round_number if args.round_number is not None else case_file.round
    round_folder = Path(args.results) / f"round-{number}"
    case_id = args.case
    if args.run:
        folder = run_folder(args.results, number, args.run)
        source = f"run {args.run} of round {number}"
    elif (round_folder / f"{case_id}.json").exists():
        folder, source = round_folder, f"published round {number}"
    else:
        with_case = [
            f for f, m, _ in list_runs(args.results, number) if m is not None and (f / f"{case_id}.json").is_file()
        ]
        if not with_case:
            print(f"obelize-bench show: no record of {case_id} in round {number} (published or in a run)", file=out)
            return 2
        folder, source = with_case[-1], f"run {with_case[-1].name} of round {number} (not published)"
    try:
        record = read_case_record(folder / f"{case_id}.json", case_id)
    except RecordError as exc:
        print(f"obelize-bench show: {str(exc).splitlines()[0]}", file=out)
        return 2
    artefacts = None
    facts = folder / "artefacts" / f"{case_id}.json"
    if facts.is_file() and not facts.is_symlink():
        try:
            from pytest_obelize_bench.records.published import read_bounded_text

            artefacts = artefacts_from_json(read_bounded_text(facts, 5 << 20), str(facts))
        except Exception as exc:
            print(f"obelize-bench show: {facts}: {exc}", file=out)
    work = Path(args.work).expanduser() if args.work else default_work_root()
    logs = work / f"round-{number}" / f"{case_id}.logs"
    data = explain_case(record, case_file.by_id().get(case_id), artefacts, source=source, logs=logs)
    print_explanation(data, out, as_json=args.json)
    return 0


def _add_paths(p: argparse.ArgumentParser, *, results: bool = True) -> None:
    p.add_argument("--cases", type=Path, default=DEFAULT_CASES, help="the case file (default: %(default)s)")
    if results:
        p.add_argument(
            "--results", type=Path, default=DEFAULT_RESULTS, help="the results folder (default: %(default)s)"
        )


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
    _add_paths(p)
    p.add_argument("--write", action="store_true", help="rewrite the records that changed")
    p = sub.add_parser(
        "compare", help="two rounds, runs or folders of records: paired verified_success (exact McNemar) and tier moves"
    )
    p.add_argument("first", help="a round number, a run id, or a folder of records")
    p.add_argument("second", help="the same, for the other side")
    p.add_argument(
        "--round", type=int, dest="round_number", help="the round a run id or folder belongs to (default: searched)"
    )
    _add_paths(p)
    p = sub.add_parser(
        "runs", help="list the runs of a round: id, tool, complete or not, tier counts, which is published"
    )
    p.add_argument("--round", type=int, dest="round_number", help="only this round (default: every round)")
    _add_paths(p)
    p = sub.add_parser(
        "publish", help="publish an earlier complete run as its round (records, summary.json, the block)"
    )
    p.add_argument("--round", type=int, required=True, dest="round_number", help="the round the run belongs to")
    p.add_argument("--run", required=True, help="the run id (see `obelize-bench runs`)")
    p.add_argument(
        "--with-infra-errors",
        action="store_true",
        help="publish even though some cases errored for infrastructure reasons (the document says how many)",
    )
    _add_paths(p)
    p = sub.add_parser("show", help="explain one case's record: tier and why, steps, logs, unmigrated rows, patch")
    p.add_argument("case", help="the case id")
    p.add_argument("--round", type=int, dest="round_number", help="the round (default: the case file's)")
    p.add_argument("--run", help="a run id: show that run's record instead of the published one")
    p.add_argument(
        "--work", help="the work root the round ran under, for the logs (default: <system temp>/obelize-bench-<uid>)"
    )
    p.add_argument("--json", action="store_true", help="print the same as JSON")
    _add_paths(p)
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
    p.add_argument("--incumbent", required=True, metavar="RUN", help="a run folder, or round-N:RUN_ID")
    p.add_argument(
        "--candidate",
        required=True,
        action="append",
        metavar="RUN",
        help="a run folder, or round-N:RUN_ID (repeatable)",
    )
    _add_paths(p)
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
    from pytest_obelize_bench.error_analysis.commands import add_errors_commands, run_errors_command
    from pytest_obelize_bench.measure.comparison_block import add_comparison_commands
    from pytest_obelize_bench.session.reference_docs import add_docs_command

    add_errors_commands(sub, DEFAULT_CASES, DEFAULT_RESULTS)
    sub.choices["errors"].set_defaults(handler=run_errors_command)
    add_comparison_commands(sub, DEFAULT_CASES, DEFAULT_RESULTS)
    add_docs_command(sub)
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "check-cases":
            return check_cases(args.path, out)
        if args.command == "split":
            return split_report(args.path, out)
        if args.command == "ceiling":
            return ceiling_report(args.path, out)
        if args.command == "summarize":
            from pytest_obelize_bench.summary.roundfiles import summarize

            return summarize(args.results, args.cases, check=args.check, out=out)
        if args.command == "regrade":
            from pytest_obelize_bench.records.regrade import regrade_round

            return regrade_round(args.results, args.cases, args.round_number, write=args.write, out=out)
        from pytest_obelize_bench.report.patch_review import review_command
        from pytest_obelize_bench.summary.compare_command import compare_command

        simple: dict[str, Callable[[argparse.Namespace, TextIO], int]] = {
            "compare": compare_command,
            "show": show,
            "review": review_command,
        }
        if args.command in simple:
            return simple[args.command](args, out)
        if args.command == "runs":
            return list_runs_report(args.results, args.cases, args.round_number, out)
        if args.command == "publish":
            from pytest_obelize_bench.summary.roundfiles import publish_round

            outcome = publish_round(
                args.results,
                load_case_file(args.cases),
                args.round_number,
                args.run,
                allow_infrastructure_errors=args.with_infra_errors,
            )
            _print_problems(outcome.lines, out)
            return 0 if outcome.published else 1
        if args.command == "gate":
            from pytest_obelize_bench.promotion.gate import run_gate

            return run_gate(
                args.policy, args.incumbent, args.candidate, results_dir=args.results, cases_path=args.cases, out=out
            )
        if args.command == "fixtures":
            import pytest

            extra = ["--bench-update-expected"] if args.update else []
            return int(
                pytest.main(["--fixtures-only", f"--bench-fixtures={args.fixtures}", "-p", "no:cacheprovider", *extra])
            )
        if getattr(args, "handler", None) is not None:
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
