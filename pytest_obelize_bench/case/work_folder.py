"""The work folder every measured repository starts from: a case's, or a Gate 1 or dry-run one's.

All of them get the same isolation: a fresh workspace of their own, the harness's paths labelled
(``<case>``, ``<logs>``, ``<work>``, ``<repo>``, ``<harness-python>``, ``<harness-uv>``,
``<uv-cache>``, ``<harness-home>``, and the password database's ``<home>``) so no machine path
reaches a record, and a step environment of the allow-list plus a HOME of their own. Built once
here, so no measurement forgets a label.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_obelize_bench.isolation.elide import Elider
from pytest_obelize_bench.isolation.executor import step_environment
from pytest_obelize_bench.isolation.machine import this_machine
from pytest_obelize_bench.isolation.policy import uv_binary
from pytest_obelize_bench.isolation.workspace import Workspace, prepare_workspace

#: What every step of every measured repository gets beyond the allow-list.
STEP_VARIABLES = {"PYTHONDONTWRITEBYTECODE": "1", "GIT_TERMINAL_PROMPT": "0"}


@dataclass(frozen=True)
class Staged:
    """A fresh workspace, the labels of the harness's paths, and the environment of its steps."""

    workspace: Workspace
    elider: Elider
    env: dict[str, str]


def harness_labels(workspace: Workspace, *, work_root: Path, project_root: Path, uv_cache: str | None) -> Elider:
    """The labels a record shows for the harness's own paths, longest spelling replaced first."""
    caches = [Path(p) for p in (os.environ.get("UV_CACHE_DIR"), uv_cache) if p]
    return Elider(
        [
            ("<case>", workspace.checkout),
            ("<logs>", workspace.logs),
            # the case's TMPDIR, where an offline install's constraints file lies (envreuse.py)
            ("<case-tmp>", workspace.tmp),
            ("<work>", work_root),
            ("<repo>", project_root),
            ("<harness-python>", Path(sys.executable)),
            ("<harness-uv>", Path(uv_binary())),
            *[("<uv-cache>", cache) for cache in caches],
            # Last and shortest: the harness's HOME holds pyenv's interpreters and its tools.
            ("<harness-home>", Path.home()),
            # The user's home as the password database gives it, which a suite can print whatever
            # HOME it was given; when it is the harness's HOME, that label comes first and stays.
            *([("<home>", home)] if (home := this_machine().home) else []),
        ]
    )


def stage(
    work_root: Path,
    round_label: str,
    folder: str,
    *,
    project_root: Path,
    uv_cache: str | None = None,
    variables: Mapping[str, str] | None = None,
) -> Staged:
    """Workspace ``<work_root>/<round_label>/<folder>``, made fresh, with its labels and step environment."""
    workspace = prepare_workspace(Path(work_root), round_label, folder)
    elider = harness_labels(workspace, work_root=Path(work_root), project_root=Path(project_root), uv_cache=uv_cache)
    env = step_environment(os.environ, home=workspace.home, extra={**STEP_VARIABLES, **(variables or {})})
    return Staged(workspace=workspace, elider=elider, env=env)


__all__ = ["STEP_VARIABLES", "Staged", "harness_labels", "stage"]
