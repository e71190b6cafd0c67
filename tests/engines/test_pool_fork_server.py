"""The pool's fork server freezes what its preloads created before it forks a worker
(`thresher.run.freeze_preloads`): a worker's cycle collections then never write into those objects'
headers, so the pages holding them stay shared with the server instead of being copied into every
worker (measured: the tree's PSS 3-4 MiB lower on a 50k-document build, the server's own share
62 -> 60 MiB)."""

from __future__ import annotations

import gc

from thresher.run.calls import TaskCall
from thresher.run.pool_engine import PoolEngine


def frozen_objects() -> int:
    return gc.get_freeze_count()


def test_a_worker_starts_with_the_servers_imports_frozen():
    engine = PoolEngine(1)
    try:
        [frozen] = engine.run([TaskCall(frozen_objects, (), "frozen")])
    finally:
        engine.close()
    # the task modules the server preloads (scan, extraction, quality, dedup) are tens of thousands
    # of container objects; an unfrozen server hands its workers none
    assert frozen > 20_000, frozen
