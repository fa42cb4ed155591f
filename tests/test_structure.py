"""The package's shape: every module named once, with its role, in README's Layout.

The layering itself (which folder may import which) is import-linter's contract in
``pyproject.toml``, run by ``.ci/run``; the test below runs it too, so a plain ``pytest`` sees it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pytest_obelize_bench"


def layout_rows(readme: str) -> dict[str, str]:
    """README's Layout tables: each module's path in the package to its role."""
    section = readme.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, str] = {}
    folder = ""
    for line in section.splitlines():
        if line.startswith("### "):
            title = line[4:].strip()
            folder = title.strip("`") if title.startswith("`") else ""
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0].startswith("`") and cells[0].endswith(".py`"):
            rows[folder + cells[0].strip("`")] = cells[1]
    return rows


def package_modules() -> set[str]:
    return {path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py") if path.name != "__init__.py"}


def test_the_readme_layout_names_every_module_once_with_its_role() -> None:
    rows = layout_rows((ROOT / "README.md").read_text(encoding="utf-8"))
    modules = package_modules()
    assert sorted(modules - set(rows)) == [], "modules missing from README's Layout"
    assert sorted(set(rows) - modules) == [], "README's Layout names modules that do not exist"
    assert [name for name, role in rows.items() if not role] == []


def test_the_layout_reader_sees_folders() -> None:
    readme = (
        "intro\n## Layout\n\n### `a/`\n\n| module | role |\n|---|---|\n| `x.py` | does x |\n\n"
        "### The root\n\n| `y.py` | y |\n## Next\n| `z.py` | no |\n"
    )
    assert layout_rows(readme) == {"a/x.py": "does x", "y.py": "y"}


def test_only_the_entry_points_sit_at_the_root() -> None:
    assert sorted(path.name for path in PACKAGE.glob("*.py")) == ["__init__.py", "cli.py", "plugin.py"]


def test_the_import_contracts_hold() -> None:
    linter = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if linter is None:
        pytest.skip("import-linter is not installed (it is in the test extra)")
    result = subprocess.run([linter], cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout[-3000:]
