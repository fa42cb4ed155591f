"""What a generated results page states, read back as a reader would: its sections, tables and cells.

Only the Markdown the pages are written in is read (``docs/results/*.md``), never the renderer: a
cell loses its code spans, emphasis, link targets and HTML escapes, and keeps its text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import unescape
from pathlib import Path

from tests.helpers.project import PROJECT

PAGES = PROJECT / "docs" / "results"
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_HEADING = re.compile(r"^(#{1,6}) (.*)$")


def page(name: str, folder: Path = PAGES) -> str:
    return (folder / name).read_text(encoding="utf-8")


def plain(cell: str) -> str:
    """A cell's text: no code span, tag, emphasis or link target; escapes read back."""
    text = _LINK.sub(r"\1", cell)
    text = re.sub(r"</?code>", "", text).replace("`", "").replace("**", "")
    return unescape(text).replace("\\|", "|").strip()


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[str]]

    def column(self, name: str, which: int = 0) -> list[str]:
        """The cells under the ``which``-th header called ``name``."""
        at = [i for i, title in enumerate(self.header) if title == name][which]
        return [row[at] for row in self.rows]

    def by(self, name: str) -> dict[str, dict[str, str]]:
        """Each row as {header: cell}, keyed by its cell under ``name`` (a later same header wins)."""
        key = self.header.index(name)
        return {row[key]: dict(zip(self.header, row, strict=True)) for row in self.rows}


def _cells(line: str) -> list[str]:
    inner = line.strip()[1:-1]
    return [plain(cell) for cell in re.split(r"(?<!\\)\|", inner)]


def tables(text: str) -> list[Table]:
    """Every Markdown table of ``text``, in order."""
    found: list[Table] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines) - 1:
        if lines[i].startswith("|") and re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", lines[i + 1].strip()):
            header = _cells(lines[i])
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(_cells(lines[i]))
                i += 1
            found.append(Table(header, rows))
            continue
        i += 1
    return found


def section(text: str, title: str) -> str:
    """The text under the first heading named ``title``, up to the next heading of its level or above."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        match = _HEADING.match(line)
        if match and plain(match.group(2)) == title:
            level = len(match.group(1))
            body = []
            for rest in lines[index + 1 :]:
                heading = _HEADING.match(rest)
                if heading and len(heading.group(1)) <= level:
                    break
                body.append(rest)
            return "\n".join(body)
    raise AssertionError(f"no section {title!r}")


def table_under(text: str, title: str, index: int = 0) -> Table:
    return tables(section(text, title))[index]


def number(text: str) -> float:
    """A stated runtime or count: ``1.6 s``, ``2.4 min``, ``12``."""
    value, _, unit = text.partition(" ")
    return float(value) * (60 if unit == "min" else 1)


__all__ = ["PAGES", "Table", "number", "page", "plain", "section", "table_under", "tables"]
