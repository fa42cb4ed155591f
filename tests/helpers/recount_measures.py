"""The comparison's, Gate 1's and the dry runs' counts, counted again from ``results/`` by small code of
their own, for the test that holds the generated pages to the data. Nothing here calls the package.

* Comparison: a key row is cleared when the scan after an arm no longer reports its (path, kind,
  symbol), the key's ``dynamic`` being the scanner's ``text_mention``; reports beyond the key's count
  of a triple are taken to be the ones that remain; a deleted key file clears nothing. What upstream's
  round-1 record does not carry of obelize's pass (runtime, compile check, suite) is its round record's.
* Gate 1: findings against an answer key as multisets of (path, line, kind, symbol).
* Dry run: outcomes, blocked reasons and bails as each repository's record states them.
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.helpers.project import PROJECT
from tests.helpers.recount_rounds import ACTIONABLE, RESULTS, keys, read

Triple = tuple[str, str, str | None]
NOT_RUN: dict[str, Any] = {"status": "not_run", "passed": None, "failed": None, "skipped": None}


def comparison_rounds() -> list[int]:
    return sorted(int(p.stem.split("-")[1]) for p in (RESULTS / "comparison").glob("round-*.json"))


def _triples(findings: list[list[Any]]) -> Counter[Triple]:
    return Counter((path, kind, symbol) for path, _line, kind, symbol in findings)


def key_triples(key: dict[str, Any]) -> Counter[Triple]:
    truth = key.get("ground_truth") or {}
    rows = [(r["path"], "text_mention" if r["kind"] == "dynamic" else r["kind"], r["symbol"])
            for r in truth.get("call_sites") or []]  # fmt: skip
    rows += [(r["path"], "manifest", r["symbol"]) for r in truth.get("manifests") or []]
    return Counter(rows)


def _legacy(symbol: str | None, roots: set[str]) -> bool:
    return symbol is not None and any(symbol == root or symbol.startswith(root + ".") for root in roots)


def _tier(arm: dict[str, Any], baseline: dict[str, Any], covers: bool) -> str:
    after = arm["tests_after"] or NOT_RUN
    changed = arm["files"] > 0
    if arm["error"]:
        return "error"
    if (
        arm["patch_correct"] is False
        or arm["compiles"] is False
        or (changed and baseline["status"] == "pass" and after["status"] == "fail")
    ):
        return "wrong"
    if not changed:
        return "unsupported"
    if arm["left"] > 0:
        return "partial"
    ran = after.get("passed") is None or after["passed"] > 0
    ok = arm["patch_correct"] is True and baseline["status"] == after["status"] == "pass" and ran and covers
    return "verified_success" if ok else "patched_unverified"


def ceiling_open(key: dict[str, Any], rules: bool) -> bool:
    """Whether no key-level cap holds the case below ``verified_success`` for an arm."""
    truth = key.get("ground_truth") or {}
    rows = (truth.get("call_sites") or []) + (truth.get("manifests") or [])
    if key["is_control"] or key.get("retired") or not rows or key.get("test_cmd") is None:
        return False
    if truth.get("tests_cover_change") is not True:
        return False
    return not rules or (all(r["label"] == "auto" for r in rows) and all(r.get("kind") != "dynamic" for r in rows))


@dataclass(frozen=True)
class Comparison:
    round: int
    agent: str
    record: dict[str, Any]
    review: dict[str, Any]


def comparison(n: int) -> Comparison:
    record = read(RESULTS / "comparison" / f"round-{n}.json")
    path = PROJECT / "cases" / f"comparison-round-{n}.yaml"
    review = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("reviews", {}) if path.is_file() else {}
    agent = next((arm for arm in record["arms"] if arm != "obelize"), "general_agent")
    return Comparison(n, agent, record, review)


def arm_case(c: Comparison, case_id: str, arm: str) -> dict[str, Any]:
    """One arm on one case, every figure the summary and the case's page state."""
    case, key = c.record["cases"][case_id], keys()[case_id]
    record_path = RESULTS / f"round-{c.round}" / f"{case_id}.json"
    measured = read(record_path)["measurements"] if record_path.is_file() else {}
    if arm == "obelize":
        changes, own = case["obelize_changes"], case.get("obelize")
        if own is not None:
            compiles, deleted, runtime = (
                own.get("compiles"),
                own.get("missing_key_files") or [],
                own.get("runtime_seconds"),
            )
            after = own.get("tests_after") or measured.get("tests_after")
        else:
            compiles, deleted, runtime = measured.get("patch_compiles"), [], measured.get("runtime_seconds")
            after = measured.get("tests_after")
    else:
        changes, compiles, deleted = case["changes"], case["compiles"], case["missing_key_files"]
        runtime, after = case["runtime_seconds"], case.get("tests_after")
    changed = {change["path"] for change in changes}
    want = key_triples(key)
    key_paths = {t[0] for t in want}
    one = (c.review.get(arm) or {}).get(case_id)
    wrong = len((one or {}).get("wrong") or [])
    error = next((f"{e['step']}: {e['reason']}" for e in case.get("errors") or [] if e["arm"] == arm), None)
    base, found = case["findings"].get("base"), case["findings"].get(arm)
    key_rows = sum(want.values())
    out: dict[str, Any] = {
        "key rows": key_rows, "files": len(changed), "files off the key": len(changed - key_paths),
        "runtime": runtime, "compiles": compiles, "tests_after": after, "error": error,
        "patch_correct": None if one is None or not changed else not wrong, "rejected": wrong,
    }  # fmt: skip
    if error or base is None or found is None:
        out.update({"rows seen": 0, "cleared": 0, "left": key_rows, "added": 0, "corrections": key_rows + wrong})
    else:
        before, now = _triples(base), _triples(found)
        seen = want & before
        cleared = 0
        for triple, count in seen.items():
            if triple[0] not in deleted:
                cleared += count - min(count, max(0, now[triple] - (before[triple] - count)))
        roots = {".".join(symbol.split(".")[:2]) for _, _, symbol in list(want) + list(before) if symbol}
        added = sum(n for triple, n in (now - before).items() if _legacy(triple[2], roots))
        left = key_rows - cleared
        out.update({"rows seen": sum(seen.values()), "cleared": cleared, "left": left, "added": added,
                    "corrections": left + wrong})  # fmt: skip
    baseline = case.get("tests_baseline") or measured.get("tests_baseline") or NOT_RUN
    out["tier"] = _tier(out, baseline, (key.get("ground_truth") or {}).get("tests_cover_change") is True)
    out["ceiling open"] = ceiling_open(key, rules=arm == "obelize")
    out["plan migrated"] = (case.get("obelize") or {}).get("plan_migrated") if case.get("obelize") else (
        None if measured.get("unmigrated") is None or read(record_path).get("error") is not None
        else sum(want.values()) - measured["unmigrated"]
    )  # fmt: skip
    return out


