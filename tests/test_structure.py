"""The package's shape: every module named once, with its role, in the Layout page of the docs.

The layering itself (which folder may import which) is import-linter's contract in
``pyproject.toml``, run by ``.ci/run``; the test below runs it too, so a plain ``pytest`` sees it.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.project import PROJECT

PACKAGE = PROJECT / "pytest_obelize_bench"
LAYOUT = PROJECT / "docs" / "reference" / "layout.md"


def layout_rows(page: str) -> dict[str, str]:
    """The Layout page's tables, one per folder under its ``## `folder/``` heading: module path to role."""
    rows: dict[str, str] = {}
    folder = ""
    for line in page.splitlines():
        if line.startswith("## "):
            title = line[3:].strip()
            folder = title.strip("`") if title.startswith("`") else ""
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0].startswith("`") and cells[0].endswith(".py`"):
            rows[folder + cells[0].strip("`")] = cells[1]
    return rows


def package_modules() -> set[str]:
    return {path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py") if path.name != "__init__.py"}


def test_the_layout_page_names_every_module_once_with_its_role() -> None:
    rows = layout_rows(LAYOUT.read_text(encoding="utf-8"))
    modules = package_modules()
    assert sorted(modules - set(rows)) == [], f"modules missing from {LAYOUT.relative_to(PROJECT)}"
    assert sorted(set(rows) - modules) == [], f"{LAYOUT.relative_to(PROJECT)} names modules that do not exist"
    assert [name for name, role in rows.items() if not role] == []


def test_the_layout_reader_sees_folders() -> None:
    page = (
        "# Layout\n\nintro\n\n## `a/`\n\n| module | role |\n|---|---|\n| `x.py` | does x |\n\n"
        "## The root\n\n| `y.py` | y |\n| `z` | not a module |\n"
    )
    assert layout_rows(page) == {"a/x.py": "does x", "y.py": "y"}


def test_only_the_entry_points_sit_at_the_root() -> None:
    assert sorted(path.name for path in PACKAGE.glob("*.py")) == ["__init__.py", "cli.py", "plugin.py"]


def test_every_module_name_is_unique_in_the_package() -> None:
    by_name: dict[str, list[str]] = {}
    for module in package_modules():
        by_name.setdefault(Path(module).name, []).append(module)
    assert {name: paths for name, paths in by_name.items() if len(paths) > 1} == {}


def _prefix(module: str) -> str:
    return Path(module).stem.split("_", 1)[0]


def test_three_modules_sharing_a_name_prefix_make_a_folder() -> None:
    groups: dict[tuple[str, str], list[str]] = {}
    for module in package_modules():
        groups.setdefault((str(Path(module).parent), _prefix(module)), []).append(module)
    assert {key: sorted(names) for key, names in groups.items() if len(names) >= 3} == {}


def test_the_prefix_rule_sees_three_modules_sharing_a_prefix() -> None:
    modules = ["a/round_block.py", "a/round_cases.py", "a/round.py", "a/other.py"]
    assert [m for m in modules if _prefix(m) == "round"] == modules[:3]


def test_loading_the_entry_point_loads_nothing_a_round_needs() -> None:
    """``pytest --help`` and every unit test pay for the plugin's imports: no pydantic, no case file,
    no tool, no measurement (they are imported inside the hooks that need them)."""
    program = (
        "import sys, pytest_obelize_bench.plugin, pytest_obelize_bench.session.kernel, "
        "pytest_obelize_bench.session.round_kind, pytest_obelize_bench.session.frame_kind, "
        "pytest_obelize_bench.session.comparison_kind\n"
        "heavy = ['pydantic', 'yaml', 'pytest_obelize_bench.casefile', 'pytest_obelize_bench.tool', "
        "'pytest_obelize_bench.grading.record', 'pytest_obelize_bench.gate1', 'pytest_obelize_bench.comparison']\n"
        "print(sorted(m for m in sys.modules if any(m == h or m.startswith(h + '.') for h in heavy)))"
    )
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


#: Written by a conftest at the end of a plain session: which of ``HEAVY`` it imported.
SEEN_HEAVY = """\
import sys
HEAVY = ("pydantic", "yaml", "pytest_obelize_bench.grading.record", "pytest_obelize_bench.casefile")
def pytest_sessionfinish(session):
    seen = sorted(m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in HEAVY))
    print("heavy:", seen)
"""


def test_a_session_that_runs_no_benchmark_pays_for_no_model(pytester: pytest.Pytester) -> None:
    """Installed, the plugin loads into every pytest session of its environment; one that runs no
    benchmark reads its options (``--bench-fail-on`` among them) but imports no pydantic model."""
    pytester.makeconftest(SEEN_HEAVY)
    pytester.makepyfile(test_plain="def test_one():\n    assert True\n")
    quiet = ("-s", "-p", "no:randomly", "-p", "no:hypothesispytest")
    plain = pytester.runpytest_subprocess(*quiet)
    plain.assert_outcomes(passed=1)
    assert "heavy: []" in plain.stdout.str(), plain.stdout.str()
    gated = pytester.runpytest_subprocess(*quiet, "--bench-fail-on=wrong")
    gated.assert_outcomes(passed=1)  # naming tiers checks them against the records' tiers, which it then imports
    assert "pytest_obelize_bench.grading.record" in gated.stdout.str()


def test_no_module_is_over_400_lines() -> None:
    long = {name: n for name in package_modules() if (n := len((PACKAGE / name).read_text().splitlines())) > 400}
    assert long == {}


def test_no_test_file_is_over_400_lines() -> None:
    files = (path for path in (PROJECT / "tests").rglob("*.py") if "data" not in path.relative_to(PROJECT).parts)
    sizes = {path.relative_to(PROJECT).as_posix(): len(path.read_text().splitlines()) for path in files}
    assert {name: n for name, n in sizes.items() if n > 400} == {}


def test_the_import_contracts_hold() -> None:
    linter = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if linter is None:
        pytest.skip("import-linter is not installed (it is in the test extra)")
    result = subprocess.run([linter], cwd=PROJECT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout[-3000:]


def _imports(tree: ast.AST) -> list[str]:
    """Every module of the package a module imports at run time, at any depth (inside functions
    too); a name imported only for the type checker (``if TYPE_CHECKING:``) is no import."""
    found: list[str] = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pytest_obelize_bench"):
            found += [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        found += _imports(node)
    return found


#: The modules ``pytest --help`` and ``obelize-bench --help`` load: each says in its docstring that what
#: a hook or a command needs is imported inside it, for start-up time.
START_UP = {"plugin.py", "cli.py", "session/round_kind.py", "session/frame_kind.py", "session/comparison_kind.py"}


def _late_imports(path: Path) -> list[int]:
    """The lines of imports inside a function that give no reason (a comment on the line or above it)."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    late = []
    for function in ast.walk(ast.parse(text)):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Import | ast.ImportFrom):
                # a comment on the line, or above the run of import lines it belongs to
                above = node.lineno - 1
                while above > 0 and lines[above - 1].strip().startswith(("import ", "from ")):
                    above -= 1
                group = lines[above - 1 : node.lineno] if above > 0 else lines[: node.lineno]
                if not any("#" in line for line in group):
                    late.append(node.lineno)
    return late


def test_an_import_inside_a_function_says_why_outside_the_start_up_modules() -> None:
    found = {name: _late_imports(PACKAGE / name) for name in package_modules() if name not in START_UP}
    assert {name: late for name, late in found.items() if late} == {}


def test_the_start_up_modules_say_why_they_import_late() -> None:
    for name in START_UP:
        doc = ast.get_docstring(ast.parse((PACKAGE / name).read_text(encoding="utf-8"))) or ""
        assert "start-up" in doc or "import-light" in doc, name


def test_no_module_imports_one_that_imports_it_back() -> None:
    modules = {".".join(p.relative_to(PROJECT).with_suffix("").parts).removesuffix(".__init__"): p
               for p in PACKAGE.rglob("*.py")}  # fmt: skip
    graph = {
        name: {m for m in _imports(ast.parse(path.read_text(encoding="utf-8"))) if m in modules and m != name}
        for name, path in modules.items()
    }
    circles = []
    for start in graph:  # a depth-first walk from every module: any path back to it is a circle
        stack, seen = [(start, [start])], set()
        while stack:
            node, path = stack.pop()
            for after in graph[node]:
                if after == start:
                    circles.append(" -> ".join([*path, start]))
                elif after not in seen:
                    seen.add(after)
                    stack.append((after, [*path, after]))
    assert circles == [], circles[:5]
