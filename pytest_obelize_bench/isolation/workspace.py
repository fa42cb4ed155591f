"""Where a case lives on disk, and the check that nothing above it captures its suite.

Layout under the work root (``--bench-work``, by default ``<system temp>/obelize-bench-<uid>``)::

    <root>/<round>/<case>/            the checkout
    <root>/<round>/<case>.logs/       step logs; artefacts/ below it
    <root>/<round>/<case>.venv-upper/ the case's own layer over a template venv (and .venv-work/)
    <root>/home/<round>/<case>/       the HOME every step of the case sees
    <root>/tmp/<round>/<case>/        the TMPDIR of its sandboxed steps

Logs and HOME sit outside the checkout so nothing the harness writes is seen by obelize or by the
repository's suite.  A rerun of a case starts clean.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench._util.names import RULE, is_safe_component
from pytest_obelize_bench._util.removal import remove_path

#: Files that make pytest (or a packaging tool) treat a directory above the checkout as the
#: project: pytest searches upward for its rootdir and conftest files.
ANCESTOR_CONFIGS: tuple[str, ...] = (
    "pyproject.toml",
    "pytest.ini",
    ".pytest.ini",
    "tox.ini",
    "setup.cfg",
    "setup.py",
    "conftest.py",
)

#: Names under the work root the harness keeps for itself; no round may be called so.
RESERVED_ROUND_LABELS = frozenset({"home", "tmp", "uv-cache", "git-cache"})


def default_work_root() -> Path:
    """``<system temp>/obelize-bench-<uid>``: outside any project, so no config above captures a
    suite, and the user's own, so two users of one machine never share (or delete) a checkout."""
    uid = os.getuid() if hasattr(os, "getuid") else os.getlogin()
    return Path(tempfile.gettempdir()) / f"obelize-bench-{uid}"


@dataclass(frozen=True)
class Workspace:
    """The directories of one case in one round."""

    root: Path
    checkout: Path
    logs: Path
    home: Path
    artefacts: Path
    tmp: Path


def safe_component(text: str, what: str) -> str:
    """``text`` if it is one plain path component (no separator, not hidden, not ``..``)."""
    if not is_safe_component(text):
        raise ValueError(f"{what} {text!r} is not a safe directory name: {RULE}")
    return text


def prepare_workspace(root: Path, round_label: str, case_id: str) -> Workspace:
    """The case's directories, emptied: logs, artefacts and HOME created, the checkout absent.

    A rerun starts clean, so nothing of an earlier run (a checkout, a log, a cache in HOME) can
    reach this one.  The checkout is left for the fetch (or the fixture copy) to create.
    """
    safe_component(case_id, "case id")
    safe_component(round_label, "round label")
    if round_label in RESERVED_ROUND_LABELS:
        raise ValueError(f"round label {round_label!r} is reserved for the work root's own use")
    root = Path(root)
    round_dir = root / round_label
    space = Workspace(
        root=root,
        checkout=round_dir / case_id,
        logs=round_dir / f"{case_id}.logs",
        home=root / "home" / round_label / case_id,
        artefacts=round_dir / f"{case_id}.logs" / "artefacts",
        tmp=root / "tmp" / round_label / case_id,
    )
    # <case>.venv-upper and .venv-work: a case's own layer over a template venv (sandbox.py).
    layers = [round_dir / f"{case_id}.venv-{layer}" for layer in ("upper", "work")]
    for path in (space.checkout, space.logs, space.home, space.tmp, *layers):
        remove_path(path)
    for path in (space.logs, space.artefacts, space.home, space.tmp):
        path.mkdir(parents=True, exist_ok=True)
    return space


def keeps_checkout(keep: str, failed: bool) -> bool:
    """``--bench-keep``: ``all`` keeps every finished case's folders, ``failed`` those of a case that
    failed (errored), ``none`` none; the one reading of the option for rounds and the comparison."""
    return keep == "all" or (keep == "failed" and failed)


def remove_checkout(root: Path, round_label: str, case_id: str) -> bool:
    """Remove a finished case's checkout (its venv is inside it); the logs stay. True if removed."""
    safe_component(case_id, "case id")
    safe_component(round_label, "round label")
    checkout = Path(root) / round_label / case_id
    for layer in ("upper", "work"):  # its own writes to an overlaid venv go with it
        remove_path(checkout.parent / f"{case_id}.venv-{layer}")
    if not checkout.exists() and not checkout.is_symlink():
        return False
    remove_path(checkout)
    return True


def isolation_problems(checkout: Path) -> list[str]:
    """Every ancestor config above ``checkout``, nearest first, as ``"<name> (<n> level(s) up)"``.

    Level 1 is the checkout's parent.  A config inside the checkout itself is the repository's
    own and fine.
    """
    problems = []
    for level, parent in enumerate(Path(checkout).resolve().parents, start=1):
        for name in ANCESTOR_CONFIGS:
            if (parent / name).is_file():
                problems.append(f"{name} ({level} level(s) up)")
    return problems


def check_isolation(checkout: Path) -> None:
    """Raise ``work_root_not_isolated`` when a config above the checkout would capture its suite."""
    problems = isolation_problems(checkout)
    if problems:
        raise CaseError(
            "isolation",
            "work_root_not_isolated",
            "; ".join(problems) + ": pytest searches upward and would run the suite under that project; "
            "move the work root outside any project with --bench-work",
        )
