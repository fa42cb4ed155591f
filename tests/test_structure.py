"""The package's shape: no import cycle between its modules, at module level or inside functions."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "pytest_obelize_bench"


def imports_of(path: Path) -> set[str]:
    """The package modules ``path`` imports anywhere (deferred imports are imports too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module:
                found.add(node.module.split(".")[0])
            elif node.module and node.module.startswith("pytest_obelize_bench."):
                found.add(node.module.split(".")[1])
            elif node.module == "pytest_obelize_bench":
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("pytest_obelize_bench."):
                    found.add(alias.name.split(".")[1])
    return found


def graph() -> dict[str, set[str]]:
    modules = {path.stem: path for path in PACKAGE.glob("*.py")}
    return {name: imports_of(path) & set(modules) - {name} for name, path in modules.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(groups)


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_package_has_no_import_cycle() -> None:
    assert cycles(graph()) == []


def layout_rows(readme: str) -> dict[str, str]:
    """The README's Layout table: module file name to its role."""
    section = readme.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0].startswith("`") and cells[0].endswith(".py`"):
            rows[cells[0].strip("`")] = cells[1]
    return rows


def test_the_readme_layout_names_every_module_once_with_its_role() -> None:
    rows = layout_rows((PACKAGE.parent / "README.md").read_text(encoding="utf-8"))
    modules = {path.name for path in PACKAGE.glob("*.py") if path.name != "__init__.py"}
    assert sorted(modules - set(rows)) == [], "modules missing from README's Layout"
    assert sorted(set(rows) - modules) == [], "README's Layout names modules that do not exist"
    assert [name for name, role in rows.items() if not role] == []
