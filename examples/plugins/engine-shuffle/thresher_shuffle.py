"""`shuffle`: runs a build's tasks in this process, each phase's in a seeded random order.

A thresher build promises the same bytes whatever ran its tasks and in whatever order they
finished: on one process or many, on a laptop or a Ray cluster. The `pool` engine tests that only
as far as the operating system happens to reorder its workers; this engine makes the order the
variable. Build once with `--engine local` and once with `--engine shuffle` (several seeds:
`THRESHER_SHUFFLE_SEED`), and the shards, vector files and stats must be identical: if they are
not, a task depends on another task of its phase having run first, which a pool or a cluster
would one day expose.

It follows the engine protocol of `thresher.run.engines`: results are returned in call order,
`on_done(i, result)` is called as each task finishes (with the task's own index, out of order), and
a failing task is retried like on the `local` engine (it reuses that engine's loop, one task at a
time). Each phase's order is logged at INFO level on the `thresher_shuffle` logger.
"""

from __future__ import annotations

import logging
import os
import random
from collections.abc import Callable, Sequence
from typing import Any

from thresher.run.engine_registry import EngineOptions
from thresher.run.engines import LocalEngine, TaskCall

log = logging.getLogger(__name__)


class ShuffleEngine(LocalEngine):
    name = "shuffle"

    def __init__(self, options: EngineOptions, seed: int = 0) -> None:
        super().__init__(options.sink, options.retries)
        self.seed = seed
        self.rng = random.Random(seed)  # one stream for the whole build: every phase gets its own order

    def run(self, calls: Sequence[TaskCall], on_done: Callable[[int, Any], Any] | None = None) -> list[Any]:
        order = list(range(len(calls)))
        self.rng.shuffle(order)
        log.info("shuffle engine (seed %d): %d tasks in the order %s", self.seed, len(calls), order)
        results: list[Any] = [None] * len(calls)
        for i in order:
            done = None if on_done is None else (lambda _, result, i=i: on_done(i, result))
            (results[i],) = super().run([calls[i]], done)
        return results


def make_engine(options: EngineOptions) -> ShuffleEngine:
    """The factory the `thresher.engines` entry point names. The seed is `THRESHER_SHUFFLE_SEED`
    (default 0); `--workers` does not apply (one process)."""
    return ShuffleEngine(options, seed=int(os.environ.get("THRESHER_SHUFFLE_SEED", "0")))
