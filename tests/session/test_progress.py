"""The live status line, from log folders laid out as a round lays them out."""

from __future__ import annotations

from pathlib import Path

from pytest_obelize_bench.session.progress import current_step, format_status, snapshot


def logs(round_dir: Path, case: str, *names: str) -> Path:
    folder = round_dir / f"{case}.logs"
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_text("$ step\n\n", encoding="utf-8")
    return folder


def test_the_step_is_the_highest_numbered_log(tmp_path: Path) -> None:
    folder = logs(tmp_path, "a", "01-fetch.log", "02-venv.log", "10-after.log", "junit", "notes.txt")
    assert current_step(folder) == (10, "after")
    assert current_step(tmp_path / "missing.logs") is None


def test_running_cases_and_their_seconds(tmp_path: Path) -> None:
    logs(tmp_path, "alpha__x", "01-fetch.log", "02-venv.log")
    logs(tmp_path, "beta__y", "01-fetch.log")
    done = logs(tmp_path, "gamma__z", "01-fetch.log")
    (done / "record.json").write_text("{}", encoding="utf-8")
    seen: dict[tuple[str, int], float] = {}
    ids = ["alpha__x", "beta__y", "gamma__z", "delta__never"]
    first = snapshot(tmp_path, ids, since=0.0, now=100.0, first_seen=seen)
    assert [(r.case, r.step, r.seconds) for r in first] == [("alpha__x", "venv", 0.0), ("beta__y", "fetch", 0.0)]
    (tmp_path / "beta__y.logs" / "02-venv.log").write_text("", encoding="utf-8")
    later = snapshot(tmp_path, ids, since=0.0, now=112.0, first_seen=seen)
    assert [(r.case, r.step, r.seconds) for r in later] == [("alpha__x", "venv", 12.0), ("beta__y", "venv", 0.0)]
    assert format_status(later) == "running 2: alpha__x venv 12s, beta__y venv 0s"
    assert format_status([]) == ""
    assert len(format_status(later, width=20)) == 20


def test_a_logs_folder_left_by_an_earlier_session_is_not_running(tmp_path: Path) -> None:
    logs(tmp_path, "old__case")
    assert snapshot(tmp_path, ["old__case"], since=10**12, now=10**12 + 1, first_seen={}) == []
