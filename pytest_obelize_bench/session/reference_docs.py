"""``obelize-bench docs [--check]``: the generated blocks of the documentation's reference pages.

The options table is read from the parser pytest builds once the plugin is loaded through its
``pytest11`` entry point, exactly as a session loads it, so every ``addoption`` call, with its
help, default and choices, is what the page says. The record schema and the case file's rules
come from ``report/reference_pages.py``. ``--check`` writes nothing and fails on any difference,
as ``summarize --check`` does for the results document.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from _pytest.config import get_config

from pytest_obelize_bench._util.markdown import table
from pytest_obelize_bench._util.safe_io import write_atomically
from pytest_obelize_bench.casefile.cases import CaseFileError
from pytest_obelize_bench.casefile.reviews import ReviewFileError
from pytest_obelize_bench.report.reference_pages import PURE_BLOCKS, prose, replace_block
from pytest_obelize_bench.report.site.pages import check_site, site_files, write_site

#: The plugin's entry-point name and its option group (``pytest --help`` shows the group's title).
ENTRY_POINT = "obelize_bench"
GROUP = "obelize-bench"
DEFAULT_DOCS = Path("docs")


def plugin_options() -> list[tuple[list[str], dict[str, Any]]]:
    """Every option of the plugin's group: its names and its ``addoption`` attributes, in declaration order."""
    config = get_config()
    config.pluginmanager.load_setuptools_entrypoints("pytest11", name=ENTRY_POINT)
    group = config._parser.getgroup(GROUP)
    if not group.options:
        raise ValueError(f"no option in pytest's group {GROUP!r}: is the package installed (pip install -e .)?")
    return [(list(option.names()), dict(option.attrs())) for option in group.options]


def _value(attrs: Mapping[str, Any]) -> str:
    if attrs.get("nargs") == 0:
        return ""
    if attrs.get("choices"):
        text = "|".join(str(choice) for choice in attrs["choices"])
    else:
        text = str(attrs.get("metavar") or attrs.get("dest", "VALUE")).upper()
    return f"[={text}]" if attrs.get("nargs") == "?" else f"={text}"


def _default(attrs: Mapping[str, Any]) -> str:
    default = attrs.get("default")
    if default in (None, False, []) or attrs.get("nargs") == 0:
        return ""
    return f"`{default}`"


def options_block(options: Sequence[tuple[list[str], Mapping[str, Any]]]) -> str:
    """The options table: each option with its value, default and help, as ``pytest --help`` has them."""
    rows = []
    for names, attrs in options:
        value = _value(attrs)
        spelled = ", ".join(f"`{name}{value}`" for name in names)
        help_text = str(attrs.get("help") or "").replace("%(default)s", str(attrs.get("default")))
        repeat = " (repeatable)" if attrs.get("action") == "append" and "repeatable" not in help_text else ""
        rows.append((spelled, _default(attrs), prose(help_text + repeat)))
    intro = (
        f"Generated from the plugin's own `addoption` calls ({len(rows)} options, in the order "
        "`.venv/bin/python -m pytest --help` lists them under *obelize migration benchmark*)."
    )
    return "\n".join([intro, "", *table(("option", "default", "what it does"), ("---",) * 3, rows)])


def generated_blocks() -> dict[str, dict[str, Callable[[], str]]]:
    """Every generated block of the docs: page (under docs/) to block name and its renderer."""
    blocks = {page: dict(named) for page, named in PURE_BLOCKS.items()}
    blocks.setdefault("reference/options.md", {})["options"] = lambda: options_block(plugin_options())
    return blocks


def render_pages(docs: Path) -> dict[Path, tuple[str, str]]:
    """Each page with a generated block: its text as committed, and as a fresh render would write it."""
    pages: dict[Path, tuple[str, str]] = {}
    for name, blocks in generated_blocks().items():
        path = docs / name
        old = path.read_text(encoding="utf-8")
        new = old
        for block, render in blocks.items():
            new = replace_block(new, block, render(), source=str(path))
        pages[path] = (old, new)
    return pages


def docs_command(
    docs: Path, *, check: bool, out: TextIO, results: Path | None = None, cases: Path | None = None
) -> int:
    """Rewrite the generated blocks and the results pages (``docs/results/``), or with ``check``
    name every page that differs and exit 1."""
    results = results or docs.parent / "results"
    cases = cases or docs.parent / "cases" / "cases.yaml"
    try:
        pages = render_pages(docs)
        site = site_files(results, cases) if results.is_dir() else {}
    except (OSError, ValueError, CaseFileError, ReviewFileError) as exc:
        print(f"obelize-bench docs: {str(exc).splitlines()[0]}", file=out)
        return 2
    stale = [path for path, (old, new) in pages.items() if old != new]
    for path in stale:
        if check:
            print(f"{path}: a generated block differs from a fresh render; run `obelize-bench docs`", file=out)
        else:
            write_atomically(path, pages[path][1])
            print(f"{path}: rewritten", file=out)
    if not stale:
        print(f"{len(pages)} reference pages agree with the code", file=out)
    if check:
        problems = check_site(docs, site)
        for problem in problems:
            print(f"{problem}; run `obelize-bench docs`", file=out)
        if not problems:
            print(f"{len(site)} results pages and figures agree with {results}", file=out)
        return 1 if stale or problems else 0
    changed = write_site(docs, site)
    print(f"{len(site)} results pages and figures from {results} ({changed} written or removed)", file=out)
    return 0


def add_docs_command(sub: Any) -> None:
    """The ``docs`` subcommand's arguments (``sub`` is the console script's subparsers)."""
    p: argparse.ArgumentParser = sub.add_parser(
        "docs",
        help="rewrite (or --check) the generated pages: options, record schema, case-file rules, and the results",
    )
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 when a page differs from a fresh render")
    p.add_argument("--docs", type=Path, default=DEFAULT_DOCS, help="the documentation folder (default: %(default)s)")
    p.add_argument("--results", type=Path, default=None, help="the results folder (default: beside the docs)")
    p.add_argument("--cases", type=Path, default=None, help="the case file (default: cases/cases.yaml beside the docs)")
    p.set_defaults(
        handler=lambda args, out: docs_command(
            args.docs, check=args.check, out=out, results=args.results, cases=args.cases
        )
    )
