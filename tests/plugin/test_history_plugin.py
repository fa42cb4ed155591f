"""The history of releases through the real plugin: three commits of an obelize source checkout,
one round each, then ``obelize-bench history``.

The checkout is obelize 0.8.0's sdist committed three times with fixed dates: as released, then
with ``obelize fix`` made to exit 9 before it plans anything (every case an error: a tool error),
then as released again. Two cases from the fixtures: ``ann__clean`` (obelize verifies it) and
``cy__refused`` (obelize refuses it). So the second commit regresses both cases, by name, and the
third improves both back; ``--find`` names the second commit as the first that changed each.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import rounds
from tests.helpers.bench_cli import obelize_bench
from tests.helpers.sdist import SdistUnavailable, obelize_sdist

PINS = ("--bench-round=2", "--bench-allow-dirty", "--bench-interpreter=minor", "--exclude-newer=2026-12-01T00:00:00Z")


def _commit(checkout: Path, message: str, date: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    for args in (["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", message]):
        subprocess.run(["git", "-C", str(checkout), *args], check=True, capture_output=True, timeout=60, env=env)
    return subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "HEAD"], check=True, capture_output=True, text=True, timeout=60
    ).stdout.strip()


def _break_fix(checkout: Path, broken: bool) -> None:
    """``obelize fix`` exits 9 at once (``broken``), or runs as released."""
    cli = checkout / "src" / "obelize" / "cli.py"
    text = cli.read_text(encoding="utf-8")
    marker = "    raise typer.Exit(code=9)  # the benchmark's test: a release whose fix fails\n"
    if broken:
        start = text.index('@app.command("fix")')
        opening = text.index('"""', text.index("\ndef fix(", start))
        closing = text.index('"""', opening + 3) + 3
        text = text[:closing] + "\n" + marker + text[closing + 1 :]
    else:
        text = text.replace(marker, "")
    cli.write_text(text, encoding="utf-8")


@pytest.mark.usefixtures("index_uv_cache")
def test_three_commits_give_a_history_with_each_regression_and_improvement_by_name(tmp_path: Path) -> None:
    try:
        sdist = obelize_sdist("0.8.0")
    except SdistUnavailable as exc:
        pytest.skip(f"obelize 0.8.0's sdist cannot be downloaded here: {exc}")
    shutil.unpack_archive(sdist, tmp_path / "tool", filter="data")
    checkout = tmp_path / "tool" / "obelize-0.8.0"
    subprocess.run(["git", "-C", str(checkout), "init", "-q"], check=True, capture_output=True, timeout=60)
    project = tmp_path / "project"
    cases = [
        rounds.case_row_from_fixture("clean", "ann", tmp_path / "ann"),
        rounds.case_row_from_fixture("refused", "cy", tmp_path / "cy"),
    ]
    rounds.write_case_file(project / "cases" / "cases.yaml", cases)
    rounds.write_fixture_reviews(project / "cases" / "reviews" / "round-2.yaml", cases, {"ann__clean": "clean"})
    shutil.copy(Path(__file__).resolve().parents[2] / "cases" / "promotion.yaml", project / "cases" / "promotion.yaml")
    commits = []
    for broken, date in ((False, "2026-11-01T10:00:00+00:00"), (True, "2026-11-02T10:00:00+00:00"),
                         (False, "2026-11-03T10:00:00+00:00")):  # fmt: skip
        _break_fix(checkout, broken)
        commits.append(_commit(checkout, "broken" if broken else "as released", date))
        done = rounds.run_pytest(project, *PINS, f"--obelize={checkout}", f"--bench-work={tmp_path / 'work'}")
        assert done.returncode in (0, 1), done.stdout[-3000:]
    code, out = obelize_bench("history", "--round", "2", cwd=project)
    assert code == 0, out
    history = json.loads((project / "results" / "round-2" / "history.json").read_text(encoding="utf-8"))
    labels = [f"0.8.0 @{sha[:7]}" for sha in commits]
    assert [r["label"] for r in history["releases"]] == labels and history["left_out"] == []
    assert history["releases"][1]["tiers"] == {"error": 2}
    broke, mended = history["steps"]
    assert (broke["before"], broke["after"]) == (labels[0], labels[1])
    assert [c["case"] for c in broke["regressed"]] == ["ann__clean", "cy__refused"] and broke["improved"] == []
    assert [c["case"] for c in mended["improved"]] == ["ann__clean", "cy__refused"] and mended["regressed"] == []
    for case in ("ann__clean", "cy__refused"):
        code, out = obelize_bench("history", "--round", "2", "--find", case, cwd=project)
        first = next(line for line in out.splitlines() if line.startswith(case))
        assert re.match(rf"{case}: first changed at obelize {re.escape(labels[1])} \(run \S+\): \w+, ", first), out
        assert f"the release before: obelize {labels[0]}" in first
    assert obelize_bench("summarize", "--check", cwd=project)[0] == 0
    # the step's decision is the gate's on the same two runs
    runs = [r["run"] for r in history["releases"]]
    obelize_bench("gate", "--incumbent", runs[0], "--candidate", runs[1], cwd=project)
    (decision,) = (json.loads(p.read_text("utf-8")) for p in (project / "results" / "decisions").glob("*.json"))
    assert (broke["decision"], broke["failed_rules"]) == (decision["decision"], decision["failed_rules"])
    assert broke["decision"] != "promote"
