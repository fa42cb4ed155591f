"""The collected file, ``results/errors/round-N.json``: what a round did with every row it saw.

A round's run folders live in temporary checkouts the next round overwrites, so what the error
analysis needs is committed once per round in this file and never edited by hand. The model is
strict (unknown fields are refused) and has the upstream harness's shape, so both published
versions of upstream's round-1 file load unchanged. Building a case from graded facts is pure;
reading a file is bounded and never follows a symlink. A collected entry also reads back as the
graded facts grading takes (``graded_facts_of``), so a round whose records carry no graded facts,
like upstream's round 1, can still be graded row by row from it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from pytest_obelize_bench._util.caps import COLLECTED_ERRORS_BYTES
from pytest_obelize_bench._util.documents import read_document
from pytest_obelize_bench._util.safe_io import UntrustedFileError, parse_json_object
from pytest_obelize_bench._util.strict_model import StrictRow, committed_json
from pytest_obelize_bench._util.validation import problem_text
from pytest_obelize_bench.grading.graded_facts import Artefacts, Finding, PlanEdit, Withheld

#: The version of the collected file's shape; upstream's round-1 files are version 1 too.
SCHEMA_VERSION: Literal[1] = 1
#: A collected file of a large round is a few hundred KB; anything past this is not one.
MAX_COLLECTED_BYTES = COLLECTED_ERRORS_BYTES


class CollectedFinding(StrictRow):
    """A findings.json row reduced to positions and codes; never ``evidence``, which can quote code."""

    path: str
    line: int = Field(ge=1)
    kind: str
    symbol: str | None
    scan_status: str
    bail: str | None
    confidence_reason: str | None


class CollectedWithheld(StrictRow):
    """A run.json ``withheld[]`` row; ``caused_by`` names what kept a file back (F-1)."""

    path: str
    line: int = Field(ge=1)
    symbol: str | None
    bail: str
    caused_by: list[str] | None


class CollectedCase(StrictRow):
    run_id: str
    exit_code: int | None
    #: ``[path, line]`` of every applied edit, sorted.
    applied: list[tuple[str, int]]
    findings: list[CollectedFinding]
    withheld: list[CollectedWithheld]


class CollectedRound(StrictRow):
    round: int = Field(ge=1)
    schema_version: Literal[1]
    obelize_version: list[str]
    pack_sha256: list[str]
    cases: dict[str, CollectedCase]

    def to_json(self) -> str:
        return committed_json(self)


class CollectedFileError(ValueError):
    """A collected file that cannot be read as one; the message is one line naming the file."""


def parse_collected(text: str, source: str) -> CollectedRound:
    try:
        parse_json_object(text, source)
    except UntrustedFileError as exc:
        raise CollectedFileError(str(exc)) from None
    try:  # from the text: strict JSON mode reads a list as the tuple ``applied`` holds
        return CollectedRound.model_validate_json(text)
    except ValidationError as exc:
        raise CollectedFileError(f"{source}: {problem_text(exc.errors()[0])}") from None


def read_collected(path: Path) -> CollectedRound:
    """Read a collected file: a regular file, no symlink, within the byte cap, UTF-8 JSON, strict."""
    return read_document(Path(path), MAX_COLLECTED_BYTES, parse_collected, CollectedFileError)


# -- building one from graded facts (pure) ------------------------------------------------------


def applied_positions(artefacts: Artefacts) -> list[tuple[str, int]]:
    """Sorted unique ``(path, line)`` of every ``auto`` edit whose file obelize wrote."""
    written = set(artefacts.written)
    return sorted(
        {(edit.path, edit.line) for edit in artefacts.edits if edit.status == "auto" and edit.path in written}
    )


def collect_case(artefacts: Artefacts, source: str) -> CollectedCase:
    """One case's entry from its graded facts; a ValueError when the facts predate what it needs."""
    if artefacts.run_id is None:
        raise ValueError(
            f"{source}: the graded facts name no run_id (graded facts of version 1, or a run.json without one)"
        )
    return CollectedCase(
        run_id=artefacts.run_id,
        exit_code=artefacts.exit_code,
        applied=applied_positions(artefacts),
        findings=[
            CollectedFinding(
                path=f.path,
                line=f.line,
                kind=f.kind,
                symbol=f.symbol,
                scan_status=f.scan_status,
                bail=f.bail,
                confidence_reason=f.confidence_reason,
            )
            for f in artefacts.findings
        ],
        withheld=[
            CollectedWithheld(
                path=w.path,
                line=w.line,
                symbol=w.symbol,
                bail=w.bail,
                caused_by=None if w.caused_by is None else list(w.caused_by),
            )
            for w in artefacts.withheld
        ],
    )


def graded_facts_of(case: CollectedCase) -> Artefacts:
    """The graded facts a collected entry stands for, as far as grading reads them: each applied
    edit an ``auto`` edit of a file obelize wrote, each finding and withheld row as collected.

    What the collected file does not keep is not invented: no plan edit that did not land, no
    token counts (no model was consulted), and one edit per position where the plan may have had
    two, so ``false_positive_edit`` can only be smaller than the record's.
    """
    return Artefacts(
        findings=tuple(
            Finding(f.path, f.line, f.kind, f.symbol, f.scan_status, f.bail, f.confidence_reason) for f in case.findings
        ),
        edits=tuple(PlanEdit(path, line, "auto", None, None) for path, line in case.applied),
        written=tuple(sorted({path for path, _ in case.applied})),
        withheld=tuple(
            Withheld(w.path, w.line, w.symbol, w.bail, None if w.caused_by is None else tuple(w.caused_by))
            for w in case.withheld
        ),
        exit_code=case.exit_code,
        model_used=False,
        llm_tokens_in=None,
        llm_tokens_out=None,
        llm_cost_usd=None,
        run_id=case.run_id,
    )


def collected_round(
    number: int,
    cases: Mapping[str, CollectedCase],
    obelize_versions: Iterable[str | None],
    pack_sha256s: Iterable[str | None],
) -> CollectedRound:
    """The whole file: provenance lists are the sorted distinct values the records name."""
    return CollectedRound(
        round=number,
        schema_version=SCHEMA_VERSION,
        obelize_version=sorted({v for v in obelize_versions if v}),
        pack_sha256=sorted({v for v in pack_sha256s if v}),
        cases=dict(sorted(cases.items())),
    )
