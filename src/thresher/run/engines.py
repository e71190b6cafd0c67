"""Engines decide where tasks run; they contain no pipeline logic.

- `local`: in this process, one after another;
- `pool`: a process pool of `workers` processes (spawned, so no state leaks from the driver).

`run(calls)` takes (function, args) pairs and returns results in call order, so the driver's view is
the same whatever ran the tasks and in whichever order they finished.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, Protocol

from thresher.run import progress

Call = tuple[Callable[..., Any], tuple[Any, ...]]


class Engine(Protocol):
    name: str

    def run(self, calls: Sequence[Call], on_done: Callable[[int, Any], None] | None = None) -> list[Any]: ...

    def close(self) -> None: ...


class LocalEngine:
    name = "local"

    def __init__(self, sink: progress.Sink | None = None) -> None:
        progress.install(sink)

    def run(self, calls: Sequence[Call], on_done: Callable[[int, Any], None] | None = None) -> list[Any]:
        results = []
        for i, (fn, args) in enumerate(calls):
            result = fn(*args)
            results.append(result)
            if on_done is not None:
                on_done(i, result)
        return results

    def close(self) -> None:
        progress.install(None)


def _worker_init(q: Any, log_level: int) -> None:
    import logging

    logging.basicConfig(level=log_level, format="thresher: %(levelname)s: %(message)s")
    progress.install(lambda phase, counts: q.put((phase, counts)))


class PoolEngine:
    name = "pool"

    def __init__(self, workers: int | None = None, sink: progress.Sink | None = None) -> None:
        import logging

        self.workers = max(1, workers or os.cpu_count() or 1)
        ctx = multiprocessing.get_context("spawn")
        self.queue: Any = ctx.Queue()
        self.sink = sink
        self.executor = ProcessPoolExecutor(
            self.workers,
            mp_context=ctx,
            initializer=_worker_init,
            initargs=(self.queue, logging.getLogger("thresher").getEffectiveLevel()),
        )
        self._stop = threading.Event()
        self._drain_thread = threading.Thread(target=self._drain, daemon=True)
        self._drain_thread.start()

    def _drain(self) -> None:
        while not self._stop.is_set():
            try:
                phase, counts = self.queue.get(timeout=0.1)
            except queue.Empty:
                continue
            except (EOFError, OSError):
                return
            if self.sink is not None:
                self.sink(phase, counts)

    def _drain_now(self) -> None:
        while True:
            try:
                phase, counts = self.queue.get_nowait()
            except (queue.Empty, EOFError, OSError):
                return
            if self.sink is not None:
                self.sink(phase, counts)

    def run(self, calls: Sequence[Call], on_done: Callable[[int, Any], None] | None = None) -> list[Any]:
        futures: dict[Future[Any], int] = {self.executor.submit(fn, *args): i for i, (fn, args) in enumerate(calls)}
        results: list[Any] = [None] * len(calls)
        pending = set(futures)
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    i = futures[fut]
                    results[i] = fut.result()  # re-raises the task's exception here
                    if on_done is not None:
                        on_done(i, results[i])
        except BaseException:
            for fut in pending:
                fut.cancel()
            raise
        return results

    def close(self) -> None:
        self.executor.shutdown(wait=True, cancel_futures=True)
        self._stop.set()
        self._drain_thread.join(timeout=2)
        self._drain_now()
        self.queue.close()


def make_engine(name: str, workers: int | None, sink: progress.Sink | None) -> Engine:
    if name == "local" or (name == "pool" and workers == 1):
        return LocalEngine(sink)
    if name == "pool":
        return PoolEngine(workers, sink)
    raise ValueError(f"unknown engine {name!r}")
