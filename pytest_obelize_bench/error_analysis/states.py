"""Row states and levers: what a round did with each key row, and what lifting one cause buys.

Pure functions over a round's key rows and its collected file.

* **States.** A key row (call site of any kind, or manifest pin) is ``withheld`` when the run
  refused it with a bail of its own, ``derived`` when it was refused only because its file
  (F-1, ``file_not_fully_migrated``) or its repository (F-2, ``repo_not_fully_migrated``) was
  not fully migrated, ``migrated`` when nothing was refused at its (path, line, symbol) and an
  applied edit landed on its line, and ``missed`` when the run never reported it at all. A
  derived row is attributed to the bails that held its file (its ``caused_by``) or, for a pin,
  to every bail still holding a file of the repository.
* **Levers.** The round recomputed with a set of causes lifted. A file migrates when every bail
  that holds it is lifted; the repository's pin when every file migrates; a withheld row when
  its bail is lifted and its file migrates. With nothing lifted this is the round's migrated
  count; with every cause lifted it falls short by exactly the missed rows, which no lift can
  reach. A cause's lever is what lifting it alone adds. Levers are upper bounds (a rule stops
  at its first failed check, so a second refusal behind the recorded one is not in the record)
  and they do not add up (two causes in one file are worth nothing each and both rows together).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pytest_obelize_bench.casefile.cases import ACTIONABLE_KINDS, Case
from pytest_obelize_bench.error_analysis.collected import (
    CollectedCase,
    CollectedRound,
    CollectedWithheld,
)
from pytest_obelize_bench.grading.grade import expected_rows, key_rows

FILE_ATOMICITY = "file_not_fully_migrated"
REPO_ATOMICITY = "repo_not_fully_migrated"
DERIVED_BAILS = frozenset({FILE_ATOMICITY, REPO_ATOMICITY})
STATES: tuple[str, ...] = ("migrated", "withheld", "derived", "missed")

State = Literal["migrated", "withheld", "derived", "missed"]
KeyRow = tuple[str, int, str]
ActionableRow = tuple[str, int, str, str]
MissKey = tuple[str, str, int, str]


@dataclass(frozen=True)
class RoundKeys:
    """A round's key: per graded case its rows (path, line, symbol); per case and control its
    actionable call sites (none for a control, so every actionable finding there is unexpected)."""

    rows: dict[str, list[KeyRow]]
    actionable: dict[str, Counter[ActionableRow]]


def round_keys(cases: Iterable[Case]) -> RoundKeys:
    """The key rows of the graded cases (negative controls have none)."""
    ordered = sorted(cases, key=lambda case: case.id)
    return RoundKeys(
        rows={case.id: expected_rows(case) for case in ordered if not case.control},
        actionable={case.id: Counter() if case.control else key_rows(case) for case in ordered},
    )


@dataclass(frozen=True)
class RowState:
    case: str
    path: str
    line: int
    symbol: str
    state: State
    #: The row's own bail (withheld, derived), the review's cause for a miss, or None.
    cause: str | None
    #: For a derived row, the bails that kept its file or repository back.
    attributed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Unexpected:
    """An actionable finding no key row claims (the multiset excess over the key)."""

    case: str
    path: str
    line: int
    kind: str
    symbol: str

    @property
    def key(self) -> str:
        return f"{self.case}:{self.path}:{self.line}"


# -- the atomicity model of one case --------------------------------------------------------------


@dataclass(frozen=True)
class _Holds:
    """What holds each file of one case back, and what holds its pins."""

    files: dict[str, frozenset[str]]
    repository: frozenset[str]


def _holds(case: CollectedCase) -> _Holds:
    files: dict[str, set[str]] = {}
    for row in case.withheld:
        held = files.setdefault(row.path, set())
        if row.bail not in DERIVED_BAILS:
            held.add(row.bail)
        elif row.bail == FILE_ATOMICITY:
            held.update(code for code in row.caused_by or () if code not in DERIVED_BAILS)
    for row in case.withheld:
        # A file held only by atomicity whose cause the run did not name is held by atomicity
        # itself, so that nothing lifted still reproduces the round.
        if row.bail == FILE_ATOMICITY and not files[row.path]:
            files[row.path].add(FILE_ATOMICITY)
    repository = set().union(*files.values()) if files else set()
    if not repository and any(row.bail == REPO_ATOMICITY for row in case.withheld):
        repository.add(REPO_ATOMICITY)
    return _Holds({path: frozenset(held) for path, held in files.items()}, frozenset(repository))


def _own_withheld(case: CollectedCase) -> dict[KeyRow, CollectedWithheld]:
    """The withheld row at each (path, line, symbol); a bail of its own wins over atomicity."""
    rows: dict[KeyRow, CollectedWithheld] = {}
    for row in case.withheld:
        key = (row.path, row.line, row.symbol or "")
        if key not in rows or (rows[key].bail in DERIVED_BAILS and row.bail not in DERIVED_BAILS):
            rows[key] = row
    return rows


def case_states(
    case_id: str, rows: Sequence[KeyRow], case: CollectedCase, misses: Mapping[MissKey, str]
) -> list[RowState]:
    withheld = _own_withheld(case)
    applied = {(path, line) for path, line in case.applied}
    holds = _holds(case)
    states = []
    for path, line, symbol in rows:
        row = withheld.get((path, line, symbol))
        if row is None:
            if (path, line) in applied:
                states.append(RowState(case_id, path, line, symbol, "migrated", None))
            else:
                states.append(
                    RowState(case_id, path, line, symbol, "missed", misses.get((case_id, path, line, symbol)))
                )
        elif row.bail == FILE_ATOMICITY:
            states.append(RowState(case_id, path, line, symbol, "derived", row.bail, tuple(sorted(holds.files[path]))))
        elif row.bail == REPO_ATOMICITY:
            states.append(RowState(case_id, path, line, symbol, "derived", row.bail, tuple(sorted(holds.repository))))
        else:
            states.append(RowState(case_id, path, line, symbol, "withheld", row.bail))
    return states


def case_migrated(rows: Sequence[KeyRow], case: CollectedCase, lifted: frozenset[str]) -> int:
    """How many of the case's key rows migrate once the causes in ``lifted`` are lifted."""
    withheld = _own_withheld(case)
    applied = {(path, line) for path, line in case.applied}
    holds = _holds(case)

    def file_migrates(path: str) -> bool:
        return holds.files.get(path, frozenset()) <= lifted

    repository_migrates = holds.repository <= lifted
    count = 0
    for path, line, symbol in rows:
        row = withheld.get((path, line, symbol))
        if row is None:
            count += (path, line) in applied
        elif row.bail == REPO_ATOMICITY:
            count += repository_migrates
        else:
            count += file_migrates(path) and (row.bail == FILE_ATOMICITY or row.bail in lifted)
    return count


