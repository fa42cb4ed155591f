"""``obelize-bench gate`` on pairs of run folders: 20 cases, repeated attempts, a deterministic tool.

Each test writes the case file, the shipped policy and two runs as a session lays them out, runs
the gate and checks the decision, the rule it names and the exit status.
"""

from __future__ import annotations

import io
import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pytest_obelize_bench.cli import main as cli_main
from pytest_obelize_bench.promotion.gate import run_gate
from tests.helpers import promotion_runs as pr

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
ALL_VERIFIED = dict.fromkeys(range(20), "v")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The rules' own tests judge verified_success, the protocol's target; the shipped metric has its own."""
    return pr.make_project(tmp_path, pr.VERIFIED_POLICY)


def gate(project: Path, incumbent: str = "round-2:old", *candidates: str) -> tuple[int, str]:
    out = io.StringIO()
    status = run_gate(
        project / "cases" / "promotion.yaml",
        incumbent,
        list(candidates or ["round-2:new"]),
        results_dir=project / "results",
        cases_path=project / "cases" / "cases.yaml",
        out=out,
        now=NOW,
    )
    return status, out.getvalue()


def decisions(project: Path) -> dict[str, dict[str, Any]]:
    folder = project / "results" / "decisions"
    return {p.name: json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))}


def decision(project: Path) -> dict[str, Any]:
    (document,) = decisions(project).values()
    return document


def reason_text(document: dict[str, Any], rule: str) -> str:
    checks = [r for r in document["reasons"] if r["rule"] == rule]
    return str(next((r["text"] for r in checks if not r["holds"]), checks[0]["text"]))


def half_verified(extra: dict[int, str] | None = None) -> dict[int, str]:
    """Cases 0-9 verified on every attempt (the gated half), and any changes."""
    return {**dict.fromkeys(range(10), "v"), **(extra or {})}


# -- the case is the unit -------------------------------------------------------------------------


@pytest.mark.parametrize("incumbent", [{}, half_verified()], ids=["0-vs-4", "10-vs-14"])
def test_four_of_twenty_with_two_attempts_is_insufficient_counted_by_case(
    project: Path, incumbent: dict[int, str]
) -> None:
    """Two deterministic tools differing on 4 of 20 cases, each run twice: c = 4, p = 0.125, not c = 8."""
    pr.write_run(project, "old", incumbent)
    pr.write_run(project, "new", {**incumbent, **dict.fromkeys(range(10, 14), "v")}, version="0.9.0")
    status, output = gate(project)
    assert status == 3, output
    document = decision(project)
    assert document["decision"] == "insufficient_evidence"
    paired = document["paired"]
    assert paired["unit"] == "case" and paired["cases"] == 20 and paired["attempts_per_case"] == [2]
    assert paired["candidate_higher"] == 4 and paired["incumbent_higher"] == 0
    assert paired["p"] == pytest.approx(0.125)
    assert paired["distinguishable"] is False and "not told apart at alpha 0.05" in paired["verdict"]
    candidate, before = document["figures"]["candidate"], len(incumbent)
    assert candidate["cases"] == 20 and candidate["attempts"] == 40
    assert candidate["attempts_resolved"] == 2 * (before + 4)
    assert candidate["verified_success"]["k"] == before + 4 and candidate["verified_success"]["n"] == 20
    if before:  # the paired test alone decides whether the sides are told apart
        assert document["failed_rules"] == ["alpha"]
        assert paired["minimum_detectable"]["cases"] == 8 and paired["minimum_detectable"]["discordant_needed"] == 6
        assert "minimum detectable difference: 8 more of 20 cases" in output
    else:  # only 4 of 20 cases carry any quality signal at all: the gated share needs 10 cases won
        assert document["failed_rules"] == ["min_gated_share"]
        assert paired["minimum_detectable"]["discordant_needed"] == 10
        assert paired["minimum_detectable"]["needs"] == {"sign test": 6, "resolution margin": 2, "gated share": 10}
        assert "at least 10 cases won with none lost decide" in output


def test_a_clear_gain_promotes_with_the_policy_sha_and_exits_0(project: Path) -> None:
    pr.write_run(project, "old", {})
    pr.write_run(project, "new", half_verified(), version="0.9.0")
    status, output = gate(project)
    assert status == 0, output
    document = decision(project)
    assert document["decision"] == "promote" and document["failed_rules"] == []
    assert document["policy_sha256"] == pr.policy_sha(project)
    assert document["paired"]["candidate_higher"] == 10 and document["paired"]["distinguishable"] is True
    assert document["schema_version"] == 3
    assert all(r["why"] and r["figure"] for r in document["reasons"])


# -- the policy's rules -----------------------------------------------------------------------------


def test_a_per_case_rate_regression_that_worst_tiers_hide_rejects(project: Path) -> None:
    gains = dict.fromkeys(range(10, 20), "vvv")
    pr.write_run(project, "old", {**dict.fromkeys(range(10), "vvv"), 0: "vvp"}, repeat=3)
    pr.write_run(project, "new", {**dict.fromkeys(range(10), "vvv"), 0: "vpp", **gains}, repeat=3, version="0.9.0")
    status, output = gate(project)
    assert status == 1, output
    document = decision(project)
    assert document["decision"] == "reject"
    assert "case_resolution_regression" in document["failed_rules"]
    assert "owner00__repo (0.667 -> 0.333)" in reason_text(document, "case_resolution_regression")


def test_the_quality_floor_rejects_a_case_the_incumbent_resolves_and_the_candidate_misses_once(
    project: Path,
) -> None:
    pr.write_run(project, "old", half_verified({0: "vp"}))
    pr.write_run(project, "new", half_verified({0: "vp", **dict.fromkeys(range(10, 20), "v")}), version="0.9.0")
    status, _ = gate(project)
    assert status == 1
    document = decision(project)
    assert document["failed_rules"] == ["quality_floor"]
    assert "owner00__repo (worst attempt 0 < best 1)" in reason_text(document, "quality_floor")


def test_no_gated_case_is_insufficient_and_one_more_row_never_promotes(project: Path) -> None:
    pr.write_run(project, "old", {})
    pr.write_run(project, "new", {}, extra={3: {"unmigrated": 0}}, version="0.9.0", review=False)
    # reviewed, with a hunk a human had to write: complete but not autonomous, so not verified
    pr.add_reviews(project, [(pr.case_id(3), pr.patch_digest(pr.case_id(3), "0.9.0"))], human_edits=1)
    status, _ = gate(project)
    assert status == 3
    document = decision(project)
    assert document["failed_rules"] == ["gated_cases"]
    assert "no case supplied quality signal" in reason_text(document, "gated_cases")


def test_too_small_a_gated_share_is_insufficient(project: Path) -> None:
    few = dict.fromkeys(range(4), "v")
    pr.write_run(project, "old", few)
    pr.write_run(project, "new", {**few, 4: "v", 5: "v"}, version="0.9.0")
    status, _ = gate(project)
    assert status == 3
    document = decision(project)
    assert document["failed_rules"] == ["min_gated_share"]
    assert "6 of 20 cases gated (30%); at least 50% required" in reason_text(document, "min_gated_share")


@pytest.mark.parametrize(
    ("runtime", "status", "rule"),
    [
        ({i: 9.0 for i in range(10)}, 0, None),
        ({i: 9.7 for i in range(10)}, 1, "efficiency"),
        ({**{i: 9.0 for i in range(10)}, 0: 12.5}, 1, "case_runtime_regression"),
        ({**{i: 9.0 for i in range(10)}, 15: 25.0}, 1, "ungated_runtime_regression"),
    ],
)
def test_runtime_decides_at_equal_quality_on_the_per_case_median_with_its_caps(
    project: Path, runtime: dict[int, float], status: int, rule: str | None
) -> None:
    pr.write_run(project, "old", half_verified())
    pr.write_run(project, "new", half_verified(), runtime=runtime, version="0.9.0")
    got, output = gate(project)
    assert got == status, output
    document = decision(project)
    assert document["failed_rules"] == ([] if rule is None else [rule])
    if rule is None:
        assert "median runtime improvement over 10 of 10 gated cases" in reason_text(document, "efficiency")


def test_one_more_case_is_within_the_noise_floor_and_runtime_decides(project: Path) -> None:
    pr.write_run(project, "old", half_verified())
    pr.write_run(project, "new", half_verified({10: "v"}), version="0.9.0")
    status, _ = gate(project)
    assert status == 1
    document = decision(project)
    assert "within the noise floor" in reason_text(document, "resolution_margin")
    # the one row the extra case migrates is no rows rule either
    assert document["failed_rules"] == ["rows_margin", "rows_alpha", "efficiency"]


@pytest.mark.parametrize(
    ("extra", "status", "failed"),
    [
        ({12: {"unmigrated": 0}}, 1, ["rows_margin", "rows_alpha", "efficiency"]),
        ({i: {"unmigrated": 0} for i in range(10, 18)}, 0, []),
        ({**{i: {"unmigrated": 0} for i in range(10, 18)}, 19: {"unmigrated": 2}}, 1, ["rows_case_regression"]),
    ],
)
def test_rows_decide_only_with_a_noise_rule_and_no_case_losing_rows(
    project: Path, extra: dict[int, dict[str, Any]], status: int, failed: list[str]
) -> None:
    pr.write_run(project, "old", half_verified())
    pr.write_run(project, "new", half_verified(), extra=extra, version="0.9.0")
    got, output = gate(project)
    assert got == status, output
    assert decision(project)["failed_rules"] == failed


# -- controls veto ----------------------------------------------------------------------------------


def test_a_single_broken_control_rejects_whatever_the_rate(project: Path) -> None:
    pr.write_run(project, "old", {})
    pr.write_run(project, "new", ALL_VERIFIED, control="broken", version="0.9.0")
    status, output = gate(project)
    assert status == 1, output
    document = decision(project)
    assert document["failed_rules"] == ["controls_held", "no_new_false_positive"]
    assert "ctrl__migrated" in reason_text(document, "controls_held")


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


# -- comparable evidence ------------------------------------------------------------------------------


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


# -- pre-registration -------------------------------------------------------------------------------


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


# -- reviews keyed to the patch ---------------------------------------------------------------------


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


# -- the earlier checks ----------------------------------------------------------------------------


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


def test_the_console_script_takes_run_folders(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    old = pr.write_run(project, "old", {}, ended_at=now)
    new = pr.write_run(project, "new", half_verified(), version="0.9.0", ended_at=now)
    monkeypatch.chdir(project)
    out = io.StringIO()
    status = cli_main(["gate", "--incumbent", str(old), "--candidate", str(new)], out=out)
    assert status == 0, out.getvalue()
    assert len(list((project / "results" / "decisions").glob("*-new.json"))) == 1


def test_bare_run_ids_are_runs_and_two_decisions_leave_two_files(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    pr.write_run(project, "old", {}, ended_at=now)
    pr.write_run(project, "new", half_verified(), version="0.9.0", ended_at=now)
    monkeypatch.chdir(project)
    for _ in range(2):
        out = io.StringIO()
        assert cli_main(["gate", "--incumbent", "old", "--candidate", "new"], out=out) == 0, out.getvalue()
    written = sorted(path.name for path in (project / "results" / "decisions").glob("*.json"))
    assert len(written) == 2 and [name for name in written if name.endswith("-new-2.json")], written
