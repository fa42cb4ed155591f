"""The gate's crafted scenarios, through the real console script, under the shipped policy.

Twenty cases of three key rows, two attempts each, laid out as a session writes them
(``tests/helpers/promotion_runs``). The shipped ``cases/promotion.yaml`` decides on the per-case
share of key rows migrated; where a scenario is about the rules themselves, the same runs are
also judged under ``verified_success`` (every other threshold the shipped one).
"""

from __future__ import annotations

import io
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pytest_obelize_bench.records.runs import folder_digests
from pytest_obelize_bench.report.summarize import summarize
from tests.helpers import promotion_runs as pr
from tests.helpers.bench_cli import obelize_bench

EVERY = range(pr.N)


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def run(project: Path, run_id: str, outcomes: dict[int, str], **kwargs: Any) -> Path:
    """A run ended just now (the evidence-age rule reads the real clock through the console script)."""
    return pr.write_run(project, run_id, outcomes, ended_at=now(), **kwargs)


def gate(project: Path) -> tuple[int, dict[str, Any], str]:
    status, out = obelize_bench("gate", "--incumbent", "round-2:old", "--candidate", "round-2:new", cwd=project)
    written = sorted((project / "results" / "decisions").glob("*.json"))
    document = json.loads(written[-1].read_text(encoding="utf-8")) if written else {}
    return status, document, out


def failing(document: dict[str, Any], rule: str) -> str:
    return "; ".join(r["text"] for r in document["reasons"] if r["rule"] == rule and not r["holds"])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return pr.make_project(tmp_path)


def test_the_shipped_policy_decides_a_round_where_nothing_reaches_verified_success(project: Path) -> None:
    """40 more key rows and none lost, no case verified: promoted on rows, insufficient on verified_success."""
    run(project, "old", dict.fromkeys(EVERY, "u"))
    run(project, "new", dict.fromkeys(EVERY, "p"), version="0.9.0")
    status, document, output = gate(project)
    assert status == 0, output
    assert document["decision"] == "promote" and document["paired"]["metric"] == "rows_migrated_share"
    assert document["figures"]["candidate"]["rows_migrated"] - document["figures"]["incumbent"]["rows_migrated"] == 40
    assert document["figures"]["candidate"]["verified_success"]["k"] == 0
    assert document["paired"]["candidate_higher"] == 20 and document["paired"]["told_apart"] is True
    assert document["paired"]["difference_text"].startswith("+66.7 points")
    # the same runs under verified_success (registered as such, no decision on them yet): no case
    # carries signal, so nothing can be decided
    shutil.rmtree(project / "results" / "decisions")
    (project / "cases" / "promotion.yaml").write_bytes(pr.VERIFIED_POLICY)
    for folder in ("old", "new"):
        manifest = project / "results" / "round-2" / "runs" / folder / "run.json"
        data = json.loads(manifest.read_text(encoding="utf-8"))
        data["promotion_policy_sha256"] = pr.policy_sha(project)
        manifest.write_text(json.dumps(data), encoding="utf-8")
    status, document, _ = gate(project)
    assert status == 3 and document["failed_rules"] == ["gated_cases"]


@pytest.mark.parametrize(("broken", "rule"), [("t", "no_new_tool_error"), ("w", "no_new_wrong")])
@pytest.mark.parametrize("count", [10, 3])
def test_a_gain_never_pays_for_a_case_the_candidate_broke(project: Path, broken: str, rule: str, count: int) -> None:
    """Ten cases gained, and crashes (or patches that do not compile) elsewhere: rejected, each case named."""
    run(project, "old", {})
    run(project, "new", {**dict.fromkeys(range(10), "v"), **dict.fromkeys(range(20 - count, 20), broken)},
        version="0.9.0")  # fmt: skip
    status, document, output = gate(project)
    assert status == 1, output
    assert rule in document["failed_rules"]
    text = failing(document, rule)
    assert text.startswith(f"{count} cases") and "owner19__repo (0/2 -> 2/2)" in text