# -- the round --------------------------------------------------------------------------------


def collected_ids(keys: RoundKeys, collected: CollectedRound) -> list[str]:
    """The graded cases the round collected (a case that errored before obelize ran has no entry)."""
    return [case_id for case_id in sorted(keys.rows) if case_id in collected.cases]


def row_states(keys: RoundKeys, collected: CollectedRound, misses: Mapping[MissKey, str]) -> list[RowState]:
    states: list[RowState] = []
    for case_id in collected_ids(keys, collected):
        states.extend(case_states(case_id, keys.rows[case_id], collected.cases[case_id], misses))
    return states


def migrated(keys: RoundKeys, collected: CollectedRound, lifted: Iterable[str] = ()) -> int:
    frozen = frozenset(lifted)
    return sum(case_migrated(keys.rows[i], collected.cases[i], frozen) for i in collected_ids(keys, collected))


def bails_of(collected: CollectedRound) -> frozenset[str]:
    """Every bail any withheld row of the round carries or names: what can be lifted."""
    codes: set[str] = set()
    for case in collected.cases.values():
        for row in case.withheld:
            codes.add(row.bail)
            codes.update(row.caused_by or ())
    return frozenset(codes)


def levers(keys: RoundKeys, collected: CollectedRound, causes: Iterable[str]) -> dict[str, int]:
    """Each cause's lever: rows that would migrate with it alone lifted, beyond the round's own."""
    base = migrated(keys, collected)
    return {cause: migrated(keys, collected, {cause}) - base for cause in sorted(set(causes))}


