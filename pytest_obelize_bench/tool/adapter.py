"""The tool adapter: how the tool under test is invoked, where its run folder is, how it is read.

``ToolAdapter`` is the seam the design names; ``Obelize080`` (``OBELIZE``) is its one
implementation, written to obelize 0.8.0's documented behaviour (its commands, ``.obelize/latest``,
``findings.json``, ``plan.json`` and ``run.json``).  Code that runs a fix or a scan asks the
adapter for the argv and for the documents, so a tool that differs in those places needs a new
adapter and nothing else.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from pytest_obelize_bench.grading.graded_facts import Artefacts
from pytest_obelize_bench.tool.runfolder import locate_run_folder, read_artefacts

#: obelize fix exit codes after which obelize has written a run folder (behaviour reference §16):
#: 0 clean or nothing applies, 3 verification failed (files stay written), 4 nothing written or
#: rows withheld, 5 refused by the tree gate or a repo-config verify command refused, 6 written
#: without a verdict (every apply without --verify).  1 (run folder not writable, planning error,
#: invalid bundled pack), 2 (usage) and 7 (invalid user pack or plugin) write no run folder.
DOCUMENTED_EXIT_CODES: tuple[int, ...] = (0, 3, 4, 5, 6)
#: run.json ``refused[]`` codes that refuse the whole apply because of the checkout's git state.
TREE_REFUSALS = frozenset({"tree_dirty", "tree_unknown"})


class ToolAdapter(Protocol):
    """What the harness needs to know about the tool under test's command line and run folder."""

    @property
    def fix_exit_codes(self) -> tuple[int, ...]:
        """The exit codes of ``fix`` after which a run folder exists to be read."""
        ...

    @property
    def tree_refusals(self) -> frozenset[str]:
        """The refusal codes that mean the checkout's git state stopped the whole apply."""
        ...

    def fix_argv(self, prefix: Sequence[str], *, checkout: Path, pack: str, apply: bool = True) -> list[str]:
        """``fix`` over ``checkout``: applied (step 6) or, with ``apply=False``, a dry run."""
        ...

    def scan_argv(self, prefix: Sequence[str], *, checkout: Path, pack: str) -> list[str]:
        """``scan`` over ``checkout`` with ``pack``, its findings as JSON."""
        ...

    def run_folder(self, checkout: Path) -> Path:
        """The run folder the tool's latest run in ``checkout`` wrote; ``CaseError`` if none."""
        ...

    def read(self, folder: Path, checkout: Path) -> Artefacts:
        """The graded facts of the run folder ``folder`` of ``checkout``, read as untrusted input."""
        ...


class Obelize080:
    """obelize 0.8.0: ``fix``/``scan`` with ``--repo``, ``--pack`` and ``--json``; ``.obelize/latest``."""

    fix_exit_codes: tuple[int, ...] = DOCUMENTED_EXIT_CODES
    tree_refusals: frozenset[str] = TREE_REFUSALS

    def fix_argv(self, prefix: Sequence[str], *, checkout: Path, pack: str, apply: bool = True) -> list[str]:
        """Applied: never prompt, no model, JSON, and no ``--verify`` (the new SDK arrives at step 7)."""
        argv = [*prefix, "fix", "--repo", os.fspath(checkout), "--pack", pack]
        if apply:
            argv += ["--apply", "--non-interactive"]
        return [*argv, "--model", "none", "--json"]

    def scan_argv(self, prefix: Sequence[str], *, checkout: Path, pack: str) -> list[str]:
        """Without ``--fail-on`` a scan exits 0 whatever it finds."""
        return [*prefix, "scan", "--repo", os.fspath(checkout), "--pack", pack, "--json"]

    def run_folder(self, checkout: Path) -> Path:
        return locate_run_folder(checkout)

    def read(self, folder: Path, checkout: Path) -> Artefacts:
        return read_artefacts(folder, checkout)


#: The adapter of the tool every round runs.
OBELIZE: ToolAdapter = Obelize080()

__all__ = ["DOCUMENTED_EXIT_CODES", "OBELIZE", "TREE_REFUSALS", "Obelize080", "ToolAdapter"]
