"""``obelize-bench docs``: the committed reference pages agree with the code, and drift fails the check."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

from pytest_obelize_bench.cli import main
from pytest_obelize_bench.session.reference_docs import docs_command, generated_blocks, options_block, plugin_options
from tests.helpers.project import PROJECT

DOCS = PROJECT / "docs"
PACKAGE = PROJECT / "pytest_obelize_bench"


def copy_docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    for page in generated_blocks():
        (docs / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(DOCS / page, docs / page)
    return docs


def test_the_committed_reference_pages_agree_with_the_code() -> None:
    out = io.StringIO()
    assert main(["docs", "--check", "--docs", str(DOCS)], out=out) == 0, out.getvalue()


def test_every_addoption_call_of_the_plugin_is_in_the_table() -> None:
    sources = sorted(PACKAGE.rglob("*.py"))  # every declaration, wherever it is
    calls = sum(len(re.findall(r"\baddoption\(", path.read_text(encoding="utf-8"))) for path in sources)
    names = [names[0] for names, _ in plugin_options()]
    assert len(names) == calls
    assert {"--bench-round", "--fixtures-only", "--bench-gate1", "--bench-sandbox"} <= set(names)


def test_a_changed_help_text_makes_the_check_fail_and_docs_rewrites_it(tmp_path: Path) -> None:
    docs = copy_docs(tmp_path)
    page = docs / "reference" / "options.md"
    page.write_text(page.read_text().replace("run benchmark round N", "run round N"), encoding="utf-8")
    out = io.StringIO()
    assert docs_command(docs, check=True, out=out) == 1
    assert f"{page}: a generated block differs" in out.getvalue()
    assert docs_command(docs, check=False, out=io.StringIO()) == 0
    assert page.read_text() == (DOCS / "reference" / "options.md").read_text()


def test_a_page_that_lost_its_markers_is_an_error_naming_it(tmp_path: Path) -> None:
    docs = copy_docs(tmp_path)
    page = docs / "reference" / "case-file.md"
    page.write_text(re.sub(r"<!-- case-file-rules:end -->", "", page.read_text()), encoding="utf-8")
    out = io.StringIO()
    assert docs_command(docs, check=True, out=out) == 2
    assert "case-file.md: expected one generated block 'case-file-rules'" in out.getvalue()


def test_the_table_spells_values_defaults_and_help() -> None:
    block = options_block(
        [
            (["--x"], {"nargs": 0, "default": False, "help": "a flag"}),
            (["--y"], {"choices": ("a", "b"), "default": "a", "help": "pick (default: %(default)s)"}),
            (["--z"], {"nargs": "?", "metavar": "RUN", "help": "in <work>"}),
        ]
    )
    assert "| `--x` |  | a flag |" in block
    assert "| `--y=a\\|b` | `a` | pick (default: a) |" in block
    assert "| `--z[=RUN]` |  | in &lt;work&gt; |" in block
