"""``obelize-bench compare A B``: two rounds, runs or folders of records, read and compared.

Each side is a round number, a run id or a folder of records (``_side``); the comparison itself is
``report.compare``. The verdict is told at the promotion policy's alpha, with its power for the
minimum detectable difference (the policy's defaults when there is no readable policy).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from pytest_obelize_bench.casefile.cases import CaseFile, load_case_file
from pytest_obelize_bench.report.round_cases import RoundData

__all__ = ["compare_command"]


def _side(text: str, results: Path, case_file: CaseFile, round_number: int | None) -> tuple[str, RoundData]:
    """One side of ``compare``: a round number, a run id, or a folder of records."""
    from pytest_obelize_bench.records.published import read_published
    from pytest_obelize_bench.records.runs import read_run_records, runs_root
    from pytest_obelize_bench.report.round_cases import RoundData
    from pytest_obelize_bench.summary.roundfiles import load_round

    ids = [case.id for case in case_file.cases]
    if text.isdigit():
        return f"round {text}", load_round(results, case_file, int(text))
    path = Path(text)
    if not path.is_dir():
        rounds = (
            [round_number]
            if round_number is not None
            else sorted(
                int(p.name.split("-", 1)[1]) for p in results.glob("round-*") if p.name.split("-", 1)[1].isdigit()
            )
        )
        for number in rounds:
            candidate = runs_root(results, number) / text
            if (candidate / "run.json").is_file():
                return f"run {text}", RoundData(number, list(case_file.cases), read_run_records(candidate, ids).records)
        raise ValueError(f"{text} is neither a round number, a run id under {results}, nor a folder")
    number = round_number if round_number is not None else case_file.round
    if (path / "run.json").is_file():
        return str(path), RoundData(number, list(case_file.cases), read_run_records(path, ids).records)
    return str(path), RoundData(number, list(case_file.cases), read_published(path, ids).records)


def compare_command(args: argparse.Namespace, out: TextIO) -> int:
    from pytest_obelize_bench.report.compare import compare_rounds

    case_file = load_case_file(args.cases)
    try:
        (la, a), (lb, b) = (_side(x, args.results, case_file, args.round_number) for x in (args.first, args.second))
    except ValueError as exc:
        print(f"obelize-bench compare: {exc}", file=out)
        return 2
    for label, side in ((la, a), (lb, b)):
        if not side.records:
            print(f"obelize-bench compare: {label} has no records; nothing to compare", file=out)
            return 2
    alpha, power = _policy_alpha_power(args.cases)
    for line in compare_rounds(a, b, (la, lb), alpha=alpha, power=power):
        print(line, file=out)
    return 0


def _policy_alpha_power(cases: Path) -> tuple[float, float]:
    """The promotion policy's alpha and power (its defaults when there is no readable policy)."""
    from pytest_obelize_bench._util.caps import POLICY_BYTES
    from pytest_obelize_bench._util.safe_io import UntrustedFileError, read_untrusted
    from pytest_obelize_bench.promotion.policy import POLICY_FILE_NAME, Policy, PolicyError, load_policy

    path = Path(cases).parent / POLICY_FILE_NAME
    try:
        policy = load_policy(read_untrusted(path, POLICY_BYTES), str(path))[0]
    except (UntrustedFileError, PolicyError):
        policy = Policy()
    return policy.alpha, policy.power
