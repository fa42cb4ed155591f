"""Finished checkouts are removed on a thread of their own; the session waits for them at its end."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from pytest_obelize_bench.isolation import removal_queue
from pytest_obelize_bench.isolation.removal_queue import RemovalQueue
from pytest_obelize_bench.isolation.workspace import prepare_workspace


def _finished(root: Path, case: str) -> Path:
    space = prepare_workspace(root, "round-2", case)
    (space.checkout / ".venv" / "bin").mkdir(parents=True)
    (space.checkout / ".venv" / "bin" / "python").symlink_to("/usr/bin/python3")
    (space.checkout / "app.py").write_text("x = 1\n", encoding="utf-8")
    (space.logs / "01-fetch.log").write_text("ok\n", encoding="utf-8")
    return space.checkout


def test_the_checkouts_are_gone_after_drain_and_their_logs_stay(tmp_path: Path) -> None:
    checkouts = [_finished(tmp_path, case) for case in ("alpha__app", "beta__app")]
    removals = RemovalQueue()
    for checkout in checkouts:
        removals.remove(tmp_path, "round-2", checkout.name)
    assert removals.drain() == []
    assert not any(checkout.exists() for checkout in checkouts)
    assert all((checkout.parent / f"{checkout.name}.logs" / "01-fetch.log").is_file() for checkout in checkouts)
    assert removals.drain() == []  # nothing asked since: returns at once


def test_asking_does_not_wait_for_the_removal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started, release = threading.Event(), threading.Event()
    removed: list[str] = []

    def slow(root: Path, round_label: str, case_id: str) -> bool:
        started.set()
        assert release.wait(10)
        removed.append(case_id)
        return True

    monkeypatch.setattr(removal_queue, "remove_checkout", slow)
    removals = RemovalQueue()
    removals.remove(tmp_path, "round-2", "alpha__app")
    removals.remove(tmp_path, "round-2", "beta__app")
    assert started.wait(10) and removed == []  # both asked while the first removal is still running
    release.set()
    assert removals.drain() == [] and removed == ["alpha__app", "beta__app"]  # in the order asked


def test_a_removal_that_fails_is_one_line_and_the_others_still_go(tmp_path: Path) -> None:
    checkout = _finished(tmp_path, "alpha__app")
    removals = RemovalQueue()
    removals.remove(tmp_path, "round-2", "../escape")
    removals.remove(tmp_path, "round-2", "alpha__app")
    failures = removals.drain()
    assert len(failures) == 1 and failures[0].startswith("../escape: ") and "not a safe directory name" in failures[0]
    assert not checkout.exists()
