"""Whether a reviewer file and its round agree: one line per problem, nothing printed when they do.

Pure. The rules: every cause the round shows has a disposition, and every disposition a cause
the round shows; the class a disposition gives is one the round shows for it; ``misses`` is
exactly the round's missed rows and ``unexpected`` exactly its unexpected findings; each
``recorded`` reference has its disposition's form. ``reference_problems`` adds, from what an
obelize checkout holds, that each ADR exists and each gap is open.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from collections.abc import Set as AbstractSet

from pytest_obelize_bench.error_analysis.review import RECORDED_FORMS, RECORDED_TEXT, ReviewFile
from pytest_obelize_bench.error_analysis.states import Analysis

#: How many row positions a problem line names before it says "and N more".
_SHOWN = 3


def _rows_text(count: int, cases: AbstractSet[str]) -> str:
    names = sorted(cases)
    shown = ", ".join(names[:_SHOWN]) + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")
    return f"{count} row{'s' if count != 1 else ''} in {shown}" if names else f"{count} rows"


def check_review(review: ReviewFile, analysis: Analysis, source: str) -> list[str]:
    """Every way ``review`` (read from ``source``) disagrees with the round ``analysis`` describes."""
    problems: list[str] = []
    n = analysis.round
    if review.round != n:
        problems.append(f"{source}: round is {review.round}, but it is round {n}'s reviewer file")
    for case_id in analysis.unkeyed:
        problems.append(f"{source}: round {n} collected {case_id}, which has no row in the case file")

    for cause, seen in sorted(analysis.causes.items()):
        if cause not in review.causes:
            kinds = "/".join(sorted(seen.classes))
            what = _rows_text(seen.rows or seen.attributed or seen.findings, seen.cases)
            problems.append(f"{source}: cause {cause!r} ({kinds}, {what}) has no disposition")
    for cause, entry in sorted(review.causes.items()):
        seen_cause = analysis.causes.get(cause)
        if seen_cause is None:
            problems.append(f"{source}: causes.{cause}: has a disposition but no row of round {n} has this cause")
        elif entry.cause_class not in seen_cause.classes:
            shown = " or ".join(sorted(seen_cause.classes))
            problems.append(
                f"{source}: causes.{cause}.class: is {entry.cause_class}, but round {n} shows it as {shown}"
            )
        form = RECORDED_FORMS[entry.disposition]
        if not form.fullmatch(entry.recorded):
            problems.append(
                f"{source}: causes.{cause}.recorded: a {entry.disposition} is recorded as "
                f"{RECORDED_TEXT[entry.disposition]!r}, not {entry.recorded!r}"
            )

    missed = Counter((r.case, r.path, r.line, r.symbol) for r in analysis.states if r.state == "missed")
    listed = Counter((m.case, m.path, m.line, m.symbol) for m in review.misses)
    for case, path, line, symbol in sorted((missed - listed).elements()):
        problems.append(f"{source}: misses: round {n} missed {case}:{path}:{line}:{symbol}, which has no entry")
    for case, path, line, symbol in sorted((listed - missed).elements()):
        problems.append(f"{source}: misses: {case}:{path}:{line}:{symbol} is not a row round {n} missed")
    for index, miss in enumerate(review.misses):
        if not miss.cause.strip():
            problems.append(f"{source}: misses[{index}].cause: is empty")

    found = {finding.key for finding in analysis.unexpected}
    for key in sorted(found - set(review.unexpected)):
        problems.append(f"{source}: unexpected: {key} is a finding no key row claims, and it has no cause")
    for key in sorted(set(review.unexpected) - found):
        problems.append(f"{source}: unexpected.{key}: round {n} has no unclaimed finding there")
    return problems


def reference_problems(
    review: ReviewFile, source: str, adrs: AbstractSet[str], gaps: Mapping[int, bool], checkout: str
) -> list[str]:
    """Each ADR a limitation names must exist in ``checkout``, each gap a change names be open.

    ``adrs`` holds the ``ADR-NNN`` ids found there; ``gaps`` maps each numbered gap of the
    coverage list to whether it is still open.
    """
    problems = []
    for cause, entry in sorted(review.causes.items()):
        recorded = entry.recorded
        if not RECORDED_FORMS[entry.disposition].fullmatch(recorded):
            continue  # already reported by check_review
        if entry.disposition == "limitation":
            if recorded not in adrs:
                problems.append(f"{source}: causes.{cause}.recorded: {recorded} does not exist in {checkout}")
            continue
        number = int(recorded.split()[1])
        if number not in gaps:
            problems.append(f"{source}: causes.{cause}.recorded: {checkout} has no gap {number} in its coverage list")
        elif not gaps[number]:
            problems.append(f"{source}: causes.{cause}.recorded: gap {number} is closed in {checkout}")
    return problems
