"""The documents of an obelize run folder (findings.json, plan.json, run.json) as strict models.

Only the fields grading needs are modelled, each with the type the harness relies on (strict: a
``"3"`` is not a line number, ``true`` is not a count); every other field is ignored, so the
models read every obelize release (0.1.0 writes ``pack`` where 0.8.0 writes ``packs[]``).  Paths
are checked lexically here; whether a written file resolves inside the checkout needs the
checkout, so ``runfolder`` checks that.

A document that does not fit is one ``DocumentError`` whose problem is one line naming the
field, such as ``findings[0].line: expected an integer >= 1, got the number 0``.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import ErrorDetails, PydanticCustomError

from pytest_obelize_bench._util.caps import TOOL_DOCUMENT_BYTES
from pytest_obelize_bench.grading.graded_facts import Artefacts, Finding, PlanEdit, Withheld

#: Largest run-folder document read (findings.json of a big repository is a few MB).
MAX_DOCUMENT_BYTES = TOOL_DOCUMENT_BYTES
#: The documents grading reads, and the one copied only when the licence lets it be published.
DOCUMENTS: tuple[str, ...] = ("findings.json", "plan.json", "run.json")
PATCH = "patch.diff"

#: A run id is used as one path component: no separator, no dot-only name, nothing hidden.
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def path_problem(path: str) -> str | None:
    """Why a path from a run folder cannot name a file inside the checkout, or None.

    Paths are repository-relative with ``/``; an absolute one, a Windows drive or UNC path, a
    ``..`` component (in either separator), an empty one, or one with a NUL byte is refused.
    """
    if not path:
        return "is empty"
    if "\x00" in path:
        return "contains a NUL byte"
    if path.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", path):
        return "is absolute"
    if ".." in re.split(r"[/\\]", path):
        return "leaves the checkout ('..')"
    return None


def _checked_path(value: str) -> str:
    problem = path_problem(value)
    if problem is not None:
        raise PydanticCustomError("run_path", "{problem}", {"problem": problem})
    return value


def _checked_run_id(value: str | None) -> str | None:
    if value is not None and not RUN_ID.fullmatch(value):
        raise PydanticCustomError("run_id", "not a run id")
    return value


RunPath = Annotated[str, AfterValidator(_checked_path)]
Line = Annotated[int, Field(ge=1)]
Count = Annotated[int, Field(ge=0)]


class _Document(BaseModel):
    """Strict where the harness relies on a type, silent about fields it does not read."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class FindingRow(_Document):
    path: RunPath
    line: Line
    kind: str
    symbol: str | None = None
    scan_status: str
    bail: str | None = None
    confidence_reason: str | None = None

    def fact(self) -> Finding:
        return Finding(
            self.path, self.line, self.kind, self.symbol, self.scan_status, self.bail, self.confidence_reason
        )


class FindingsDocument(_Document):
    findings: list[FindingRow]


class EditRow(_Document):
    path: RunPath
    line: Line
    status: str
    rule_id: str | None = None
    reason: str | None = None

    def fact(self) -> PlanEdit:
        return PlanEdit(self.path, self.line, self.status, self.rule_id, self.reason)


class PlanDocument(_Document):
    edits: list[EditRow]


class FileEditRow(_Document):
    path: RunPath


class WithheldRow(_Document):
    path: RunPath
    line: Line
    symbol: str | None = None
    bail: str
    caused_by: list[str] | None = None

    def fact(self) -> Withheld:
        caused_by = None if self.caused_by is None else tuple(self.caused_by)
        return Withheld(self.path, self.line, self.symbol, self.bail, caused_by)


class RefusedRow(_Document):
    code: str


class ModelUse(_Document):
    """run.json ``model``: the counts are read only when a provider other than ``none`` was named."""

    provider: Any = None
    tokens_in: Count | None = None
    tokens_out: Count | None = None
    cost_usd: Annotated[float, Field(ge=0)] | None = None

    @model_validator(mode="before")
    @classmethod
    def _unused_counts_are_not_read(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("provider") in (None, "none"):
            return {"provider": data.get("provider")}
        return data

    @property
    def used(self) -> bool:
        return self.provider not in (None, "none")


class RunDocument(_Document):
    # In the order the fields are checked, so the first problem reported is the same as ever.
    run_id: Annotated[str | None, AfterValidator(_checked_run_id)] = None
    file_edits: list[FileEditRow]
    withheld: list[WithheldRow]
    refused: list[RefusedRow] | None = None
    exit_code: int | None = None
    model: ModelUse | None = None


class DocumentError(ValueError):
    """One run-folder document that does not fit its model; ``problem`` names the field."""

    def __init__(self, document: str, problem: str) -> None:
        super().__init__(f"{document}: {problem}")
        self.document = document
        self.problem = problem


#: What a field must be, where the type alone does not say it.
_EXPECTED = {
    "line": "an integer >= 1",
    "exit_code": "an integer",
    "tokens_in": "a count",
    "tokens_out": "a count",
    "cost_usd": "a non-negative number",
    "caused_by": "a list of codes",
    "run_id": "a run id",
}
_BY_TYPE = {"string_type": "a string", "list_type": "a list"}
_OBJECT_TYPES = frozenset({"model_type", "model_attributes_type", "dict_type"})


def kind(value: Any) -> str:
    """A short description of an unexpected JSON value, for an error detail."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value[:60]!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


def _where(loc: list[int | str]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text or "top level"


def _at(data: Any, loc: list[int | str]) -> Any:
    for part in loc:
        data = data[part]
    return data


def _problem(error: ErrorDetails, data: Any) -> str:
    """The first validation error as the one-line problem the harness reports."""
    loc = list(error["loc"])
    code = error["type"]
    if code in _OBJECT_TYPES:
        return f"{_where(loc)}: expected an object, got {kind(error['input'])}"
    value = error["input"]
    if loc and isinstance(loc[-1], int):  # a bad item of a list of scalars: the list is wrong
        loc = loc[: max(i for i, part in enumerate(loc) if isinstance(part, str)) + 1]
        value = _at(data, loc)
    where = _where(loc)
    if code == "run_path":
        return f"{where} {str(value)[:200]!r} {(error.get('ctx') or {}).get('problem')}"
    field = str(loc[-1]) if loc else ""
    expected = _EXPECTED.get(field) or _BY_TYPE.get(code) or "a string"
    if code == "missing":
        return f"{where}: missing" if len(loc) == 1 else f"{where}: expected {expected}, got null"
    return f"{where}: expected {expected}, got {kind(value)}"


def parse_document[M: _Document](model: type[M], document: str, data: Any) -> M:
    """``data`` (parsed JSON) as ``model``; ``DocumentError`` naming the first field that does not fit."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise DocumentError(document, _problem(exc.errors()[0], data)) from None


def artefacts(findings: FindingsDocument, plan: PlanDocument, run: RunDocument) -> Artefacts:
    """The graded facts of one run folder's three documents."""
    used = run.model is not None and run.model.used
    model = run.model if used else None
    return Artefacts(
        findings=tuple(row.fact() for row in findings.findings),
        edits=tuple(row.fact() for row in plan.edits),
        written=tuple(row.path for row in run.file_edits),
        withheld=tuple(row.fact() for row in run.withheld),
        exit_code=run.exit_code,
        model_used=used,
        llm_tokens_in=None if model is None else model.tokens_in,
        llm_tokens_out=None if model is None else model.tokens_out,
        llm_cost_usd=None if model is None or model.cost_usd is None else float(model.cost_usd),
        refused=() if run.refused is None else tuple(row.code for row in run.refused),
        run_id=run.run_id,
    )
