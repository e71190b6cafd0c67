"""The pool engine lets go of each task's full result once `on_done` has folded it: the driver's
memory must not grow with the number of tasks of a phase. Before, the round's dict of futures kept
every Future, and with it every whole result, to the end of the phase (a scan task's ~110 KB of
counters and key bytes: the driver reached 74 MiB on a 1M-document build)."""

from __future__ import annotations

import gc
import time
import weakref

from thresher.run.calls import TaskCall
from thresher.run.pool_engine import PoolEngine


class Bulky:
    """A task result the driver can watch: weak-referenceable, ~64 KB."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.payload = bytes(64 * 1024)


def make_bulky(n: int) -> Bulky:
    time.sleep(0.05)  # tasks that finish apart: each `wait` hands back one or two
    return Bulky(n)


def test_folded_results_are_released_during_the_phase():
    tasks = 40
    refs: list[weakref.ref[Bulky]] = []
    most_alive = 0

    def fold(i: int, result: Bulky) -> int:
        nonlocal most_alive
        refs.append(weakref.ref(result))
        gc.collect()
        most_alive = max(most_alive, sum(r() is not None for r in refs))
        return result.n  # what the driver keeps: the small part

    engine = PoolEngine(2)
    try:
        kept = engine.run([TaskCall(make_bulky, (n,), f"bulky-{n}") for n in range(tasks)], fold)
    finally:
        engine.close()
    assert kept == list(range(tasks))
    # alive at once: the results of the batch `wait` returned (at most one per worker, a few when
    # tasks finish together), never the whole phase's 40
    assert most_alive <= 8, most_alive
