"""The pure history of releases on a pack's frame: order, states, changes by name, what is left out."""

from __future__ import annotations

from collections.abc import Mapping

from pytest_obelize_bench.dryrun.history_block import frame_history_block, frame_history_chart
from pytest_obelize_bench.dryrun.outcomes import DryRunDocument, DryRunRecord
from pytest_obelize_bench.dryrun.release_history import (
    ABSENT,
    build_frame_history,
    first_changes,
    release_folder_name,
)

PACK = "openai/openai-0-to-1"
REPOS = ("a/one", "b/two", "c/three")


def _doc(
    version: str, outcomes: Mapping[str, str | None], *, run_at: str = "2026-12-07T10:00:00Z", **extra: object
) -> DryRunDocument:
    records = []
    for name in REPOS:
        outcome = outcomes.get(name)
        error = None
        if outcome is None:
            error = "obelize_failed: fix: exit 1"
        elif outcome == ABSENT:
            outcome, error = None, f"{ABSENT}: fix: obelize {version} does not ship the pack {PACK}"
        records.append(DryRunRecord(full_name=name, sha="ab" * 20, band="b", outcome=outcome, error=error))  # type: ignore[arg-type]
    fields: dict[str, object] = {"pack": PACK, "frame": "f.yaml", "term": "t", "obelize_version": version,
                                 "pack_sha256": None, "run_at": run_at, "records": records, **extra}  # fmt: skip
    return DryRunDocument.model_validate(fields)


def _history(*documents: tuple[str, DryRunDocument]):  # type: ignore[no-untyped-def]
    return build_frame_history(PACK, list(documents), alpha=0.05, min_n=2)


def test_releases_are_ordered_by_version_not_by_folder_name() -> None:
    all_complete = dict.fromkeys(REPOS, "complete")
    history = _history(("0.10.0", _doc("0.10.0", all_complete)), ("0.9.0", _doc("0.9.0", all_complete)))
    assert [r.label for r in history.releases] == ["0.9.0", "0.10.0"]


def test_a_release_without_the_pack_is_a_point_of_the_history_and_its_step_compares_nothing() -> None:
    history = _history(
        ("0.1.0", _doc("0.1.0", dict.fromkeys(REPOS, ABSENT))),
        ("0.2.0", _doc("0.2.0", {"a/one": "complete", "b/two": "held", "c/three": "blocked"})),
    )
    absent, present = history.releases
    assert absent.state == "pack_absent" and absent.with_outcome == 0 and absent.errors == {}
    assert present.state == "measured" and present.outcomes["complete"]["k"] == 1
    assert present.outcomes["complete"]["n"] == 3 and present.outcomes["complete"]["low"] is not None
    step = history.steps[0]
    assert step.changed == [] and step.complete is None and "0.1.0 does not ship the pack" in (step.note or "")
    assert [(a.label, b.label) for a, b in first_changes(history, "a/one")] == [("0.1.0", "0.2.0")]


def test_each_repository_whose_outcome_changed_is_named_and_a_crash_is_an_error_not_dropped() -> None:
    history = _history(
        ("0.2.0", _doc("0.2.0", {"a/one": "held", "b/two": "complete", "c/three": "partial"})),
        ("0.3.0", _doc("0.3.0", {"a/one": "complete", "b/two": "complete", "c/three": None})),
    )
    step = history.steps[0]
    assert [(c.repository, c.before, c.after) for c in step.changed] == [
        ("a/one", "held", "complete"),
        ("c/three", "partial", "error"),
    ]
    assert history.releases[1].errors == {"c/three": "obelize_failed: fix: exit 1"}
    assert history.releases[1].with_outcome == 2
    assert step.complete is not None and step.complete["cases"] == 2 and step.complete["told_apart"] is False
    block = frame_history_block(history)
    assert "a/one (held -> complete)" in block and "obelize 0.3.0, c/three: obelize_failed" in block


def test_a_dry_run_of_another_frame_is_left_out_and_a_later_run_of_a_release_stands_for_it() -> None:
    same = dict.fromkeys(REPOS, "complete")
    other = _doc("0.7.0", same).model_copy(update={"records": _doc("0.7.0", same).records[:2]})
    history = _history(
        ("0.7.0", other),
        ("0.8.0", _doc("0.8.0", same, run_at="2026-12-07T09:00:00Z")),
        ("0.8.0+again", _doc("0.8.0", dict.fromkeys(REPOS, "held"), run_at="2026-12-07T11:00:00Z")),
    )
    assert [r.label for r in history.releases] == ["0.8.0"]
    assert history.releases[0].results["a/one"] == "held"
    reasons = {item.release: item.reason for item in history.left_out}
    assert "not those of the newest release's" in reasons["0.7.0"]
    assert "a later dry run of obelize 0.8.0 (0.8.0+again)" in reasons["0.8.0"]


def test_the_chart_has_no_marks_for_a_release_without_the_pack_and_none_without_any_measured() -> None:
    absent = ("0.1.0", _doc("0.1.0", dict.fromkeys(REPOS, ABSENT)))
    assert frame_history_chart(_history(absent)) is None
    chart = frame_history_chart(_history(absent, ("0.2.0", _doc("0.2.0", dict.fromkeys(REPOS, "complete")))))
    assert chart is not None and {p.group for p in chart.points} == {"0.2.0"}
    assert "not shipped in 0.1.0" in chart.caption


def test_a_release_folder_is_one_safe_component() -> None:
    assert release_folder_name("0.8.0", None) == "0.8.0"
    assert release_folder_name("0.8.0", "1a2b3c4d5e") == "0.8.0-g1a2b3c4"
    assert release_folder_name("../x", None) is None and release_folder_name(None, None) is None


def test_names_and_errors_from_a_kept_document_are_inert_in_the_block() -> None:
    hostile = "o/<script>document.title='PWNED'</script>`|"
    document = _doc("0.2.0", dict.fromkeys(REPOS, "complete"))
    records = [
        r.model_copy(update={"full_name": hostile if r.full_name == "a/one" else r.full_name}) for r in document.records
    ]
    later = _doc("0.3.0", {"b/two": "complete", "c/three": "complete"})
    bad = [
        r.model_copy(update={"full_name": hostile, "outcome": None, "error": "obelize_failed: fix: <img src=x>"})
        if r.full_name == "a/one"
        else r
        for r in later.records
    ]
    history = _history(
        ("0.2.0", document.model_copy(update={"records": records})),
        ("0.3.0", later.model_copy(update={"records": bad})),
    )
    block = frame_history_block(history)
    assert "<script>" not in block and "<img" not in block and "`|" not in block
    assert "&#60;script&#62;" in block
