"""The `pool` engine: a local process pool whose workers fork from a server that imported the task
modules once (`thresher.run.engines` describes the engines; this module is imported only when a
build runs on more than one local worker)."""

from __future__ import annotations

import logging
import multiprocessing
import os
import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from thresher.run import progress
from thresher.run.calls import TaskCall, Warmup, dispatch_order, kept_result, task_failed
from thresher.run.interrupts import InterruptHandlers, kill_processes

log = logging.getLogger(__name__)

# Imported once by the fork server, so that forked workers start with them (missing ones are skipped).
PRELOAD = (
    "thresher.run.scan",
    "thresher.run.candidates",
    "thresher.run.shards",
    "thresher.extract.stage",
    "thresher.quality.stages",
    "thresher.read.jsonl",
    "thresher.read.files",
    "thresher.dedup.exact",
    "thresher.dedup.near",
)


def pool_context(preload: Sequence[str] = ()) -> Any:
    """`forkserver` where the platform has it (workers fork from a server that imported PRELOAD and
    `preload` once: no per-worker interpreter start and imports, and read-only data such modules
    load is shared by every worker), else `spawn`. Neither copies the driver's state (open files,
    the build lock, threads) into workers, and neither re-runs the driver's main module in them
    (`thresher.run.worker_context`)."""
    from thresher.run.worker_context import detached_main_context

    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = detached_main_context("forkserver")
        # frozen last: see thresher.run.freeze_preloads
        ctx.set_forkserver_preload([*PRELOAD, *preload, "thresher.run.freeze_preloads"])
        return ctx
    return detached_main_context("spawn")


def _adopt_driver_settings(log_level: int, environ: dict[str, str]) -> None:
    # A fork server keeps the environment it started with: give the process the driver's current one,
    # as a spawned process would have (credentials, endpoints set after the server started).
    if os.environ != environ:
        os.environ.clear()
        os.environ.update(environ)
    logging.basicConfig(level=log_level, format="thresher: %(levelname)s: %(message)s")


def _run_apart(fn: Callable[..., Any], args: tuple[Any, ...], log_level: int, environ: dict[str, str]) -> None:
    _adopt_driver_settings(log_level, environ)
    try:
        fn(*args)
    except Exception as exc:  # noqa: BLE001 - the driver runs fn again and reports what it meets
        log.debug("run apart: %s failed: %s", getattr(fn, "__name__", fn), exc)
        raise SystemExit(1) from None


def _worker_init(q: Any, log_level: int, environ: dict[str, str], warm: Warmup | None) -> None:
    _adopt_driver_settings(log_level, environ)
    from thresher.run.deadline import allow_hard_exit

    allow_hard_exit()  # a worker may end itself for a document stuck past its deadline (the task is retried)
    from thresher.run.interrupts import ignore_interrupts_in_worker

    ignore_interrupts_in_worker()  # Ctrl-C reaches the whole process group: the driver stops the workers
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
        preload: Sequence[str] = (),
    ) -> None:
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.retries = retries
        self.warmup = warmup  # asked each time workers start (they are fresh for every phase)
        self.ctx = pool_context(preload)
        self.queue: Any = self.ctx.Queue()
        self.sink = sink
        self.executor = self._new_executor()
        self.interrupts = InterruptHandlers(on_force=self._kill_workers)
        self.killed = False
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

    def run(self, calls: Sequence[TaskCall], on_done: Callable[[int, Any], Any] | None = None) -> list[Any]:
        try:
            return self._run(calls, on_done)
        except KeyboardInterrupt:
            # Ctrl-C or SIGTERM: stop now, not when the running tasks end (their markers are missing,
            # so a rerun redoes them)
            self._kill_workers()
            raise

    def _kill_workers(self) -> None:
        """End every worker, the fork server and the resource tracker at once."""
        self.killed = True
        processes = getattr(self.executor, "_processes", None) or {}  # CPython's, not public API
        pids = [p.pid for p in list(processes.values()) if p.pid is not None]
        self.executor.shutdown(wait=False, cancel_futures=True)
        kill_processes(pids)
        self._stop.set()
        _stop_fork_server(self.ctx)
        _release_semaphores()  # before the tracker stops: else it unlinks them and exit unlinks them again
        _stop_resource_tracker()

    def _run(self, calls: Sequence[TaskCall], on_done: Callable[[int, Any], Any] | None = None) -> list[Any]:
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
                    # popped: a Future keeps its whole result (a scan task's ~110 KB of counters and
                    # key bytes, before `on_done` folds them), and the dict kept every one to the end
                    # of the phase: the driver grew ~130-250 KB per task (74 MiB at 1M documents)
                    i = futures.pop(fut)
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
                        results[i] = kept_result(on_done(i, results[i]), results[i])
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

    def run_apart(self, fn: Callable[..., Any], *args: Any) -> bool:
        """`fn(*args)` in a process of its own, forked from the workers' server, and waited for: what
        it allocates dies with it. The driver's preparation runs here (a large URL list compiled
        peaks at ~61 MiB, ~100 before its digests were held once, and what glibc and Python keep of
        it would stay in the driver for the whole build). False when that process failed: the
        caller runs `fn` itself and meets the error there, with its own message."""
        proc = self.ctx.Process(
            target=_run_apart, args=(fn, args, logging.getLogger("thresher").getEffectiveLevel(), dict(os.environ)))
        proc.start()
        proc.join()
        return bool(proc.exitcode == 0)

    def close(self) -> None:
        self.interrupts.restore()
        if self.killed:
            self._drain_thread.join(timeout=0.2)
            return
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


def _release_semaphores() -> None:
    """Unlink this process's named semaphores (the pool's queues and locks) now, as its exit would.

    The resource tracker, once stopped, unlinks every semaphore still registered with it and warns
    "leaked semaphore objects"; the driver's own exit then unlinks the same names again and prints
    a `FileNotFoundError` traceback for each. Run first, the semaphores' finalizers unlink and
    unregister them once: the objects keep working (an unlinked POSIX semaphore lives while it is
    open), and a finalizer that ran is not run again at exit."""
    from multiprocessing import synchronize, util

    registry = getattr(util, "_finalizer_registry", {})  # CPython's, not public API
    cleanup = getattr(synchronize.SemLock, "_cleanup", None)
    for finalizer in list(registry.values()):
        if cleanup is not None and getattr(finalizer, "_callback", None) is cleanup:
            try:
                finalizer()
            except OSError:  # already unlinked by someone else: nothing left to release
                pass


def _stop_resource_tracker() -> None:
    """The resource tracker (started for the pool's queue and locks) outlives an interrupted pool
    unless stopped; it is restarted on demand."""
    from multiprocessing import resource_tracker

    stop = getattr(resource_tracker._resource_tracker, "_stop", None)  # CPython's, not public API
    if stop is None:
        return
    try:
        stop()
    except (OSError, ChildProcessError):
        pass