def unexpected_findings(keys: RoundKeys, collected: CollectedRound) -> list[Unexpected]:
    """Actionable findings beyond the key, as a multiset: the round's false positives."""
    found: list[Unexpected] = []
    for case_id in sorted(set(keys.actionable) & set(collected.cases)):
        rows: Counter[ActionableRow] = Counter(
            (f.path, f.line, f.kind, f.symbol or "")
            for f in collected.cases[case_id].findings
            if f.kind in ACTIONABLE_KINDS
        )
        for (path, line, kind, symbol), count in sorted((rows - keys.actionable[case_id]).items()):
            found.extend(Unexpected(case_id, path, line, kind, symbol) for _ in range(count))
    return found


# -- the causes the round shows ------------------------------------------------------------------


@dataclass
class ObservedCause:
    """A cause as the round shows it: under which classes, on how many rows, in which cases."""

    classes: set[str] = field(default_factory=set)
    rows: int = 0
    attributed: int = 0
    findings: int = 0
    cases: set[str] = field(default_factory=set)


def observed_causes(
    states: Sequence[RowState], unexpected: Sequence[Unexpected], unexpected_causes: Mapping[str, str]
) -> dict[str, ObservedCause]:
    """Every cause a key row or an unexpected finding of the round has.

    A withheld or derived row's cause is its bail; a missed row's is the review's (a miss the
    review gives no cause has none); an unexpected finding's is the review's, by its key.
    ``attributed`` counts the derived rows a bail kept back through F-1 or F-2.
    """
    seen: dict[str, ObservedCause] = {}
    for row in states:
        if row.state != "migrated" and row.cause is not None:
            entry = seen.setdefault(row.cause, ObservedCause())
            entry.classes.add(row.state)
            entry.rows += 1
            entry.cases.add(row.case)
        for code in row.attributed:
            seen.setdefault(code, ObservedCause()).attributed += 1
    for finding in unexpected:
        cause = unexpected_causes.get(finding.key)
        if cause is not None:
            entry = seen.setdefault(cause, ObservedCause())
            entry.classes.add("unexpected")
            entry.findings += 1
            entry.cases.add(finding.case)
    # A code only ever named in caused_by still holds rows back: it is the withheld class.
    for entry in seen.values():
        if not entry.classes:
            entry.classes.add("withheld")
    return seen


# -- everything at once ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Analysis:
    """A round's error analysis before any rendering: the figures the block and the check read."""

    round: int
    states: list[RowState]
    unexpected: list[Unexpected]
    causes: dict[str, ObservedCause]
    levers: dict[str, int]
    #: Rows migrated with nothing lifted, and with every bail of the round lifted.
    migrated_none: int
    migrated_all: int
    #: Graded cases with no collected entry, and collected cases the case file does not know.
    uncollected: list[str]
    unkeyed: list[str]

    @property
    def counts(self) -> dict[str, int]:
        tally: Counter[str] = Counter(str(row.state) for row in self.states)
        return {state: tally[state] for state in STATES}

    def case_counts(self) -> dict[str, dict[str, int]]:
        per: dict[str, Counter[str]] = {}
        for row in self.states:
            per.setdefault(row.case, Counter())[str(row.state)] += 1
        return {case: {state: tally[state] for state in STATES} for case, tally in sorted(per.items())}


def analyse(
    number: int,
    cases: Iterable[Case],
    collected: CollectedRound,
    misses: Mapping[MissKey, str],
    unexpected_causes: Mapping[str, str],
) -> Analysis:
    keys = round_keys(cases)
    states = row_states(keys, collected, misses)
    unexpected = unexpected_findings(keys, collected)
    causes = observed_causes(states, unexpected, unexpected_causes)
    liftable = bails_of(collected)
    return Analysis(
        round=number,
        states=states,
        unexpected=unexpected,
        causes=causes,
        levers=levers(keys, collected, [cause for cause in causes if cause in liftable]),
        migrated_none=migrated(keys, collected),
        migrated_all=migrated(keys, collected, liftable),
        uncollected=[case_id for case_id in sorted(keys.rows) if case_id not in collected.cases],
        unkeyed=sorted(set(collected.cases) - set(keys.actionable)),
    )
