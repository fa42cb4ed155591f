"""Finished cases' checkouts removed on a thread of their own, in the order the cases finished.

Why: the controller removed each checkout while handling the case's report, and under xdist a
worker starts its next case only once it holds the one after it, which the controller sends after
that report: in the copy view, where a checkout holds a copied venv, a worker waited 0.13 to
0.29 s between two cases (under 0.04 s with the removals here).  The session waits for the queue
before it ends, so the work root is as tidy at the end as before.
"""

from __future__ import annotations

import queue
import threading
from pathlib import Path

from pytest_obelize_bench.isolation.workspace import remove_checkout

#: What the thread removes: ``remove_checkout``'s arguments; None ends the thread.
_Job = tuple[Path, str, str] | None


class RemovalQueue:
    """``remove_checkout`` later, on one thread; ``drain`` waits for every removal asked so far."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        #: one line per checkout that could not be removed: ``<case>: <why>``
        self.failures: list[str] = []

    def remove(self, root: Path, round_label: str, case_id: str) -> None:
        if self._thread is None:
            # A daemon: a session that dies leaves the rest, which the next run of each case clears.
            self._thread = threading.Thread(target=self._loop, name="obelize-bench-tidy", daemon=True)
            self._thread.start()
        self._jobs.put((root, round_label, case_id))

    def drain(self) -> list[str]:
        """Wait until every checkout asked for is removed; the failures so far."""
        if self._thread is not None:
            self._jobs.put(None)
            self._thread.join()
            self._thread = None
        return list(self.failures)

    def _loop(self) -> None:
        while (job := self._jobs.get()) is not None:
            root, round_label, case_id = job
            try:
                remove_checkout(root, round_label, case_id)
            except (OSError, ValueError) as exc:
                self.failures.append(f"{case_id}: {exc}")


__all__ = ["RemovalQueue"]
