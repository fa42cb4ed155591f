"""A round's figures counted again from ``results/`` by small code of its own, for the test that holds
the generated pages to the data.

Nothing here calls the package: the records, the graded facts beside them, the round's collected
error analysis and the case file are read as JSON and YAML, and each count is the protocol's
definition written out again (a key row is migrated when nothing withheld its path, line and symbol
and an applied edit landed on its line; withheld by its own bail; derived when only its file or
repository was held; missed otherwise).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from tests.helpers.project import PROJECT

RESULTS = PROJECT / "results"
ACTIONABLE = frozenset({"import", "call", "method_call", "attribute"})
DERIVED = frozenset({"file_not_fully_migrated", "repo_not_fully_migrated"})
STATES = ("migrated", "withheld", "derived", "missed")
_NOT_RECORDS = frozenset({"publication.json", "summary.json", "history.json"})
_PERMISSIVE = re.compile(r"MIT|BSD-[0-9]+-Clause|Apache-2\.0|ISC", re.IGNORECASE)


def read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


PROJECT_CASES = PROJECT / "cases" / "cases.yaml"


def case_file_path(n: int | None = None) -> Path:
    """The case file round ``n`` was run from: its publication note's, else its newest run's that
    names one, else the project's (an imported round, or none given)."""
    if n is None:
        return PROJECT_CASES
    folder = RESULTS / f"round-{n}"
    note = read(folder / "publication.json") if (folder / "publication.json").is_file() else None
    named = (note.get("case_file") or {}).get("path") if note is not None else None
    if note is None:
        for run in sorted((folder / "runs").glob("*/run.json"), reverse=True):
            named = (read(run).get("case_file") or {}).get("path")
            if named:
                break
    path = Path(named) if named and Path(named).is_absolute() else PROJECT / (named or "")
    return path if named and path.is_file() else PROJECT_CASES


@cache
def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data


def case_file(n: int | None = None) -> dict[str, Any]:
    """Round ``n``'s case file, or the project's."""
    return _load(case_file_path(n))


def keys(n: int | None = None) -> dict[str, dict[str, Any]]:
    """Every row of round ``n``'s case file (the project's without ``n``) by id; a control's id is its
    full name with ``__``."""
    rows = {case["id"]: {**case, "is_control": False} for case in case_file(n)["cases"]}
    for control in case_file(n).get("controls") or []:
        rows[control["full_name"].replace("/", "__")] = {**control, "is_control": True}
    return rows


def key_rows(key: dict[str, Any]) -> list[tuple[str, int, str]]:
    truth = key.get("ground_truth") or {}
    return [
        (r["path"], r["line"], r["symbol"]) for r in (truth.get("call_sites") or []) + (truth.get("manifests") or [])
    ]


def publishable(license: str | None) -> bool:
    if not license or "(" in license or " WITH " in license:
        return False
    if " OR " in license:
        return any(publishable(part) for part in license.split(" OR "))
    if " AND " in license:
        return all(publishable(part) for part in license.split(" AND "))
    return " " not in license.strip() and _PERMISSIVE.fullmatch(license.strip()) is not None


def published_rounds() -> list[int]:
    found = []
    for folder in RESULTS.glob("round-*"):
        if folder.is_dir() and any(p.suffix == ".json" and p.name not in _NOT_RECORDS for p in folder.iterdir()):
            found.append(int(folder.name.split("-")[1]))
    return sorted(found)


@dataclass(frozen=True)
class Attempt:
    case: str
    number: int
    stem: str
    record: dict[str, Any]


def attempts(n: int) -> dict[str, list[Attempt]]:
    """Every record of round ``n``, by case, first attempt first."""
    by_case: dict[str, list[Attempt]] = {}
    for path in sorted((RESULTS / f"round-{n}").glob("*.json")):
        if path.name in _NOT_RECORDS:
            continue
        case, mark, number = path.stem.rpartition(".attempt-")
        attempt = int(number) if mark and number.isdigit() else 1
        case = case if mark and number.isdigit() else path.stem
        by_case.setdefault(case, []).append(Attempt(case, attempt, path.stem, read(path)))
    return {case: sorted(found, key=lambda a: a.number) for case, found in sorted(by_case.items())}


def publication(n: int) -> dict[str, Any]:
    path = RESULTS / f"round-{n}" / "publication.json"
    return read(path) if path.is_file() else {}


def collected(n: int) -> dict[str, Any]:
    path = RESULTS / "errors" / f"round-{n}.json"
    return read(path)["cases"] if path.is_file() else {}


@dataclass(frozen=True)
class Evidence:
    """What the run did, from the graded facts beside the record or from the error analysis."""

    source: str  # "graded_facts" or "error_analysis"
    findings: list[dict[str, Any]]
    applied: set[tuple[str, int]]
    written: set[str]
    withheld: list[dict[str, Any]]


