"""Whatever a repository or a tool wrote reaches a page as text, never as markup or script.

MkDocs passes raw HTML through, so every value from a record, a patch, graded facts or a log is
either HTML-escaped and stripped of Markdown's meaning (``text``) or shown inside a fenced block
whose fence is longer than any run of backticks in it (``fenced``), where the highlighter escapes
it. Control characters become U+FFFD; long lines and long texts are cut with a note, so a page
stays small whatever it shows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pytest_obelize_bench._util.markdown import plain

#: The most a fenced block shows, in lines and in characters per line.
MAX_LINES = 400
MAX_LINE_CHARS = 240
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff]")


def text(value: object, limit: int = 300) -> str:
    """``value`` as inline text of a page or a table cell: no tag, link or code span, one line, cut."""
    return plain(value, limit)


def code(value: object, limit: int = 300) -> str:
    """``value`` as inline code: an HTML ``<code>`` element whose text means nothing to either."""
    return f"<code>{plain(value, limit)}</code>"


def cut_lines(body: str, max_lines: int = MAX_LINES, max_chars: int = MAX_LINE_CHARS) -> tuple[list[str], str | None]:
    """The lines to show (control characters replaced, each cut) and the note saying what was cut."""
    lines = [_CONTROL.sub("\ufffd", line.replace("\t", "    ")) for line in body.splitlines()]
    long = sum(len(line) > max_chars for line in lines)
    shown = [line if len(line) <= max_chars else line[:max_chars] + " [cut]" for line in lines[:max_lines]]
    notes = []
    if len(lines) > max_lines:
        notes.append(f"the first {max_lines} of its {len(lines)} lines are shown")
    if long:
        notes.append(f"{long} line(s) longer than {max_chars} characters are cut")
    return shown, "; ".join(notes) or None


def fenced(lines: Sequence[str], language: str = "text", highlight: Sequence[int] = ()) -> list[str]:
    """A fenced block that nothing inside can close early, with ``highlight``'s lines (1-based) marked."""
    longest = max((len(run) for line in lines for run in re.findall(r"`+|~+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    marks = f' hl_lines="{" ".join(str(n) for n in highlight)}"' if highlight else ""
    return [f"{fence}{language}{marks}", *lines, fence]


__all__ = ["MAX_LINES", "MAX_LINE_CHARS", "code", "cut_lines", "fenced", "text"]
