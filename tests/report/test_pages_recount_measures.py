"""Every published comparison, Gate 1 and dry-run page states what ``results/`` holds: each count is
counted again from the published JSON, the case file and the answer keys by this test's own code
(``tests/helpers/recount_measures.py``), never by the renderer, and compared with the committed
page's text. The summary pages are the results document's blocks, so the document is held too.
"""

from __future__ import annotations

import re
from collections import Counter
from html import unescape
from typing import Any

import pytest

from tests.helpers import recount_measures as rm
from tests.helpers.page_tables import PAGES, number, page, plain, section, table_under, tables
from tests.helpers.recount_rounds import keys

COMPARISONS = rm.comparison_rounds()
DRY_RUNS = sorted(rm.dry_runs())
GATE1 = rm.gate1_stems()
ARMS_SHOWN = ("key rows", "rows seen", "cleared", "left", "corrections", "files", "files off the key")


def _close(stated: str, value: float | None) -> bool:
    """A runtime as shown (one decimal, minutes from two minutes up) against the published seconds."""
    if value is None:
        return stated == "--"
    shown = number(stated)
    return abs(shown - value) <= (3.0 if stated.endswith("min") else 0.051)


@pytest.mark.parametrize("n", COMPARISONS)
def test_the_comparison_summary_counts_each_arm_from_the_record(n: int) -> None:
    c = rm.comparison(n)
    shown = page(f"comparison-round-{n}.md")
    arms = {arm: {case: rm.arm_case(c, case, arm) for case in c.record["cases"]} for arm in (c.agent, "obelize")}
    every = table_under(shown, "Every case")
    for cells in every.rows:
        stated = dict(zip(every.header, cells, strict=True))
        one = arms[stated["arm"]][stated["case"]]
        for column in ARMS_SHOWN:
            assert stated[column] == str(one[column]), (stated["case"], stated["arm"], column)
        assert _close(stated["runtime"], one["runtime"]), (stated["case"], stated["arm"])
        assert stated["tier"].split(" ")[0] == one["tier"], (stated["case"], stated["arm"])
        assert (stated["ceiling"] == "verified_success") is one["ceiling open"], (stated["case"], stated["arm"])
    assert len(every.rows) == 2 * len(c.record["cases"])
    totals = table_under(shown, "Both arms side by side").by("arm")
    tiers = table_under(shown, "Tiers").by("tier")
    for arm, cases in arms.items():
        row, scores = totals[arm], list(cases.values())
        verified = sum(one["tier"] == "verified_success" for one in scores)
        assert row["cases"] == str(len(scores)) and row["verified_success"].startswith(f"{verified} of {len(scores)}")
        assert row["ceiling open"] == str(sum(one["ceiling open"] for one in scores))
        for column, field in (("key rows", "key rows"), ("rows migrated", "cleared"), ("legacy added", "added"),
                              ("corrections left", "corrections")):  # fmt: skip
            assert row[column] == str(sum(one[field] for one in scores)), (arm, column)
        counted = Counter(one["tier"] for one in scores)
        assert {tier: int(r[arm]) for tier, r in tiers.items()} == {tier: counted[tier] for tier in tiers}, arm
    ours = [(case, one) for case, one in arms["obelize"].items() if one["tier"] != "error"]
    agree = sum(one["plan migrated"] is not None and one["plan migrated"] == one["cleared"] for _, one in ours)
    assert f"they agree on {agree} of {len(ours)} cases" in section(shown, "Obelize's calibration")