@pytest.mark.parametrize("policy", ["shipped", "verified"])
def test_cases_dropped_from_partial_to_unsupported_reject_whatever_the_metric(project: Path, policy: str) -> None:
    if policy == "verified":
        (project / "cases" / "promotion.yaml").write_bytes(pr.VERIFIED_POLICY)
    run(project, "old", {})
    run(project, "new", {**dict.fromkeys(range(10), "v"), **dict.fromkeys(range(10, 20), "u")}, version="0.9.0")
    status, document, output = gate(project)
    assert status == 1, output
    assert "rows_case_regression" in document["failed_rules"]
    assert "10 cases migrate fewer rows" in failing(document, "rows_case_regression")
    assert "owner10__repo (-2)" in failing(document, "rows_case_regression")


def test_an_unreviewed_candidate_patch_is_missing_evidence_with_its_review_command(project: Path) -> None:
    run(project, "old", {})
    run(project, "new", {**dict.fromkeys(range(10), "v")}, version="0.9.0", review=False)
    pr.add_reviews(project, [(pr.case_id(i), pr.patch_digest(pr.case_id(i), "0.9.0")) for i in range(1, 20)])
    status, document, output = gate(project)
    assert status == 3, output
    assert document["failed_rules"] == ["reviews_answered"]
    text = failing(document, "reviews_answered")
    assert "new: 2 patches are unreviewed" in text
    assert "obelize-bench review owner00__repo --run round-2:new;" in text
    assert text.endswith("obelize-bench review owner00__repo --run round-2:new --attempt 2")
    assert "p = " not in output.split("failed rules")[1].split("\n")[1]  # no verdict on the missing review


def test_an_unknown_runtime_is_counted_never_zero(project: Path) -> None:
    """One case with a runtime cannot decide efficiency for the others."""
    run(project, "old", {}, extra={i: {"runtime_seconds": None} for i in range(1, 20)})
    run(project, "new", {}, version="0.9.0", runtime={0: 5.0})
    status, document, _ = gate(project)
    assert status == 3
    assert document["failed_rules"] == ["runtimes_known"]
    assert failing(document, "runtimes_known").startswith("19 cases have an attempt with no runtime")


@pytest.mark.parametrize(
    ("before", "after", "status"),
    [(10, 18, 0), (0, 9, 3), (0, 10, 0), (10, 16, 0), (10, 15, 3)],
    ids=["10-to-18", "0-to-9", "0-to-10", "10-to-16", "10-to-15"],
)
def test_the_minimum_detectable_difference_is_what_the_whole_rule_set_needs(
    project: Path, before: int, after: int, status: int
) -> None:
    """At the published difference the gate decides; one case below it does not (verified_success)."""
    (project / "cases" / "promotion.yaml").write_bytes(pr.VERIFIED_POLICY)
    run(project, "old", dict.fromkeys(range(before), "v"))
    run(project, "new", dict.fromkeys(range(after), "v"), version="0.9.0")
    got, document, output = gate(project)
    assert got == status, output
    needed = document["paired"]["minimum_detectable"]["discordant_needed"]
    assert needed == (10 if before == 0 else 6)
    assert (after - before >= needed) == (status == 0)
    if status == 3:
        assert document["failed_rules"] in (["min_gated_share"], ["alpha"])


@pytest.mark.parametrize("wins", [10, 9])
def test_the_shipped_metric_decides_at_its_published_difference_and_not_one_below(project: Path, wins: int) -> None:
    run(project, "old", dict.fromkeys(EVERY, "u"))
    run(project, "new", {**dict.fromkeys(EVERY, "u"), **dict.fromkeys(range(wins), "v")}, version="0.9.0")
    status, document, output = gate(project)
    assert document["paired"]["minimum_detectable"]["discordant_needed"] == 10
    assert status == (0 if wins == 10 else 3), output


