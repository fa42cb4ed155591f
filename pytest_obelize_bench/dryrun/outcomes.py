"""The fix dry run: what a pack's rules alone would write to one repository, and the outcome.

``outcome`` is a pure function of four facts read from the run folder of
``obelize fix --pack PACK --model none`` (without ``--apply``):

* ``blocked``: the pack stopped before it planned (run.json ``packs[].blocked``);
* ``none``: it ran and found no usage; a comment mention and a manifest row are not usages;
* ``held``: usages found, no file would be written;
* ``partial``: a file would be written and a row is withheld;
* ``complete``: a file would be written and nothing is withheld.

A ``complete`` repository means the plan would write something, not that it is right: there is
no answer key here.  The records of one frame live in one document, written only when the whole
frame ran, so a retry can never replace part of a published run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from pydantic import Field, ValidationError

from pytest_obelize_bench._util.caps import MEASURE_DOCUMENT_BYTES
from pytest_obelize_bench._util.documents import read_document
from pytest_obelize_bench._util.strict_model import StrictRow
from pytest_obelize_bench._util.validation import row_problem
from pytest_obelize_bench.measure.frame import OUTCOMES, Outcome

#: Finding kinds that are not a usage of the library for the ``none`` outcome.
NOT_USAGE_KINDS: frozenset[str] = frozenset({"text_mention", "manifest", "parse_error"})
DOCUMENT_NAME = "dryrun.json"
MAX_DRYRUN_DOCUMENT_BYTES = MEASURE_DOCUMENT_BYTES


def outcome(*, blocked: str | None, usages: int, files_planned: int, withheld: int) -> Outcome:
    """The protocol's dry-run outcome, tried in this order: blocked, none, held, partial, complete."""
    if blocked:
        return "blocked"
    if usages == 0:
        return "none"
    if files_planned == 0:
        return "held"
    return "partial" if withheld else "complete"


def usage_count(kinds: Iterable[str]) -> int:
    return sum(kind not in NOT_USAGE_KINDS for kind in kinds)


def pack_slug(pack: str) -> str:
    """The folder a pack's records go to: ``gemini/x`` -> ``gemini__x``."""
    return pack.replace("/", "__")


class WithheldRow(StrictRow):
    path: str
    line: int = Field(ge=1)
    symbol: str | None
    bail: str


class DryRunRecord(StrictRow):
    """One repository of the frame. ``outcome`` is null exactly when ``error`` says why."""

    full_name: str
    sha: str | None
    band: str
    outcome: Outcome | None
    files_planned: int | None = Field(default=None, ge=0)
    blocked: str | None = None
    usages: int | None = Field(default=None, ge=0)
    withheld: list[WithheldRow] = Field(default_factory=list)
    exit_code: int | None = None
    seconds: float | None = None
    error: str | None = None


class DryRunDocument(StrictRow):
    pack: str
    frame: str
    term: str
    obelize_version: str | None
    #: the commit of a source checkout run as the tool (absent for a release from the index)
    obelize_commit: str | None = None
    pack_sha256: str | None
    harness_commit: str | None = None
    run_at: str | None = None
    #: the frame's own account of how it was drawn and what that leaves out (``Frame``), carried so the
    #: block states them from the published document alone
    draw_rule: str | None = None
    biases: list[str] = Field(default_factory=list)
    records: list[DryRunRecord]

    def to_json(self) -> str:
        data = self.model_dump()
        for name in ("draw_rule", "biases", "obelize_commit"):  # absent when there is none to state
            if not data[name]:
                del data[name]
        return json.dumps(data, indent=2) + "\n"


class DryRunRecordError(Exception):
    """A dry-run document that cannot be read: one line (file, repository, field)."""


def parse_dryrun_document(text: str, source: str) -> DryRunDocument:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise DryRunRecordError(f"{source}: top level: (file): not JSON: {str(exc)[:200]}") from None
    try:
        return DryRunDocument.model_validate(data)
    except ValidationError as exc:
        raise DryRunRecordError(f"{source}: {row_problem(exc, data, 'records')}") from None


def load_dryrun_document(path: Path | str) -> DryRunDocument:
    return read_document(
        Path(path), MAX_DRYRUN_DOCUMENT_BYTES, parse_dryrun_document, DryRunRecordError, "top level: (file): "
    )


__all__ = [
    "DOCUMENT_NAME",
    "OUTCOMES",
    "DryRunDocument",
    "DryRunRecord",
    "DryRunRecordError",
    "WithheldRow",
    "load_dryrun_document",
    "outcome",
    "pack_slug",
    "parse_dryrun_document",
    "usage_count",
]
