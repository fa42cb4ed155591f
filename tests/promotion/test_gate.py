"""``obelize-bench gate`` on pairs of run folders: 20 cases, repeated attempts, a deterministic tool.

Each test writes the case file, the shipped policy and two runs as a session lays them out, runs
the gate and checks the decision, the rule it names and the exit status.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import promotion_runs as pr
from tests.helpers.gate_runs import decision, gate, half_verified, reason_text

ALL_VERIFIED = dict.fromkeys(range(20), "v")


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


def test_a_single_broken_control_rejects_whatever_the_rate(project: Path) -> None:
    pr.write_run(project, "old", {})
    pr.write_run(project, "new", ALL_VERIFIED, control="broken", version="0.9.0")
    status, output = gate(project)
    assert status == 1, output
    document = decision(project)
    assert document["failed_rules"] == ["controls_held", "no_new_false_positive"]
    assert "ctrl__migrated" in reason_text(document, "controls_held")
