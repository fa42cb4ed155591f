"""The gate on evidence that differs, is missing or is forged, and its documents and console script."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import promotion_runs as pr
from tests.helpers.bench_cli import obelize_bench
from tests.helpers.gate_runs import decision, decisions, gate, half_verified, reason_text


@pytest.mark.parametrize(
    ("field", "rule"),
    [
        ("false_positive", "no_new_false_positive"),
        ("forbidden_reported", "no_new_forbidden_report"),
        ("false_positive_edit", "no_new_false_positive_edit"),
    ],
)
def test_a_new_scan_fault_on_any_case_rejects(project: Path, field: str, rule: str) -> None:
    pr.write_run(project, "old", {})
    pr.write_run(project, "new", half_verified(), extra={15: {field: 1}}, version="0.9.0")
    status, _ = gate(project)
    assert status == 1
    document = decision(project)
    assert rule in document["failed_rules"]
    assert "owner15__repo (0 -> 1)" in reason_text(document, rule)


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"sandbox": "none"}, "sandbox"),
        ({"harness": {"version": "0.1.0", "commit": "beef", "tree_dirty": False}}, "harness.commit"),
        ({"harness": {"version": "0.2.0", "commit": "c0ffee", "tree_dirty": False}}, "harness.version"),
        ({"case_keys_sha256": "0" * 64}, "case_keys_sha256"),
        ({"machine_class": "Linux-aarch64-8cpu"}, "machine_class"),
    ],
)
def test_evidence_that_differs_is_insufficient_and_names_the_field(
    project: Path, overrides: dict[str, Any], field: str
) -> None:
    pr.write_run(project, "old", {})
    pr.write_run(project, "new", half_verified(), version="0.9.0", **overrides)
    status, output = gate(project)
    assert status == 3, output
    document = decision(project)
    assert document["failed_rules"] == ["same_environment"]
    failing = [r for r in document["reasons"] if not r["holds"]]
    assert [r["figure"] for r in failing] == [field]


def test_a_different_number_of_attempts_is_insufficient(project: Path) -> None:
    pr.write_run(project, "old", {}, repeat=2)
    pr.write_run(project, "new", {i: "vvv" for i in range(10)}, default="ppp", repeat=3, version="0.9.0")
    status, _ = gate(project)
    assert status == 3
    assert "same_attempts" in decision(project)["failed_rules"]


def test_the_tier_written_in_a_record_is_not_read(project: Path) -> None:
    pr.write_run(project, "old", {})
    folder = pr.write_run(project, "new", {}, version="0.9.0")
    for path in folder.glob("owner*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        data["tier"] = "verified_success"
        path.write_text(json.dumps(data), encoding="utf-8")
    status, _ = gate(project)
    assert status == 3  # every case is still partial: nothing is gated
    assert decision(project)["figures"]["candidate"]["attempts_resolved"] == 0


def test_an_infrastructure_error_is_insufficient(project: Path) -> None:
    pr.write_run(project, "old", {})
    pr.write_run(project, "new", half_verified({12: "i"}), version="0.9.0")
    status, _ = gate(project)
    assert status == 3
    assert decision(project)["failed_rules"] == ["no_infrastructure_errors"]


def test_a_policy_changed_after_the_runs_started_is_refused_and_nothing_is_written(project: Path) -> None:
    pr.write_run(project, "old", {})
    pr.write_run(project, "new", dict.fromkeys(range(4), "v"), version="0.9.0")
    policy = project / "cases" / "promotion.yaml"
    policy.write_bytes(policy.read_bytes().replace(b"alpha: 0.05", b"alpha: 0.2"))
    status, output = gate(project)
    assert status == 2
    assert "refused" in output and "the policy changed after run old started" in output
    assert not (project / "results" / "decisions").exists()


def test_a_run_that_registered_no_policy_is_insufficient(project: Path) -> None:
    pr.write_run(project, "old", {}, promotion_policy_sha256=None)
    pr.write_run(project, "new", half_verified(), version="0.9.0")
    status, _ = gate(project)
    assert status == 3
    document = decision(project)
    assert document["failed_rules"] == ["preregistered"]
    assert "old: registered no promotion policy" in reason_text(document, "preregistered")


def test_a_review_whose_digest_differs_from_the_patch_is_not_applied(project: Path) -> None:
    pr.write_run(project, "old", {})
    pr.write_run(project, "new", half_verified(), version="0.9.0", review=False)
    # answers for the incumbent's patches of the same cases: another digest
    pr.add_reviews(project, [(pr.case_id(i), pr.patch_digest(pr.case_id(i), "0.8.0")) for i in range(10)])
    status, _ = gate(project)
    assert status == 3
    document = decision(project)
    assert document["figures"]["candidate"]["attempts_resolved"] == 0
    # an unanswered patch is missing evidence, never a regression: each gets its review command
    assert document["failed_rules"] == ["reviews_answered"]
    text = reason_text(document, "reviews_answered")
    assert "new: 20 patches are unreviewed" in text
    assert "obelize-bench review owner00__repo --run round-2:new --attempt 2" in text
    # answered for the candidate's own patch, the same records reach verified_success
    shutil.rmtree(project / "results" / "decisions")
    pr.add_reviews(project, [(pr.case_id(i), pr.patch_digest(pr.case_id(i), "0.9.0")) for i in range(10)])
    status, _ = gate(project)
    assert status == 0
    assert decision(project)["figures"]["candidate"]["attempts_resolved"] == 20


def test_a_symlinked_record_refuses_the_run(project: Path) -> None:
    pr.write_run(project, "old", {})
    folder = pr.write_run(project, "new", half_verified(), version="0.9.0")
    target = folder / "owner03__repo.json"
    planted = project / "planted.json"
    target.rename(planted)
    os.symlink(planted, target)
    status, output = gate(project)
    assert status == 2
    assert output.count("\n") == 1 and "a symlinked record is refused" in output
    assert not (project / "results" / "decisions").exists()


def test_several_candidates_get_one_document_each_and_the_decisions_block_shows_the_verdict(
    project: Path,
) -> None:
    from pytest_obelize_bench.promotion.decision_list import render_decisions

    pr.write_run(project, "old", {})
    pr.write_run(project, "best", half_verified(), version="0.9.0")
    pr.write_run(project, "meh", dict.fromkeys(range(4), "v"), version="0.9.1")
    status, output = gate(project, "round-2:old", "round-2:best", "round-2:meh")
    assert status == 0, output
    written = decisions(project)
    assert written["2026-12-02-meh.json"]["decision"] == "insufficient_evidence"
    assert written["2026-12-02-best.json"]["pareto_front"] == ["best"]
    block = render_decisions(sorted(written.items()))
    assert block is not None
    assert "not told apart at alpha 0.05" in block and "at least 10 cases won with none lost decide" in block


def test_the_console_script_takes_run_folders(project: Path) -> None:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    old = pr.write_run(project, "old", {}, ended_at=now)
    new = pr.write_run(project, "new", half_verified(), version="0.9.0", ended_at=now)
    status, out = obelize_bench("gate", "--incumbent", old, "--candidate", new, cwd=project)
    assert status == 0, out
    assert len(list((project / "results" / "decisions").glob("*-new.json"))) == 1


def test_bare_run_ids_are_runs_and_two_decisions_leave_two_files(project: Path) -> None:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    pr.write_run(project, "old", {}, ended_at=now)
    pr.write_run(project, "new", half_verified(), version="0.9.0", ended_at=now)
    for _ in range(2):
        status, out = obelize_bench("gate", "--incumbent", "old", "--candidate", "new", cwd=project)
        assert status == 0, out
    written = sorted(path.name for path in (project / "results" / "decisions").glob("*.json"))
    assert len(written) == 2 and [name for name in written if name.endswith("-new-2.json")], written
