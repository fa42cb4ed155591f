"""Which rows of a case file this machine cannot reach, and why: read from a pin list.

A round run where some repositories cannot be fetched is still a measurement of the rest, but only
when the rows left out are named before it starts, each with its reason, so that nobody can drop a
case after seeing its result. The list is a tab-separated file with a header naming at least the
columns ``full_name``, ``sha`` and ``state`` (the snapshots' ``pins.tsv`` is one): a pin whose state is
``packed`` is reachable, any other state is the reason it is not. A row of the case file that the list
does not name is reachable.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from pytest_obelize_bench._util.safe_io import UntrustedFileError, read_untrusted_text
from pytest_obelize_bench._util.validation import quoted
from pytest_obelize_bench.casefile.schema import FULL_SHA, Case

__all__ = [
    "REACHABLE_STATE",
    "REACH_COLUMNS",
    "ReachListError",
    "parse_reach_list",
    "read_reach_list",
    "unreachable_pins",
    "unreachable_rows",
]

#: The state of a pin that a checkout can be made from.
REACHABLE_STATE = "packed"
REACH_COLUMNS = ("full_name", "sha", "state")
#: A pin list is a few hundred rows; one far larger is not one.
REACH_LIST_BYTES = 4 * 1024 * 1024


class ReachListError(ValueError):
    """A pin list that cannot be read: one line naming the file, the row and the field."""


def read_reach_list(path: Path) -> dict[tuple[str, str], str]:
    """Every pin the list names, as ``(full_name, sha) -> state``; ReachListError on a bad file."""
    try:
        text = read_untrusted_text(Path(path), REACH_LIST_BYTES)
    except UntrustedFileError as exc:
        raise ReachListError(str(exc)) from None
    return parse_reach_list(text, str(path))


def parse_reach_list(text: str, source: str) -> dict[tuple[str, str], str]:
    """The pins of a list's text; a pin named twice with two states is an error, not a choice."""
    lines = text.splitlines()
    if not lines:
        raise ReachListError(f"{source}: empty; expected a header naming {', '.join(REACH_COLUMNS)}")
    header = lines[0].split("\t")
    missing = [column for column in REACH_COLUMNS if column not in header]
    if missing:
        raise ReachListError(f"{source}: line 1: header: expected the columns {', '.join(missing)} (tab-separated)")
    where = {column: header.index(column) for column in REACH_COLUMNS}
    pins: dict[tuple[str, str], str] = {}
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) != len(header):
            raise ReachListError(
                f"{source}: line {number}: expected {len(header)} tab-separated cells, got {len(cells)}"
            )
        full_name, sha, state = (cells[where[column]].strip() for column in REACH_COLUMNS)
        if "/" not in full_name:
            raise ReachListError(f"{source}: line {number}: full_name: expected owner/name, got {quoted(full_name)}")
        if not FULL_SHA.fullmatch(sha):
            raise ReachListError(f"{source}: line {number}: sha: expected a full 40-hex commit SHA, got {quoted(sha)}")
        if not state:
            raise ReachListError(f"{source}: line {number}: state: expected {REACHABLE_STATE} or why it is not")
        earlier = pins.setdefault((full_name, sha), state)
        if earlier != state:
            raise ReachListError(
                f"{source}: line {number}: state: {full_name}@{sha[:12]} is {quoted(earlier)} on an earlier line "
                f"and {quoted(state)} here"
            )
    return pins


def unreachable_rows(cases: Iterable[Case], pins: Mapping[tuple[str, str], str]) -> dict[str, str]:
    """The case ids (cases and controls) whose pin the list names with a state other than packed,
    each with that state as its reason, in id order."""
    return unreachable_pins(((case.id, case.full_name, case.sha) for case in cases), pins)


def unreachable_pins(
    rows: Iterable[tuple[str, str | None, str | None]], pins: Mapping[tuple[str, str], str]
) -> dict[str, str]:
    """``unreachable_rows`` for any rows given as (id, full_name, sha): a frame's repositories too."""
    found = {}
    for row_id, full_name, sha in rows:
        if full_name is None or sha is None:
            continue
        state = pins.get((full_name, sha))
        if state is not None and state != REACHABLE_STATE:
            found[row_id] = state
    return dict(sorted(found.items()))