@pytest.mark.parametrize("n", COMPARISONS)
def test_each_comparison_case_page_states_its_summary_rows_and_the_scans(n: int) -> None:
    c = rm.comparison(n)
    for case_id, case in c.record["cases"].items():
        shown = page(f"comparison-round-{n}/{case_id}.md")
        ours, theirs = rm.arm_case(c, case_id, "obelize"), rm.arm_case(c, case_id, c.agent)
        side = {row[0]: row[1:] for row in table_under(shown, "Side by side").rows}
        for label in ARMS_SHOWN:
            assert side[label] == [str(ours[label]), str(theirs[label])], (case_id, label)
        assert all(_close(stated, one["runtime"]) for stated, one in zip(side["runtime"], (ours, theirs), strict=True))
        assert [cell.split(" ")[0] for cell in side["tier"]] == [ours["tier"], theirs["tier"]]
        assert side["compiles"] == ["--" if one["compiles"] is None else str(one["compiles"]) for one in (ours, theirs)]
        after = [(one["tests_after"] or {}).get("status", "--") for one in (ours, theirs)]
        assert [cell.split(" ")[0] for cell in side["suite after"]] == after, case_id
        changed = {ch["path"] for ch in case["changes"]} | {ch["path"] for ch in case["obelize_changes"]}
        files = section(shown, "Files changed")
        assert (len(tables(files)[0].rows) if changed else 0) == len(changed)
        want = rm.key_triples(keys()[case_id])
        base = Counter((p, k, s) for p, _, k, s in case["findings"].get("base", []))
        after_arm = {
            arm: Counter((p, k, s) for p, _, k, s in case["findings"].get(arm, [])) for arm in ("obelize", c.agent)
        }
        said = section(shown, "Key rows and what the scan found")
        stated = {}
        for line in said.splitlines():  # the cells' code spans: the path, then the kind and the symbol
            spans = [unescape(span) for span in re.findall(r"<code>(.*?)</code>", line)]
            if line.startswith("| <code>") and len(spans) == 3:
                stated[(spans[0], spans[1], spans[2])] = [int(x) for x in line.strip("| ").split(" | ")[2:6]]
        expected = {
            t: [want[t], base[t], after_arm["obelize"][t], after_arm[c.agent][t]] for t in set(want) | set(base)
        }
        assert stated == {(p, k, s or ""): v for (p, k, s), v in expected.items()}, case_id
        if not case.get("diffs") and c.record.get("arm_file_sha256") is None:
            assert "imported from upstream's round 1, which kept no diff" in section(shown, "The diffs, side by side")
        assert (f"The scan saw {ours['rows seen']} of the {ours['key rows']} key rows before either arm; obelize "
                f"cleared {ours['cleared']} of them, the general agent {theirs['cleared']}.") in said  # fmt: skip


