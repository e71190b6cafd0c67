"""Engines decide where tasks run; they contain no pipeline logic.

- `local`: in this process, one after another;
- `pool`: a process pool of `workers` processes, forked from a fresh server process that has
  imported the task modules once (`forkserver`; `spawn` where it is missing), so no state leaks
  from the driver and a worker starts in milliseconds; each worker is handed the corpus stages the
  driver's warm-up (the corpus stages it already built, `thresher.stage_cache`), so none rebuilds them;
- `ray`: Ray tasks on a local Ray instance or a cluster (`thresher.run.ray_engine`).

`run(calls)` takes `TaskCall`s and returns results in call order, so the driver's view is the same
whatever ran the tasks and in whichever order they finished. The pool starts the heaviest tasks first
when every task's weight is known (longest-processing-time first: the phase's tail is a short task,
not a long one that leaves the other workers idle). A task that raises (or whose worker
process dies) is retried up to `retries` times; then the engine raises `TaskError` naming the task,
its input, the cause and the task's log file.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Protocol

from thresher.run import progress
from thresher.run.calls import TaskCall, dispatch_order, task_failed, task_weight

__all__ = ["Engine", "LocalEngine", "PoolEngine", "TaskCall", "dispatch_order", "make_engine", "task_failed", "task_weight"]

log = logging.getLogger(__name__)


class Engine(Protocol):
    name: str

    def run(self, calls: Sequence[TaskCall], on_done: Callable[[int, Any], None] | None = None) -> list[Any]: ...

    def close(self) -> None: ...


class LocalEngine:
    name = "local"

    def __init__(self, sink: progress.Sink | None = None, retries: int = 0) -> None:
        self.retries = retries
        progress.install(sink)

    def run(self, calls: Sequence[TaskCall], on_done: Callable[[int, Any], None] | None = None) -> list[Any]:
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
            results.append(result)
            if on_done is not None:
                on_done(i, result)
        return results

    def close(self) -> None:
        progress.install(None)


# Imported once by the fork server, so that forked workers start with them (missing ones are skipped).
PRELOAD = (
    "thresher.run.tasks",
    "thresher.extract.stage",
    "thresher.quality.stages",
    "thresher.read.jsonl",
    "thresher.read.files",
    "thresher.dedup.exact",
    "thresher.dedup.near",
)


def pool_context() -> Any:
    """`forkserver` where the platform has it (workers fork from a server that imported PRELOAD
    once: no per-worker interpreter start and imports), else `spawn`. Neither copies the driver's
    state (open files, the build lock, threads) into workers, and neither re-runs the driver's main
    module in them (`thresher.run.worker_context`)."""
    from thresher.run.worker_context import detached_main_context

    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = detached_main_context("forkserver")
        ctx.set_forkserver_preload(list(PRELOAD))
        return ctx
    return detached_main_context("spawn")


# A warm-up for new workers: a function (importable by name) and the bytes it is called with, e.g.
# the driver's built stages (`thresher.stage_cache.worker_warmup`). Engines pass it on unread.
Warmup = tuple[Callable[[bytes], None], bytes]


def _worker_init(q: Any, log_level: int, environ: dict[str, str], warm: Warmup | None) -> None:
    # A fork server keeps the environment it started with: give the worker the driver's current one,
    # as a spawned process would have (credentials, endpoints set after the server started).
    if os.environ != environ:
        os.environ.clear()
        os.environ.update(environ)
    logging.basicConfig(level=log_level, format="thresher: %(levelname)s: %(message)s")
    from thresher.run.deadline import allow_hard_exit

    allow_hard_exit()  # a worker may end itself for a document stuck past its deadline (the task is retried)
    progress.install(lambda phase, counts: q.put((phase, counts)))
    if warm is not None:
        fn, blob = warm
        fn(blob)


class PoolEngine:
    name = "pool"

    def __init__(
        self,
        workers: int | None = None,
        sink: progress.Sink | None = None,
        retries: int = 0,
        warmup: Callable[[], Warmup | None] | None = None,
    ) -> None:
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.retries = retries
        self.warmup = warmup  # asked each time workers start (they are fresh for every phase)
        self.ctx = pool_context()
        self.queue: Any = self.ctx.Queue()
        self.sink = sink
        self.executor = self._new_executor()
        self.ran = False  # whether the current workers have run a phase
        self._stop = threading.Event()
        self._drain_thread = threading.Thread(target=self._drain, daemon=True)
        self._drain_thread.start()

    def _new_executor(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            self.workers,
            mp_context=self.ctx,
            initializer=_worker_init,
            initargs=(
                self.queue,
                logging.getLogger("thresher").getEffectiveLevel(),
                dict(os.environ),
                self.warmup() if self.warmup is not None else None,
            ),
        )

    def _drain(self) -> None:
        while not self._stop.is_set():
            try:
                phase, counts = self.queue.get(timeout=0.1)
            except queue.Empty:
                continue
            except (EOFError, OSError, ValueError):
                return
            if self.sink is not None:
                self.sink(phase, counts)

    def run(self, calls: Sequence[TaskCall], on_done: Callable[[int, Any], None] | None = None) -> list[Any]:
        if self.ran:
            # Fresh workers for every phase (forked from the fork server: ~0.03 CPU s each). A worker
            # that ran dozens of group tasks keeps a fragmented heap the next phase would inherit:
            # on 1M documents the largest worker reached 90 MiB in the verify phase that way, where
            # a verify task alone needs ~52.
            self.executor.shutdown(wait=True)
            self.executor = self._new_executor()
        self.ran = True
        results: list[Any] = [None] * len(calls)
        attempts = [0] * len(calls)
        todo = dispatch_order(calls)
        while todo:
            futures: dict[Future[Any], int] = {}
            for i in todo:
                attempts[i] += 1
                futures[self.executor.submit(calls[i].fn, *calls[i].args)] = i
            todo = []
            pending = set(futures)
            broken = False
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    i = futures[fut]
                    try:
                        results[i] = fut.result()
                    except BrokenProcessPool as exc:
                        # a worker died (killed, out of memory): every task still in the pool is lost
                        broken = True
                        self._retry_or_raise(calls[i], attempts[i], exc, todo, i)
                        continue
                    except Exception as exc:  # noqa: BLE001 - retried, then reported
                        self._retry_or_raise(calls[i], attempts[i], exc, todo, i)
                        continue
                    if on_done is not None:
                        on_done(i, results[i])
            if broken:
                log.warning("a worker process died; restarting the pool")
                self.executor.shutdown(wait=False, cancel_futures=True)
                self.executor = self._new_executor()
        return results

    def _retry_or_raise(self, call: TaskCall, attempt: int, exc: BaseException, todo: list[int], i: int) -> None:
        if attempt > self.retries:
            self.executor.shutdown(wait=False, cancel_futures=True)
            raise task_failed(call, attempt, exc) from exc
        log.warning("task %s failed (attempt %d), retrying: %s", call.label, attempt, exc)
        todo.append(i)

    def close(self) -> None:
        self.executor.shutdown(wait=True, cancel_futures=True)
        self._stop.set()
        self._drain_thread.join(timeout=2)
        while True:
            try:
                phase, counts = self.queue.get_nowait()
            except (queue.Empty, EOFError, OSError, ValueError):
                break
            if self.sink is not None:
                self.sink(phase, counts)
        self.queue.close()
        _stop_fork_server(self.ctx)


def _stop_fork_server(ctx: Any) -> None:
    """Stop and reap the fork server after a run: it reaped the workers, so the driver's children
    CPU time (what `time` reports for a build) then includes theirs, and no process is left behind.
    The next pool starts a new one."""
    if ctx.get_start_method() != "forkserver":
        return
    from multiprocessing import forkserver

    stop = getattr(forkserver._forkserver, "_stop", None)  # CPython's, not public API
    if stop is None:
        return
    try:
        stop()
    except OSError:
        pass


def make_engine(
    name: str,
    workers: int | None,
    sink: progress.Sink | None,
    retries: int = 0,
    ray_address: str | None = None,
    warmup: Callable[[], Warmup | None] | None = None,
) -> Engine:
    if name == "local" or (name == "pool" and workers == 1):
        return LocalEngine(sink, retries)
    if name == "pool":
        return PoolEngine(workers, sink, retries, warmup)
    if name == "ray":
        from thresher.run.ray_engine import RayEngine

        return RayEngine(ray_address, workers, sink, retries)
    raise ValueError(f"unknown engine {name!r}")
