"""The repository cache fills on first use: a second round fetches nothing from the remote."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import rounds
from tests.helpers.rounds import run_pytest

pytestmark = pytest.mark.usefixtures("index_uv_cache")


def test_a_second_round_checks_out_from_the_cache_after_the_remote_is_gone(tmp_path: Path) -> None:
    project = tmp_path / "project"
    row = rounds.case_row_from_fixture("trap-vertex", "ann", tmp_path)
    rounds.write_case_file(project / "cases" / "cases.yaml", [row])
    cache = tmp_path / "repo-cache"

    def round_with(name: str) -> dict[str, dict[str, object]]:
        done = run_pytest(
            project,
            "--bench-round=2",
            "--bench-allow-dirty",
            "--bench-interpreter=minor",
            f"--bench-repo-cache={cache}",
            f"--bench-work={tmp_path / name / 'work'}",
            f"--bench-results={tmp_path / name / 'results'}",
        )
        found = rounds.read_records(rounds.only_run(tmp_path / name / "results" / "round-2"))
        assert found, done.stdout[-3000:] + done.stderr[-2000:]
        return found

    first = round_with("first")
    assert first["ann__trap-vertex"]["error"] is None
    assert (cache / "ann" / "trap-vertex.git" / "HEAD").is_file()
    filled = [step for step in first["ann__trap-vertex"]["steps"] if step["name"] == "fetch"]  # type: ignore[attr-defined]
    assert any(row["repo"] in " ".join(step["argv"]) for step in filled)  # the first round fetched the remote
    origin = tmp_path / "origins" / "trap-vertex"
    origin.rename(origin.with_name("gone"))

    second = round_with("second")["ann__trap-vertex"]
    assert second["error"] is None, second["error"]
    assert second["tier"] == first["ann__trap-vertex"]["tier"]
    fetches = [step for step in second["steps"] if step["name"] == "fetch"]  # type: ignore[attr-defined]
    assert fetches and all(step["exit_code"] == 0 for step in fetches)
    # No fetch of the second round names the (now missing) remote.
    assert not any(row["repo"] in " ".join(step["argv"]) for step in fetches)
