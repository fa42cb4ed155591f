"""Under ``-n``, a benchmark session gives each next case to a worker that has just finished one.

Why: xdist's ``load`` scheduler starts every worker with a run of consecutive items (at least two,
a quarter of a worker's share in a larger session) and refills in runs.  A round's cases are
ordered longest first (``ordering.py``), so the first worker's run held the longest cases, which
then ran one after the other while the other workers ran the short ones: a round of ten cases on
two workers gained 1.4 to 1.6 times where the cases' own durations allowed 1.8.

Here the first items are dealt in turn (worker k gets items k and k + workers) and a worker gets
one more item each time it finishes one.  Two held per worker is the least that keeps it busy: an
xdist worker starts an item only once it holds the next one (the item's teardown depends on what
follows) or is told to shut down.  What happens when a worker dies, and the end of the session,
stay xdist's own.
"""

from __future__ import annotations

from xdist.scheduler import LoadScheduling  # type: ignore[import-untyped]  # xdist ships no types
from xdist.workermanage import WorkerController  # type: ignore[import-untyped]

#: Items a worker holds: the one it runs and the one after it.
HELD = 2


def first_deal(items: int, workers: int) -> list[int]:
    """The worker each of the first items goes to, in collection order: in turn, ``HELD`` each."""
    return [index % workers for index in range(min(items, HELD * workers))] if workers else []


def refill(held: int) -> int:
    """How many more items a worker holding ``held`` gets while items remain."""
    return max(0, HELD - held)


class FreeWorkerScheduling(LoadScheduling):  # type: ignore[misc]  # an untyped base
    """xdist's ``load`` scheduling, except for how many items go where, and when."""

    # Set by LoadScheduling; declared for the type checker, which cannot see into xdist.
    collection: list[str] | None
    pending: list[int]
    node2pending: dict[WorkerController, list[int]]

    def schedule(self) -> None:
        if self.collection is not None:  # a worker added later: give everyone what they lack
            for node in self.nodes:
                self.check_schedule(node)
            return
        if not self._check_nodes_have_same_collection():
            self.log("**Different tests collected, aborting run**")
            return
        self.collection = next(iter(self.node2collection.values()))
        self.pending[:] = range(len(self.collection))
        if not self.collection:
            return
        nodes = self.nodes
        deal = first_deal(len(self.pending), len(nodes))
        dealt, self.pending[:] = self.pending[: len(deal)], self.pending[len(deal) :]
        for worker, node in enumerate(nodes):
            indices = [index for index, chosen in zip(dealt, deal, strict=True) if chosen == worker]
            if indices:
                self.node2pending[node].extend(indices)
                node.send_runtest_some(indices)
        if not self.pending:
            for node in nodes:
                node.shutdown()

    def check_schedule(self, node: WorkerController, duration: float = 0) -> None:
        if node.shutting_down:
            return
        if self.pending:
            self._send_tests(node, refill(len(self.node2pending[node])))
        else:
            node.shutdown()


__all__ = ["HELD", "FreeWorkerScheduling", "first_deal", "refill"]
