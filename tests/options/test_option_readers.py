"""Every option is read once: ``getoption`` is called in the one builder, options declared in one module."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_obelize_bench"
BUILDER = ("options/read.py", "read_options")
DECLARATIONS = "options/declarations.py"


def sites(source: str, attribute: str) -> list[str]:
    """The functions of ``source`` (dotted, ``<module>`` at top level) that name ``attribute``."""
    found: list[str] = []

    def visit(node: ast.AST, scope: list[str]) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            scope = [*scope, node.name]
        named = (isinstance(node, ast.Attribute) and node.attr == attribute) or (
            isinstance(node, ast.Name) and node.id == attribute
        )
        if named:
            found.append(".".join(scope) or "<module>")
        for child in ast.iter_child_nodes(node):
            visit(child, scope)

    visit(ast.parse(source), [])
    return found


def package_sites(attribute: str) -> set[tuple[str, str]]:
    return {
        (path.relative_to(PACKAGE).as_posix(), where)
        for path in sorted(PACKAGE.rglob("*.py"))
        for where in sites(path.read_text(encoding="utf-8"), attribute)
    }


def test_the_finder_sees_a_call_an_alias_and_its_function() -> None:
    source = (
        "def f(config):\n    return config.getoption('--x')\n"
        "class C:\n    def g(self):\n        get = self.config.getoption\n        return get('--y')\n"
        "h = getoption\n"
    )
    assert sites(source, "getoption") == ["f", "C.g", "<module>"]


def test_only_the_builder_calls_getoption() -> None:
    assert package_sites("getoption") == {BUILDER}


def test_only_the_declarations_module_declares_options() -> None:
    assert {module for module, _ in package_sites("addoption")} == {DECLARATIONS}
