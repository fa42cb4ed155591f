"""The graded facts: what grading needs from one obelize run, and their stored JSON form.

The facts are stored beside a round's records so a round can be re-graded after its run folders
are gone.  They hold only positions, kinds, symbols and statuses, never obelize's ``evidence``,
which can quote the repository.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from pytest_obelize_bench._util.strict_model import committed_json


@dataclass(frozen=True)
class Finding:
    """A scan-time row of findings.json (``symbol`` is null only for a parse_error)."""

    path: str
    line: int
    kind: str
    symbol: str | None
    scan_status: str
    bail: str | None
    #: Why the scan resolved (or could not resolve) the symbol; null in graded facts of version 1.
    confidence_reason: str | None = None


@dataclass(frozen=True)
class PlanEdit:
    """A row of plan.json ``edits[]``: what the rules produced, written or not."""

    path: str
    line: int
    status: str
    rule_id: str | None
    reason: str | None


@dataclass(frozen=True)
class Withheld:
    """A row of run.json ``withheld[]``: a fix-time row the run refused, and why."""

    path: str
    line: int
    symbol: str | None
    bail: str
    #: The bails that kept the file back (``file_not_fully_migrated`` rows only); null otherwise
    #: and in graded facts of version 1.
    caused_by: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Artefacts:
    """What grading needs from one obelize run folder.

    ``written`` is run.json ``file_edits[].path`` (what was really written), ``refused`` the codes
    of run.json ``refused[]`` (``tree_dirty`` means the whole apply was refused).  ``model_used``
    is whether run.json names a model that was consulted; the token and cost fields are null when
    the folder says nothing (obelize 0.8.0 has no cost field at all).
    """

    findings: tuple[Finding, ...]
    edits: tuple[PlanEdit, ...]
    written: tuple[str, ...]
    withheld: tuple[Withheld, ...]
    exit_code: int | None
    model_used: bool
    llm_tokens_in: int | None
    llm_tokens_out: int | None
    llm_cost_usd: float | None
    refused: tuple[str, ...] = ()
    #: run.json ``run_id``; null when the folder does not say (and in graded facts of version 1).
    run_id: str | None = None


#: Stored with the records so a round can be re-graded after its run folders are gone. Only
#: positions, kinds, symbols and statuses: never ``evidence``, which can quote the repository.
#: Version 2 adds what the error analysis needs (``run_id``, each finding's
#: ``confidence_reason``, each withheld row's ``caused_by``); version 1 files still load, with
#: those fields null.
GRADED_FACTS_VERSION = 2
READABLE_GRADED_FACTS_VERSIONS = (1, 2)


def artefacts_to_json(artefacts: Artefacts) -> str:
    data = dataclasses.asdict(artefacts)
    data["graded_facts_version"] = GRADED_FACTS_VERSION
    return committed_json(data)


def artefacts_from_json(text: str, source: str = "<artefacts>") -> Artefacts:
    """Read what ``artefacts_to_json`` wrote; a ValueError names the file and the problem."""
    try:
        data = json.loads(text)
        version = data.pop("graded_facts_version", None)
        if version not in READABLE_GRADED_FACTS_VERSIONS:
            raise ValueError(f"graded_facts_version {version!r} is not one of {READABLE_GRADED_FACTS_VERSIONS}")
        withheld = []
        for row in data["withheld"]:
            caused_by = row.pop("caused_by", None)
            withheld.append(Withheld(**row, caused_by=None if caused_by is None else tuple(caused_by)))
        return Artefacts(
            findings=tuple(Finding(**row) for row in data["findings"]),
            edits=tuple(PlanEdit(**row) for row in data["edits"]),
            written=tuple(data["written"]),
            withheld=tuple(withheld),
            exit_code=data["exit_code"],
            model_used=data["model_used"],
            llm_tokens_in=data["llm_tokens_in"],
            llm_tokens_out=data["llm_tokens_out"],
            llm_cost_usd=data["llm_cost_usd"],
            refused=tuple(data.get("refused", ())),
            run_id=data.get("run_id"),
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"{source}: not a graded-facts document: {exc}") from None