# -- Gate 1 ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KeyCount:
    """One labelled repository's findings against its key, each side a multiset."""

    labelled: int
    findings: int
    true_positive: int
    other_matched: int
    other_missing: int
    other_unexpected: int
    forbidden: int


def _labels(folder: Path, repositories: set[str] | None) -> dict[str, dict[str, Any]]:
    labels = [yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.yaml"))]
    return {key["repository"]: key for key in labels if repositories is None or key["repository"] in repositories}


def _case_keys(case_file: Path, pack: str) -> dict[str, dict[str, Any]]:
    """A case file's reviewed cases of ``pack`` as answer keys: the actionable call sites, the pins and
    ``dynamic`` rows as the other rows, the must-not-report positions."""
    data = yaml.safe_load(case_file.read_text(encoding="utf-8"))
    keys = {}
    for case in data["cases"]:
        if case.get("retired") or f"{case['provider']}/{case['change']}" != pack or not case.get("sha"):
            continue
        if not case.get("reviewer") or not case.get("reviewed_at"):
            continue
        truth = case["ground_truth"]
        sites = truth.get("call_sites") or []
        keys[case["full_name"]] = {
            "sha": case["sha"],
            "call_sites": [r for r in sites if r["kind"] in ACTIONABLE],
            "expected_other": [{**r, "kind": "manifest"} for r in truth.get("manifests") or []]
            + [r for r in sites if r["kind"] == "dynamic"],
            "must_not_report": truth.get("must_not_report") or [],
        }
    return keys


def gate1_stems() -> list[str]:
    """The page stems of the published Gate 1s, read from the folders alone (a test's parameters: no key
    is parsed while the suite is collected)."""
    folder = RESULTS / "gate1"
    stems = ["gate1"] if (folder / "scan.json").is_file() else []
    return stems + [f"gate1-{scan.parent.name}" for scan in sorted(folder.glob("*/scan.json"))]


@functools.cache
def gate1_published() -> dict[str, tuple[dict[str, Any], dict[str, dict[str, Any]]]]:
    """Each published Gate 1 by its page's stem (``gate1``, ``gate1-<name>``): its scan document and
    the answer keys of what it names as its source, less the repositories it named out of reach."""
    folder = RESULTS / "gate1"
    out = {}
    if (folder / "scan.json").is_file():
        out["gate1"] = (read(folder / "scan.json"), _labels(PROJECT / "cases" / "gate1" / "labels", None))
    for scan in sorted(folder.glob("*/scan.json")):
        document = read(scan)
        source = PROJECT / document["source"]
        if document.get("source_kind") == "cases":
            keys = _case_keys(source, document["pack"])
        else:
            frame = yaml.safe_load(source.read_text(encoding="utf-8"))
            keys = _labels(source.parent / "labels", {repo["full_name"] for repo in frame["repositories"]})
        away = set(document.get("unreachable") or {})
        out[f"gate1-{scan.parent.name}"] = (document, {name: key for name, key in keys.items() if name not in away})
    return out


def gate1_counts(document: dict[str, Any], keys: dict[str, dict[str, Any]]) -> dict[str, KeyCount | None]:
    """Each key's repository against its scan; None without a usable scan of its pinned commit."""
    scanned = {repo["full_name"]: repo for repo in document["scanned"]}
    out: dict[str, KeyCount | None] = {}
    for name, key in keys.items():
        repo = scanned.get(name)
        if repo is None or repo.get("error") or repo.get("sha") != key["sha"]:
            out[name] = None
            continue
        rows = [(f["path"], f["line"], f["kind"], f["symbol"]) for f in repo["findings"]]
        found = Counter(row for row in rows if row[2] in ACTIONABLE)
        other = Counter(row for row in rows if row[2] not in ACTIONABLE)
        want = Counter((r["path"], r["line"], r["kind"], r["symbol"]) for r in key.get("call_sites") or [])
        expected = Counter((r["path"], r["line"], r["kind"], r["symbol"]) for r in key.get("expected_other") or [])
        forbidden = {(r["path"], r["line"]) for r in key.get("must_not_report") or []}
        out[name] = KeyCount(
            labelled=sum(want.values()), findings=sum(found.values()), true_positive=sum((want & found).values()),
            other_matched=sum((expected & other).values()), other_missing=sum((expected - other).values()),
            other_unexpected=sum((other - expected).values()),
            forbidden=sum(1 for row in rows if (row[0], row[1]) in forbidden),
        )  # fmt: skip
    return out


# -- dry runs ------------------------------------------------------------------------------------


def dry_runs() -> dict[str, dict[str, Any]]:
    """Each published dry run's document, by its pack's slug."""
    return {p.parent.name: read(p) for p in sorted((RESULTS / "dryrun").glob("*/dryrun.json"))}


def dryrun_outcome(record: dict[str, Any]) -> str | None:
    """The protocol's order: blocked, none, held, partial, complete; null for an errored record."""
    if record.get("error") or record.get("outcome") is None:
        return None
    if record.get("blocked"):
        return "blocked"
    if not record.get("usages"):
        return "none"
    if not record.get("files_planned"):
        return "held"
    return "partial" if record.get("withheld") else "complete"


def page_path(name: str) -> Path:
    return PROJECT / "docs" / "results" / name


__all__ = [
    "Comparison",
    "KeyCount",
    "arm_case",
    "ceiling_open",
    "comparison",
    "comparison_rounds",
    "dry_runs",
    "dryrun_outcome",
    "gate1_counts",
    "gate1_published",
    "gate1_stems",
    "key_triples",
    "page_path",
]
