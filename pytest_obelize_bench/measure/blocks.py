"""The measurement blocks in the results document's text: each between its own markers
(``<!-- gate1:begin ... -->`` / ``<!-- gate1:end -->``, ``dryrun-<pack slug>``,
``comparison-round-N``, ``history-round-N``), apart from the round blocks. Pure text functions:
``apply_blocks`` puts blocks in place (or appends them, in their order) and ``stale_block`` says
which one differs from its render.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pytest_obelize_bench.report.document import begin_line, enclose, end_line

_NAME = re.compile(r"gate1|dryrun-[A-Za-z0-9_.-]+|(?:comparison|history)-round-[1-9][0-9]*")


def _span(text: str, name: str) -> tuple[int, int] | None:
    """The block's span (begin start, end end), None when absent; ValueError when malformed."""
    begin = re.compile(begin_line(re.escape(name)), re.MULTILINE)
    end = re.compile(end_line(re.escape(name)), re.MULTILINE)
    starts, ends = list(begin.finditer(text)), list(end.finditer(text))
    if not starts and not ends:
        return None
    if len(starts) != 1 or len(ends) != 1 or ends[0].start() < starts[0].start():
        raise ValueError(f"the {name} block needs exactly one begin marker followed by one end marker")
    return starts[0].start(), ends[0].end()


def _order(name: str) -> tuple[int, str, int]:
    """Gate 1 first, then the dry runs by pack, then the comparisons and the histories by round."""
    if name.startswith("comparison-round-"):
        return (2, "", int(name.rsplit("-", 1)[1]))
    if name.startswith("history-round-"):
        return (3, "", int(name.rsplit("-", 1)[1]))
    return (0 if name == "gate1" else 1, name, 0)


def apply_blocks(text: str, blocks: Mapping[str, str]) -> str:
    """``text`` with each block replaced in place, or appended (Gate 1, dry runs, comparisons, histories)."""
    for name in sorted(blocks, key=_order):
        if not _NAME.fullmatch(name):
            raise ValueError(f"{name!r} is not a measurement block name")
        section = enclose(name, blocks[name])
        span = _span(text, name)
        if span is None:
            text = text.rstrip("\n") + "\n\n" + section + "\n"
        else:
            text = text[: span[0]] + section + text[span[1] :]
    return text if text.endswith("\n") else text + "\n"


def stale_block(text: str, blocks: Mapping[str, str]) -> str | None:
    """None when every block is present as rendered, else a one-line reason."""
    for name in sorted(blocks):
        try:
            span = _span(text, name)
        except ValueError as exc:
            return str(exc)
        if span is None:
            return f"the {name} block is missing"
        if text[span[0] : span[1]] != enclose(name, blocks[name]):
            return f"the {name} block differs from a fresh render"
    return None


__all__ = ["apply_blocks", "stale_block"]