@pytest.mark.parametrize("stem", GATE1)
def test_each_gate1_counts_each_labelled_repository_from_its_scan_and_key(stem: str) -> None:
    document, keys = rm.gate1_published()[stem]
    counts = rm.gate1_counts(document, keys)
    shown = page(f"{stem}.md")
    overview = {row[0]: row[1] for row in tables(shown)[0].rows}
    assert overview["Repositories scanned"] == str(len(document["scanned"]))
    usable = {name: one for name, one in counts.items() if one is not None}
    assert overview["Labelled repositories"].startswith(f"{len(usable)} of {len(counts)}")
    stated = table_under(shown, "Precision and recall").by("Repository")
    for name, one in usable.items():
        row = stated[name]
        fp, missed = one.findings - one.true_positive, one.labelled - one.true_positive
        assert [row["Labelled rows"], row["Findings"], row["TP"], row["FP"], row["Missed"]] == [
            str(one.labelled), str(one.findings), str(one.true_positive), str(fp), str(missed)
        ], name  # fmt: skip
    assert len(stated) == len(usable) + 1
    total = stated["All labelled"]
    sums = [sum(getattr(one, f) for one in usable.values()) for f in ("labelled", "findings", "true_positive")]
    assert [total["Labelled rows"], total["Findings"], total["TP"]] == [str(v) for v in sums]
    other = table_under(shown, "Other kinds and forbidden positions").by("Repository")
    for name, one in usable.items():
        row = other[name]
        assert [row["Expected, reported"], row["Expected, not reported"], row["Reported, not expected"],
                row["Forbidden positions reported"]] == [str(one.other_matched), str(one.other_missing),
                str(one.other_unexpected), str(one.forbidden)], name  # fmt: skip
    against = re.search(r"^#### (Against the sample's published Gate 1.*)$", shown, re.MULTILINE)
    if against is not None:
        sample = rm.gate1_counts(*rm.gate1_published()["gate1"])
        for name, before, now, _ in table_under(shown, plain(against.group(1))).rows:
            for said, side in ((before, sample.get(name)), (now, usable.get(name))):
                if side is not None:
                    tp = side.true_positive
                    assert said == f"{tp} / {side.findings - tp} / {side.labelled - tp}", (name, said)
    folder = PAGES / stem
    for name, counted in counts.items() if folder.is_dir() else ():
        repository = page(f"{stem}/{name.replace('/', '__')}.md")
        if counted is None:
            assert "No usable scan" in repository
            continue
        tp = counted.true_positive
        for title, value in (("Found and labelled", tp), ("Labelled, not found", counted.labelled - tp),
                             ("Found, not labelled (false positives)", counted.findings - tp),
                             ("Other kinds found and expected", counted.other_matched),
                             ("Other kinds expected, not found", counted.other_missing),
                             ("Other kinds found, not expected", counted.other_unexpected),
                             ("Reported where the key forbids it", counted.forbidden)):  # fmt: skip
            assert f"## {title} ({value})" in repository, (name, title)


@pytest.mark.parametrize("slug", DRY_RUNS)
def test_each_dry_run_page_counts_its_repositories_outcomes_and_bails(slug: str) -> None:
    document = rm.dry_runs()[slug]
    records: list[dict[str, Any]] = document["records"]
    shown = page(f"dryrun-{slug}.md")
    overview = {row[0]: row[1] for row in tables(shown)[0].rows}
    assert overview["Repositories"] == str(len(records))
    assert overview["Files the plans would write"] == str(sum(r.get("files_planned") or 0 for r in records))
    for record in records:
        assert rm.dryrun_outcome(record) == record.get("outcome"), record["full_name"]
    outcomes = Counter(r["outcome"] for r in records if r.get("outcome"))
    said = section(shown, "Outcomes")
    assert f"n = {sum(outcomes.values())} repositories with an outcome" in said
    for outcome, row in table_under(shown, "Outcomes").by("Outcome").items():
        assert row["Repositories"] == str(outcomes[outcome]), outcome
    blocked = Counter(r["blocked"] for r in records if r.get("blocked"))
    if blocked:
        stated = table_under(shown, "Blocked reasons").by("Blocked reason")
        assert {k: int(v["Repositories"]) for k, v in stated.items()} == dict(blocked)
    rows: Counter[str] = Counter(w["bail"] for r in records for w in r.get("withheld") or [])
    repos = {bail: {r["full_name"] for r in records if any(w["bail"] == bail for w in r.get("withheld") or [])}
             for bail in rows}  # fmt: skip
    if rows:
        for bail, row in table_under(shown, "Most frequent bails").by("Bail").items():
            assert [row["Withheld rows"], row["Repositories"]] == [str(rows[bail]), str(len(repos[bail]))], bail
    listed = table_under(shown, "Repositories").by("Repository")
    assert sorted(listed) == sorted(r["full_name"] for r in records)
    for record in records:
        row = listed[record["full_name"]]
        assert row["Outcome"] in (record.get("outcome") or "--", f"{record.get('outcome')}")
        assert row["Files planned"] == str(record.get("files_planned") if record.get("files_planned") is not None
                                           else "--")  # fmt: skip
        assert row["Withheld rows"] == str(len(record.get("withheld") or []))
        assert row["Blocked"] == (record.get("blocked") or "--")
    assert re.search(r"^# Fix dry run", shown)
