"""``results/gate1/scan.json``: one Gate 1 scan over a frame, in the upstream harness's shape.

The published upstream document loads unchanged; one this harness writes has the same keys, plus
an ``error`` on a repository it could not scan (its findings are then empty and say nothing).
Finding rows leave ``bail`` and ``caused_by`` out when they are null, as upstream's do.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import Field, ValidationError

from pytest_obelize_bench._util.caps import MEASURE_DOCUMENT_BYTES
from pytest_obelize_bench._util.documents import read_document
from pytest_obelize_bench._util.safe_io import UntrustedFileError, parse_json
from pytest_obelize_bench._util.strict_model import StrictRow
from pytest_obelize_bench._util.validation import row_problem

#: Largest scan document read back (the published one is 256 KB).
MAX_SCAN_DOCUMENT_BYTES = MEASURE_DOCUMENT_BYTES


class ScanFinding(StrictRow):
    path: str = Field(min_length=1)
    line: int = Field(ge=1)
    column: int = Field(ge=0)
    kind: str
    confidence_reason: str
    symbol: str | None
    scan_status: str
    bail: str | None = None
    caused_by: list[str] | None = None


class ScanCounts(StrictRow):
    files_selected: int = Field(ge=0)
    files_parsed: int = Field(ge=0)
    findings: int = Field(ge=0)
    eligible: int = Field(ge=0)
    needs_review: int = Field(ge=0)
    unsupported: int = Field(ge=0)
    not_a_usage: int = Field(ge=0)


class Runtime(StrictRow):
    """What the repository declares about its Python (null: it declares nothing)."""

    declared: str | None
    path: str | None = None
    blocked: bool


class ScannedRepository(StrictRow):
    full_name: str
    sha: str | None
    band: str
    counts: ScanCounts | None
    #: null when the harness could not ask (a record of this harness only).
    runtime: Runtime | None
    findings: list[ScanFinding]
    seconds: float | None
    error: str | None = None


class ScanDocument(StrictRow):
    obelize_version: str | None
    pack: str
    pack_sha256: str | None
    spec_sha256: str | None
    python: str | None
    machine: str | None
    os: str | None
    #: a Gate 1 measured beside the sample's: what it scanned (a frame or a case file, project-relative), and
    #: the repositories named out of reach when it started, with why; absent from the sample's document
    source: str | None = None
    source_kind: Literal["frame", "cases"] | None = None
    unreachable: dict[str, str] = Field(default_factory=dict)
    scanned: list[ScannedRepository]

    @property
    def name(self) -> str | None:
        """The measurement's name (its source's file stem), or None for the sample's Gate 1."""
        return None if self.source is None else PurePosixPath(self.source).stem

    def to_json(self) -> str:
        """The document with upstream's omissions (null bail/caused_by/path, no null error)."""
        data = self.model_dump()
        for name in ("source", "source_kind", "unreachable"):
            if not data[name]:
                del data[name]
        for repo in data["scanned"]:
            if repo.get("error") is None:
                repo.pop("error", None)
            if repo.get("runtime") is not None and repo["runtime"].get("path") is None:
                repo["runtime"].pop("path")
            for row in repo["findings"]:
                for key in ("bail", "caused_by"):
                    if row.get(key) is None:
                        row.pop(key)
        return json.dumps(data, indent=2) + "\n"


class ScanRecordError(Exception):
    """A scan document that cannot be read: one line (file, repository, field)."""


def parse_scan_document(text: str, source: str) -> ScanDocument:
    try:
        data = parse_json(text, source)
    except UntrustedFileError as exc:
        raise ScanRecordError(f"{source}: top level: (file): {exc.problem}") from None
    try:
        return ScanDocument.model_validate(data)
    except ValidationError as exc:
        raise ScanRecordError(f"{source}: {row_problem(exc, data, 'scanned', count_more=True)}") from None


def load_scan_document(path: Path | str) -> ScanDocument:
    """Read a scan document bounded, refusing a symlink; ``ScanRecordError`` with one line."""
    return read_document(
        Path(path), MAX_SCAN_DOCUMENT_BYTES, parse_scan_document, ScanRecordError, "top level: (file): "
    )


def dump_row(row: dict[str, Any]) -> dict[str, Any]:
    """A finding row as upstream writes it: no null bail or caused_by, no evidence, no extras."""
    keys = ("path", "line", "column", "kind", "confidence_reason", "symbol", "scan_status", "bail", "caused_by")
    return {key: row.get(key) for key in keys}


__all__ = [
    "Runtime",
    "ScanCounts",
    "ScanDocument",
    "ScanFinding",
    "ScanRecordError",
    "ScannedRepository",
    "load_scan_document",
    "parse_scan_document",
]
