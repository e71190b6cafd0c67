"""Engines decide where tasks run; they contain no pipeline logic.

- `local`: in this process, one after another;
- `pool` (`thresher.run.pool_engine`): a process pool of `workers` processes, forked from a fresh
  server process that has imported the task modules once (`forkserver`; `spawn` where it is missing), so
  no state leaks from the driver and a worker starts in milliseconds; each worker is handed the corpus
  stages the driver's warm-up (the corpus stages it already built, `thresher.stage_cache`), so none
  rebuilds them;
- `ray`: Ray tasks on a local Ray instance or a cluster (`thresher.run.ray_engine`);
- a plugin's, by the name its entry point in the `thresher.engines` group gives it
  (`thresher.run.engine_registry`: each name is a factory of `EngineOptions`).

`run(calls)` takes `TaskCall`s and returns results in call order, so the driver's view is the same
whatever ran the tasks and in whichever order they finished. `on_done(i, result)` is called as each
task finishes; what it returns, when not None, is what `run` keeps for that task (`kept_result`). The
pool starts the heaviest tasks first when every task's weight is known (longest-processing-time first:
the phase's tail is a short task, not a long one that leaves the other workers idle). A task that raises
(or whose worker process dies) is retried up to `retries` times; then the engine raises `TaskError`
naming the task, its input, the cause and the task's log file.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from thresher.run import progress
from thresher.run.calls import TaskCall, Warmup, dispatch_order, kept_result, task_failed, task_weight
from thresher.run.engine_registry import ENGINES, EngineOptions
from thresher.run.interrupts import InterruptHandlers

__all__ = ["ENGINES", "Engine", "EngineOptions", "LocalEngine", "TaskCall", "Warmup", "dispatch_order", "make_engine",
           "task_failed", "task_weight"]

log = logging.getLogger(__name__)


class Engine(Protocol):
    """What the phases need of an engine. An engine may also offer `run_apart(fn, *args) -> bool`:
    run `fn` in a process of its own and wait (the pool engine does, so that the driver's
    preparation leaves nothing in the driver); where it is missing the driver runs `fn` itself."""

    name: str

    def run(self, calls: Sequence[TaskCall], on_done: Callable[[int, Any], Any] | None = None) -> list[Any]: ...

    def close(self) -> None: ...


class LocalEngine:
    name = "local"

    def __init__(self, sink: progress.Sink | None = None, retries: int = 0) -> None:
        self.retries = retries
        progress.install(sink)
        self.interrupts = InterruptHandlers()  # SIGTERM stops a local build like Ctrl-C

    def run(self, calls: Sequence[TaskCall], on_done: Callable[[int, Any], Any] | None = None) -> list[Any]:
        results = []
        for i, call in enumerate(calls):
            for attempt in range(1, self.retries + 2):
                try:
                    result = call.fn(*call.args)
                    break
                except Exception as exc:  # noqa: BLE001 - every task failure is retried, then reported
                    if attempt > self.retries:
                        raise task_failed(call, attempt, exc) from exc
                    log.warning("task %s failed (attempt %d), retrying: %s", call.label, attempt, exc)
            if on_done is not None:
                result = kept_result(on_done(i, result), result)
            results.append(result)
        return results

    def close(self) -> None:
        self.interrupts.restore()
        progress.install(None)



def local_engine(options: EngineOptions) -> Engine:
    return LocalEngine(options.sink, options.retries)


def pool_engine(options: EngineOptions) -> Engine:
    if options.workers == 1:
        return LocalEngine(options.sink, options.retries)
    # its own module: multiprocessing and concurrent.futures cost a build on one worker ~11 ms
    # of CPU to import, for nothing
    from thresher.run.pool_engine import PoolEngine

    return PoolEngine(options.workers, options.sink, options.retries, options.warmup, options.preload)


def ray_engine(options: EngineOptions) -> Engine:
    from thresher.run.ray_engine import RayEngine

    return RayEngine(options.ray_address, options.workers, options.sink, options.retries)


def make_engine(
    name: str,
    workers: int | None,
    sink: progress.Sink | None,
    retries: int = 0,
    ray_address: str | None = None,
    warmup: Callable[[], Warmup | None] | None = None,
    preload: Sequence[str] = (),
) -> Engine:
    """The engine `name` from the engine registry (`thresher.run.engine_registry`: the built-ins
    above or a plugin's); `preload` names modules the pool's fork server imports before it forks
    a worker (shared read-only data: `thresher.pipeline.fork_server_preloads`)."""
    options = EngineOptions(workers=workers, sink=sink, retries=retries, ray_address=ray_address, warmup=warmup,
                            preload=preload)
    return ENGINES.get(name)(options)
