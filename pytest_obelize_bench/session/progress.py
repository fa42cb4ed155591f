"""The controller's live status line: which cases are running, at which step, for how long.

It is read from the cases' log folders (``<work>/<round>/<id>.logs/NN-<step>.log``), not from
reports, so it sees cases running on any xdist worker of this machine. A case is running when
its logs folder was made in this session and holds no ``record.json`` yet; its step is its
highest-numbered log. The snapshot is pure given the folder listing and the clock; the thread
only repaints one terminal line, and only on a terminal.

It writes to the terminal itself, a duplicate of the session's standard output taken while
nothing captures it: in a serial round the cases run in this process, and pytest captures the
standard output of every test while it runs, so a line written there would land in the case's
captured output instead of on the screen. The status goes after what pytest has printed on the
current line, with the cursor put back, so pytest's own letters keep their places.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

_LOG = re.compile(r"(\d+)-([A-Za-z0-9][A-Za-z0-9._-]*)\.log")
INTERVAL_S = 2.0
LINE_WIDTH = 160


@dataclass(frozen=True)
class Running:
    case: str
    step: str
    seconds: float


def current_step(logs: Path) -> tuple[int, str] | None:
    """The highest-numbered step log in a case's logs folder, as (number, step name)."""
    best: tuple[int, str] | None = None
    try:
        names = [entry.name for entry in logs.iterdir()]
    except OSError:
        return None
    for name in names:
        match = _LOG.fullmatch(name)
        if match and (best is None or int(match.group(1)) > best[0]):
            best = (int(match.group(1)), match.group(2))
    return best


def snapshot(
    round_dir: Path,
    case_ids: Iterable[str],
    *,
    since: float,
    now: float,
    first_seen: MutableMapping[tuple[str, int], float],
) -> list[Running]:
    """The cases running now; ``first_seen`` remembers when each (case, step) was first seen."""
    running = []
    for case in sorted(case_ids):
        logs = Path(round_dir) / f"{case}.logs"
        try:
            made = logs.stat().st_mtime
        except OSError:
            continue
        if (logs / "record.json").exists():
            continue
        step = current_step(logs)
        if step is None:
            if made >= since:
                running.append(Running(case, "starting", 0.0))
            continue
        started = first_seen.setdefault((case, step[0]), now)
        running.append(Running(case, step[1], now - started))
    return running


def format_status(running: list[Running], width: int = LINE_WIDTH) -> str:
    """``running 2: alpha__x fetch 3s, beta__y install-from 12s`` cut to ``width``."""
    if not running:
        return ""
    parts = ", ".join(f"{r.case} {r.step} {r.seconds:.0f}s" for r in running)
    text = f"running {len(running)}: {parts}"
    return text if len(text) <= width else text[: width - 3] + "..."


def terminal_stream() -> IO[str]:
    """A stream on the terminal that pytest's capture of a running test cannot redirect."""
    return os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8", errors="replace", closefd=True)


#: Save the cursor, clear to the end of the line, restore the cursor (VT100, every terminal here).
SAVE, CLEAR, RESTORE = "\x1b7", "\x1b[K", "\x1b8"


class Progress:
    """Repaints the status line every few seconds while the session runs (terminals only)."""

    def __init__(self, round_dir: Path, case_ids: Iterable[str], stream: IO[str], done: Callable[[], set[str]]) -> None:
        self.round_dir = Path(round_dir)
        self.case_ids = list(case_ids)
        self.stream = stream
        self.done = done
        self.since = time.time() - 1.0
        self.first_seen: dict[tuple[str, int], float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="obelize-bench-progress", daemon=True)
        self._shown = False

    def start(self) -> None:
        self._thread.start()

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: the status is only a courtesy
            self._stop.set()

    def _loop(self) -> None:
        while not self._stop.wait(INTERVAL_S):
            pending = [case for case in self.case_ids if case not in self.done()]
            status = format_status(
                snapshot(self.round_dir, pending, since=self.since, now=time.time(), first_seen=self.first_seen)
            )
            if status:
                self._write(f"{SAVE}  {status}{CLEAR}{RESTORE}")
                self._shown = True
            elif self._shown:
                self.clear()

    def clear(self) -> None:
        if self._shown:
            self._write(f"{SAVE}{CLEAR}{RESTORE}")
            self._shown = False

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=INTERVAL_S * 2)
        self.clear()
        with contextlib.suppress(OSError):
            self.stream.close()


__all__ = ["Progress", "Running", "current_step", "format_status", "snapshot", "terminal_stream"]