def evidence(n: int, attempt: Attempt) -> Evidence | None:
    facts = RESULTS / f"round-{n}" / "artefacts" / f"{attempt.stem}.json"
    if facts.is_file():
        data = read(facts)
        written = set(data["written"])
        applied = {(e["path"], e["line"]) for e in data["edits"] if e["status"] == "auto" and e["path"] in written}
        return Evidence("graded_facts", data["findings"], applied, written, data["withheld"])
    entry = collected(n).get(attempt.case) if attempt.number == 1 else None
    if entry is None:
        return None
    applied = {(path, line) for path, line in entry["applied"]}
    return Evidence("error_analysis", entry["findings"], applied, {p for p, _ in applied}, entry["withheld"])


def states(key: dict[str, Any], ev: Evidence) -> list[tuple[tuple[str, int, str], str]]:
    """Each key row with what the run did with it."""
    bails: dict[tuple[str, int, str], str] = {}
    for row in ev.withheld:
        at = (row["path"], row["line"], row["symbol"] or "")
        if at not in bails or (bails[at] in DERIVED and row["bail"] not in DERIVED):
            bails[at] = row["bail"]
    out = []
    for at in key_rows(key):
        bail = bails.get(at)
        if bail is None:
            out.append((at, "migrated" if (at[0], at[1]) in ev.applied else "missed"))
        else:
            out.append((at, "derived" if bail in DERIVED else "withheld"))
    return out


def regraded(key: dict[str, Any], ev: Evidence) -> dict[str, Any]:
    """The record's counts from the evidence: found, false positives, missed call sites, rows left."""
    truth = key.get("ground_truth") or {}
    want = Counter((r["path"], r["line"], r["kind"], r["symbol"]) for r in truth.get("call_sites") or []
                   if r["kind"] in ACTIONABLE)  # fmt: skip
    found = Counter(
        (f["path"], f["line"], f["kind"], f["symbol"] or "") for f in ev.findings if f["kind"] in ACTIONABLE
    )
    both = sum((want & found).values())
    held = {(w["path"], w["line"], w["symbol"] or "") for w in ev.withheld}
    rows = [] if key["is_control"] else key_rows(key)
    return {
        "detected": sum(found.values()),
        "false_positive": sum(found.values()) - both,
        "missed_call_site": sum(want.values()) - both,
        "unmigrated": sum(1 for r in rows if r in held or (r[0], r[1]) not in ev.applied),
        "patch_applied": bool(ev.written),
    }


def held(record: dict[str, Any], ev: Evidence | None) -> bool | None:
    """A negative control held: no error, no call site, no pin, nothing applied."""
    m = record["measurements"]
    if record.get("error") is not None:
        return None
    pins = m.get("manifest_reported")
    if pins is None and ev is not None:
        pins = sum(1 for f in ev.findings if f["kind"] == "manifest")
    values = (m.get("detected"), pins, m.get("false_positive_edit"))
    if any((v or 0) > 0 for v in values) or m.get("patch_applied") is True:
        return False
    return None if any(v is None for v in (*values, m.get("patch_applied"))) else True


@dataclass(frozen=True)
class Entry:
    """A case as a round sees it: split and control from its record when it has one."""

    case: str
    record: dict[str, Any] | None
    control: bool
    split: str | None
    pattern: tuple[str, ...]


def entries(n: int) -> list[Entry]:
    """Round ``n``'s cases: its records, and the case file's every row from the file's own round on."""
    records = {case: found[0].record for case, found in attempts(n).items()}
    ids = set(records) | (set(keys(n)) if n >= case_file(n)["round"] else set())
    out = []
    for case in sorted(ids):
        key, record = keys(n).get(case), records.get(case)
        control = record["control"] if record else bool(key and key["is_control"])
        split = record.get("split") if record else (None if control or key is None else key.get("split"))
        pattern = tuple(sorted(set((key or {}).get("pattern_key") or ()))) or (f"own:{case}",)
        out.append(Entry(case, record, control, split, pattern))
    return out


def model_arm(record: dict[str, Any]) -> bool:
    return (record["measurements"].get("llm_tokens_in") or 0) > 0


__all__ = [
    "DERIVED",
    "RESULTS",
    "STATES",
    "Attempt",
    "Entry",
    "Evidence",
    "attempts",
    "case_file",
    "case_file_path",
    "collected",
    "entries",
    "evidence",
    "held",
    "key_rows",
    "keys",
    "model_arm",
    "publication",
    "publishable",
    "published_rounds",
    "read",
    "regraded",
    "states",
]
