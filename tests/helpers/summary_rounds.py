"""A hand-built round whose pattern of twenty-five cases wins on twenty: the summary tests' shared input."""

from __future__ import annotations

from pytest_obelize_bench.report.round.case_entries import RoundData
from tests.helpers.handbuilt import make_case, make_record


def twenty_five_of_twenty() -> RoundData:
    """20 graded cases, each its own pattern: 12 dev (3 won) and 8 holdout (2 won); one control."""
    cases, records = [], {}
    for i in range(20):
        split = "dev" if i < 12 else "holdout"
        case_id = f"case{i:02d}"
        cases.append(make_case(case_id, split, (f"google.generativeai.symbol{i}",)))
        won = i in (0, 1, 2, 12, 13)
        records[case_id] = make_record(case_id, "verified_success" if won else "partial", split)
    cases.append(make_case("ctl", control=True))
    records["ctl"] = make_record("ctl", "unsupported", control=True, detected=0, patch_applied=False)
    return RoundData(round=3, cases=cases, records=records)


__all__ = ["twenty_five_of_twenty"]