@pytest.mark.parametrize(
    ("overrides", "rule", "text"),
    [
        ({"harness": {"version": "0.1.0", "commit": "c0ffee", "tree_dirty": True}}, "clean_trees",
         "new: the harness tree is dirty"),
        ({"tool": {"version": "0.9.0", "source": "checkout", "commit": "abc", "tree_dirty": True}}, "clean_trees",
         "new: the tool checkout's tree is dirty"),
        ({"reruns": [{"at": "2026-12-01T11:00:00Z", "cases": ["owner03__repo"], "kind": "all-errors",
                      "replaced": [{"case": "owner03__repo", "kept_as": "attempts/owner03__repo.1.json",
                                    "tier": "error", "reason": "obelize_failed", "error_class": "tool"}]}]},
         "no_rerun_tool_errors", "new: 1 tool errors replaced by a rerun: owner03__repo (obelize_failed, all-errors"),
    ],
)  # fmt: skip
def test_what_is_not_a_comparison_is_insufficient_and_named(
    project: Path, overrides: dict[str, Any], rule: str, text: str
) -> None:
    run(project, "old", {})
    run(project, "new", dict.fromkeys(range(10), "v"), version="0.9.0", **overrides)
    status, document, output = gate(project)
    assert status == 3, output
    assert document["failed_rules"] == [rule]
    assert text in failing(document, rule)


def test_a_tool_that_used_a_model_is_another_arm(project: Path) -> None:
    run(project, "old", {})
    run(project, "new", dict.fromkeys(range(10), "v"), version="0.9.0", extra={4: {"llm_tokens_in": 1200}})
    status, document, _ = gate(project)
    assert status == 3 and document["failed_rules"] == ["no_model"]
    assert "owner04__repo" in failing(document, "no_model")


def test_a_candidate_identical_to_the_incumbent_is_refused_and_the_pack_digest_is_named(project: Path) -> None:
    packs = {"gemini/google-generativeai-to-google-genai": {"pack": "gemini/x", "pack_sha256": "ab" * 32}}
    run(project, "old", {}, packs=packs)
    run(project, "new", dict.fromkeys(range(10), "v"), packs=packs)
    status, document, _ = gate(project)
    assert status == 3 and document["failed_rules"] == ["distinct_candidate"]
    assert document["candidate"]["pack_sha256"] == document["incumbent"]["pack_sha256"] == "ab" * 32


def test_a_decision_over_a_partial_run_is_printed_but_never_written(project: Path) -> None:
    """A -k run records a few cases of the many it would have: its decision is not a result."""
    run(project, "old", {})
    folder = run(project, "new", dict.fromkeys(range(10), "v"), version="0.9.0")
    for path in folder.glob("owner1[5-9]__repo*.json"):
        path.unlink()
    manifest = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    manifest["cases_recorded"] = sorted(p.name.split(".")[0] for p in folder.glob("*__*.json"))
    (folder / "run.json").write_text(json.dumps(manifest), encoding="utf-8")
    status, document, output = gate(project)
    assert status == 3 and document == {}
    assert "run_complete" in output and "decision not written for new: a run is not whole" in output
    assert not (project / "results" / "decisions").exists()
    assert summarize(project / "results", project / "cases" / "cases.yaml", check=False, out=io.StringIO()) == 0
    assert summarize(project / "results", project / "cases" / "cases.yaml", check=True, out=io.StringIO()) == 0


def test_a_run_changed_since_its_session_ended_is_refused_naming_the_file(project: Path) -> None:
    run(project, "old", {})
    folder = run(project, "new", dict.fromkeys(range(10), "v"), version="0.9.0")
    manifest = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    manifest["digests"] = folder_digests(folder)  # as its session closed it
    (folder / "run.json").write_text(json.dumps(manifest), encoding="utf-8")
    record = folder / "owner12__repo.json"
    record.write_text(record.read_text(encoding="utf-8").replace('"runtime_seconds": 10.0', '"runtime_seconds": 1.0'))
    status, document, output = gate(project)
    assert status == 3 and document == {}
    assert "new: 1 files changed since its session ended: owner12__repo.json" in output
    assert "decision not written for new" in output
