"""How an attempt is named, in every place a name carries one.

Under ``--bench-repeat`` a case runs more than once. The first attempt keeps the names a single
run has always had (``<case>`` for its folder, ``<case>.json`` for its record, ``<case>`` for its
item), so a reader that ignores repeats sees exactly one of each. Attempt N >= 2 is
``<case>.attempt-N`` (folder and file stem) and ``<case>[attempt-N]`` (item). Writers and parsers
both use this module, so the spellings cannot drift apart.
"""

from __future__ import annotations

STEM_MARK = ".attempt-"
ITEM_MARK = "[attempt-"


def attempt_stem(case: str, attempt: int | None) -> str:
    """The case's folder name and record file stem for this attempt."""
    return case if (attempt or 1) == 1 else f"{case}{STEM_MARK}{attempt}"


def record_file_name(case: str, attempt: int | None) -> str:
    """``<case>.json`` for the first (or only) attempt, ``<case>.attempt-N.json`` for a repeat."""
    return f"{attempt_stem(case, attempt)}.json"


def item_name(case: str, attempt: int, repeat: int) -> str:
    """The pytest item's name: the bare case id unless the session repeats cases."""
    return case if repeat == 1 else f"{case}{ITEM_MARK}{attempt}]"


def _number(text: str) -> int | None:
    """A canonical decimal attempt number >= 1 (``02`` and ``+2`` are not)."""
    return int(text) if text.isdigit() and text == str(int(text)) and int(text) >= 1 else None


def parse_stem(stem: str) -> tuple[str, int]:
    """(case, attempt) of a folder name or file stem; a name without a repeat mark is attempt 1."""
    case, mark, rest = stem.rpartition(STEM_MARK)
    number = _number(rest) if mark else None
    return (case, number) if number is not None and number >= 2 else (stem, 1)


def parse_item_name(name: str) -> tuple[str, int]:
    """(case, attempt) of an item's name (``case[attempt-2]``); attempt 1 without a suffix."""
    case, mark, rest = name.partition(ITEM_MARK)
    number = _number(rest.removesuffix("]")) if mark and rest.endswith("]") else None
    return (case, number) if number is not None else (name.split("[", 1)[0], 1)


__all__ = ["attempt_stem", "item_name", "parse_item_name", "parse_stem", "record_file_name"]
