"""Every published round's pages state what ``results/`` holds: each count is counted again here from
the records, the graded facts beside them, the round's error analysis and the case file, by this
test's own small code (``tests/helpers/recount_rounds.py``), never by the renderer, and compared with
the committed page's text. The round page holds the results document's section (``test_site.py``),
so the document is held to the data too. Generic over every round published in ``results/``.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest
import yaml

from tests.helpers import recount_rounds as rr
from tests.helpers.page_tables import page, plain, section, table_under, tables
from tests.helpers.project import PROJECT

ROUNDS = rr.published_rounds()
TIERS = ("error", "wrong", "unsupported", "partial", "verified_success", "patched_unverified")
_STATE_OF = {"migrated": "migrated", "withheld by": "withheld", "withheld:": "derived", "missed": "missed"}


def text(value: object) -> str:
    return "--" if value is None else str(value)


def test_every_published_round_has_its_pages() -> None:
    assert ROUNDS, "no published round in results/"
    for n in ROUNDS:
        assert sorted(p.stem for p in (PROJECT / "docs" / "results" / f"round-{n}").glob("*.md")) == sorted(
            rr.attempts(n)
        )


@pytest.mark.parametrize("n", ROUNDS)
def test_the_round_page_counts_what_its_records_hold(n: int) -> None:
    shown = page(f"round-{n}.md")
    entries = rr.entries(n)
    graded = [e for e in entries if not e.control]
    overview = {row[0]: row[1] for row in tables(shown)[0].rows}
    assert overview["Graded cases (n)"] == str(len(graded))
    splits = Counter(e.split for e in graded)
    assert overview["dev / holdout"] == f"{splits['dev']} / {splits['holdout']}"
    assert overview["Negative controls"] == str(sum(e.control for e in entries))
    assert overview["Records"].startswith(f"{len(rr.attempts(n))} ")
    headline = [e for e in graded if e.record is not None and not rr.model_arm(e.record)]
    tiers = table_under(shown, "Outcome tiers").by("Tier")
    for tier in TIERS:
        counts = Counter(e.split for e in headline if e.record and e.record["tier"] == tier)
        row = tiers[tier]
        assert [row["dev"], row["holdout"], row["Total"]] == [
            str(counts["dev"]), str(counts["holdout"]), str(sum(counts.values()))
        ], tier  # fmt: skip
    rates = table_under(shown, "Headline: verified_success")
    for scope, split, stated_n, won in (row[:4] for row in rates.rows):
        members = [e for e in headline if split == "all" or e.split == split]
        if scope == "Cases":
            expected = (len(members), sum(e.record["tier"] == "verified_success" for e in members if e.record))
        else:
            patterns: dict[tuple[str, ...], bool] = {}
            for e in members:
                patterns[e.pattern] = patterns.get(e.pattern, False) or bool(
                    e.record and e.record["tier"] == "verified_success"
                )
            expected = (len(patterns), sum(patterns.values()))
        assert (int(stated_n), int(won)) == expected, (scope, split)


@pytest.mark.parametrize("n", ROUNDS)
def test_the_round_page_states_each_case_as_its_record_and_evidence_do(n: int) -> None:
    shown = page(f"round-{n}.md")
    by_case = {e.case: e for e in rr.entries(n)}
    cases = table_under(shown, "Cases").by("Case")
    assert sorted(cases) == sorted(rr.attempts(n))
    for case, row in cases.items():
        record = rr.attempts(n)[case][0].record
        assert row["Tier"] == record["tier"] and row["Rows unmigrated"] == text(record["measurements"]["unmigrated"])
        assert row["Split"] == ("control" if record["control"] else text(record.get("split")))
    every = table_under(shown, "Every graded case").by("Case")
    for case, row in every.items():
        graded = by_case[case].record
        if graded is None:
            continue
        m = graded["measurements"]
        for column, field in (("Detected", "detected"), ("FP", "false_positive"), ("Missed", "missed_call_site"),
                              ("Unmigrated", "unmigrated")):  # fmt: skip
            assert row[column] == text(m[field]), (case, column)
        assert row["Tier"] == graded["tier"]
    controls = [e for e in rr.entries(n) if e.control and e.record is not None]
    if controls:
        stated = table_under(shown, "Negative controls").by("Control")
        held = {e.case: rr.held(e.record, rr.evidence(n, rr.attempts(n)[e.case][0])) for e in controls if e.record}
        for case, was in held.items():
            assert stated[case]["Held"].split(",")[0] == {True: "yes", False: "no", None: stated[case]["Held"]}[was]
        said = section(shown, "Negative controls")
        assert f"Held: {sum(v is True for v in held.values())} of {len(held)} controls with a record" in said


@pytest.mark.parametrize("n", [n for n in ROUNDS if rr.collected(n)])
def test_the_error_analysis_counts_each_row_as_the_collected_file_does(n: int) -> None:
    per_case = table_under(page(f"round-{n}.md"), "Error analysis", 1)
    assert per_case.header[:6] == ["Case", "Key rows", "Migrated", "Withheld", "Derived", "Missed"]
    totals: Counter[str] = Counter()
    listed = 0
    for e in rr.entries(n):
        if e.control or e.record is None or e.case not in rr.collected(n):
            continue
        ev = rr.evidence(n, rr.attempts(n)[e.case][0])
        assert ev is not None
        if ev.source != "error_analysis":  # the analysis reads the collected file, graded facts or not
            collected = rr.collected(n)[e.case]
            applied = {(path, line) for path, line in collected["applied"]}
            ev = rr.Evidence("error_analysis", collected["findings"], applied, set(), collected["withheld"])
        counts = Counter(state for _, state in rr.states(rr.keys(n)[e.case], ev))
        row = per_case.by("Case")[e.case]
        assert [row["Key rows"], *(row[s.capitalize()] for s in rr.STATES)] == [
            str(sum(counts.values())), *(str(counts[s]) for s in rr.STATES)
        ], e.case  # fmt: skip
        totals.update(counts)
        listed += 1
    total = per_case.by("Case")["total"]
    assert [total[s.capitalize()] for s in rr.STATES] == [str(totals[s]) for s in rr.STATES]
    assert len(per_case.rows) == listed + 1


def _reviews(n: int) -> dict[tuple[str, str], dict[str, Any]]:
    path = PROJECT / "cases" / "reviews" / f"round-{n}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else {}
    return {(r["case"], r["patch_sha256"]): r for r in (data or {}).get("reviews") or []}


def _key_rows(n: int, attempt: rr.Attempt, shown: str) -> None:
    key, record = rr.keys(n).get(attempt.case), attempt.record
    said = section(shown, "Key rows")
    ev = rr.evidence(n, attempt)
    if key is None:
        assert "key rows are unknown" in said
        return
    if record["control"]:
        was = rr.held(record, ev)
        assert (f"It held: **{'yes' if was else 'no'}**" in said) if was is not None else "not known" in said
        return
    if ev is None:
        assert "is not known" in said and all(row[3] == "not known" for row in tables(said)[0].rows)
        return
    expected = rr.states(key, ev)
    counts = Counter(state for _, state in expected)
    tally = re.search(r"(\d+) key rows: (\d+) migrated, (\d+) withheld by their own bail, (\d+) withheld because", said)
    assert tally is not None and [int(x) for x in tally.groups()] == [
        len(expected),
        *(counts[s] for s in rr.STATES[:3]),
    ]
    assert re.search(rf", {counts['missed']} missed\.", said)
    rows = tables(said)[0].rows
    assert [(r[0], int(r[1]), r[2]) for r in rows] == [row for row, _ in expected]
    stated = [next(v for k, v in _STATE_OF.items() if r[3].startswith(k)) for r in rows]
    assert stated == [state for _, state in expected], attempt.case
    name = "the round's error analysis" if ev.source == "error_analysis" else "the graded facts"
    assert name in said
    again = rr.regraded(key, ev)
    recorded = record["measurements"]
    differ = {f: v for f, v in again.items() if recorded[f] is not None and recorded[f] != v}
    if not differ:
        assert "the record's counts hold" in said
        for field, value in again.items():
            assert f"`{field}` {value}" in said, (attempt.case, field)
    else:  # the page must say so, naming both sides
        assert "the record's counts do not all hold" in said
        for field, value in differ.items():
            assert f"{field}: the record {recorded[field]}, the evidence {value}" in said, (attempt.case, field)


def _patch_and_review(n: int, attempt: rr.Attempt, shown: str) -> None:
    record, key = attempt.record, rr.keys(n).get(attempt.case) or {}
    m = record["measurements"]
    patch, review = section(shown, "The patch"), section(shown, "The review")
    diff = rr.RESULTS / f"round-{n}" / "artefacts" / f"{attempt.stem}.diff"
    sha = record.get("provenance", {}).get("patch_sha256")
    if m.get("patch_applied") is not True:
        assert ("wrote no patch" in patch or "errored" in patch) and "Nothing to review" in review
        return
    assert "wrote no patch" not in patch and "Nothing to review" not in review, attempt.case
    if diff.is_file():
        assert "The patch obelize wrote" in patch
    elif rr.publication(n).get("kind") == "imported":
        assert "imported from another harness" in patch
    elif not rr.publishable(key.get("license")):
        assert "licence" in patch
    ev = rr.evidence(n, attempt)
    if not diff.is_file() and ev is not None and ev.applied:
        assert f"lists its {len(ev.applied)} applied edits" in patch
    if (attempt.case, sha) in _reviews(n):
        assert "Reviewed by" in review
    else:
        assert ("Not reviewed yet" in review) if sha else ("no review can be filed" in review)


def _suites(n: int, attempt: rr.Attempt, shown: str) -> None:
    m, key = attempt.record["measurements"], rr.keys(n).get(attempt.case) or {}
    said = section(shown, "The suites")
    for title, suite in (("Before the patch", m["tests_baseline"]), ("After it", m["tests_after"])):
        counts = [f"{suite[k]} {k}" for k in ("passed", "failed", "skipped") if suite.get(k) is not None]
        assert f"{title}: `{suite['status']}`" + (f" ({', '.join(counts)})" if counts else "") + "." in said
    tails = rr.RESULTS / f"round-{n}" / "artefacts" / f"{attempt.stem}.tails.json"
    ran = m["tests_baseline"]["status"] != "not_run" or m["tests_after"]["status"] != "not_run"
    if tails.is_file() and any(rr.read(tails).values()):
        assert "The end of the suite's log" in said
    elif not ran:
        assert "No suite ran" in said
    elif rr.publication(n).get("kind") == "imported":
        assert "imported from another harness" in said and "licence" not in said
    elif not rr.publishable(key.get("license")):
        assert "licence" in said


@pytest.mark.parametrize("n", ROUNDS)
def test_each_case_page_states_what_its_record_and_evidence_hold(n: int) -> None:
    for case, found in rr.attempts(n).items():
        shown = page(f"round-{n}/{case}.md")
        first = found[0]
        assert f"Tier **`{first.record['tier']}`**" in shown
        _key_rows(n, first, shown)
        _patch_and_review(n, first, shown)
        _suites(n, first, shown)
        if len(found) > 1:
            listed = table_under(shown, "Attempts").by("Attempt")
            for attempt in found:
                row = listed[str(attempt.number)]
                assert row["Tier"] == attempt.record["tier"]
                assert row["Rows unmigrated"] == text(attempt.record["measurements"]["unmigrated"])
        imported = rr.publication(n).get("kind") == "imported"
        assert ("imported from another harness" in shown.split("##")[0]) is imported
        assert plain(shown.splitlines()[0]) == f"# {case}, round {n}"
