"""What every task goes through: its context, its completion marker and its log.

A task is a pure function of (context, task spec) → files + a result, and every engine runs the same
functions (`thresher.run.phases.TaskTable`); none of them knows where it runs. `run_task` skips a task
whose commit exists (the marker of a local work dir) and writes it (its result) last, so a killed
task leaves no commit and is rerun. The task functions, one module per phase:

  scan      `thresher.run.scan`        one per input partition: read → per-document stages → survivors,
                                       rejects, dedup keys
  group     `thresher.run.candidates`  one per (corpus stage, range of key buckets): group keys, spill
                                       candidate pairs by pair bucket (edges between byte-identical
                                       payloads are written directly)
  verify    `thresher.run.candidates`  one per (corpus stage, range of pair buckets): each distinct pair
                                       verified once → edges
  cluster   `thresher.run.cluster`     one: union-find over edges, keeper per cluster, per-partition
                                       decisions (or, over N partitions, `thresher.run.cluster_rounds`:
                                       split, star rounds, rank, keepers, decide: the same
                                       decisions)
  write     `thresher.run.shards`      one per input partition: apply decisions, write its pieces of the
                                       output shards
  assemble  `thresher.run.shards`      one per output shard: its pieces, in partition order, into the
                                       shard file

The bucketed work files that scan, group and verify hand on are in `thresher.run.spill`.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

from thresher.config import RunConfig
from thresher.core.serial import SchemaVersionError, dump, load
from thresher.read.base import Partition
from thresher.run import progress
from thresher.run.heap import trim_heap
from thresher.run.results import TaskResult
from thresher.run.store import Attempt, WorkStore, attempt_running, current_attempt
from thresher.run.stores import open_work_store
from thresher.run.workdir import WorkDir

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TaskContext:
    """What every task receives: the build's config, its work dir and whether rejects are written."""

    config: RunConfig
    workdir: str
    write_rejects: bool
    # an object work store the build runs on through local folders (`thresher.run.store_mirror`):
    # `workdir` is then the driver's local mirror, and each task runs in a scratch folder of its own
    store_url: str | None = None

    @property
    def work(self) -> WorkDir:
        return WorkDir(self.workdir)

    @property
    def store(self) -> WorkStore:
        """The work dir as a store (`thresher.run.store`): a folder, or an object store for a URL
        (one per process and work dir: its connection and the commits it has read are kept)."""
        return _store(self.store_url or self.workdir)

    def output(self, rel: str) -> AbstractContextManager[IO[bytes]]:
        """Write the task's output `rel` (a name relative to the work dir): as the running attempt's
        object, committed with its result (`thresher.run.store.Attempt`); outside `run_task`,
        straight to the store."""
        attempt = current_attempt()
        return attempt.writer(rel) if attempt is not None else self.store.writer(rel)

    def output_location(self, rel: str) -> str:
        """Where `output(rel)` puts the file: a path in a folder, the attempt's object's URL."""
        attempt = current_attempt()
        return attempt.location(rel) if attempt is not None else self.store.locate(rel)


@functools.lru_cache(maxsize=8)
def _store(workdir: str) -> WorkStore:
    return open_work_store(workdir)


def shared_store(location: str) -> WorkStore:
    """The store this process's tasks use for `location` (the driver's too, with the local engine)."""
    return _store(location)


def run_task(
    fn: Callable[..., TaskResult], result_type: type[TaskResult], ctx: TaskContext, task_id: str, *args: Any
) -> TaskResult:
    """Run a task unless it is committed in the work store; commit it (its result, as JSON with its
    schema version, `thresher.core.serial.dump`) last. A local work dir's commit is the task's
    completion marker; an object store's is a manifest created exclusively, so an attempt that
    finds another one committed first returns that one's result (`thresher.run.store`). A commit
    of another schema version (written by another thresher) does not count: the task runs again
    and replaces it.

    The task's own log records (warnings about malformed input, ...) and, when it fails, its
    traceback go to `logs/<task>.log` in the work dir; the exception is re-raised for the engine to
    retry or report."""
    store = ctx.store
    if ctx.store_url is not None:
        return _run_mirrored(fn, result_type, ctx, task_id, *args)
    standing = store.committed(task_id)
    stale: SchemaVersionError | None = None
    if standing is not None:
        try:
            return load(result_type, standing.result)
        except SchemaVersionError as exc:
            stale = exc
    attempt = Attempt(store, task_id)
    with store.task_log(task_id, attempt.name) as log_path, attempt_running(attempt):
        result = _logged(fn, ctx, task_id, log_path, stale, args)
    commit = attempt.commit(dump(result))
    if commit.attempt != attempt.name:  # a duplicate attempt committed first: its result is the task's
        return load(result_type, commit.result)
    return result


def _logged(fn: Callable[..., TaskResult], ctx: TaskContext, task_id: str, log_path: Path,
            stale: SchemaVersionError | None, args: tuple[Any, ...]) -> TaskResult:
    """Run the task with its log records (and, when it fails, its traceback) in `log_path`."""
    handler = logging.FileHandler(log_path, mode="a", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    package_logger = logging.getLogger("thresher")
    package_logger.addHandler(handler)
    progress.set_task(task_id)  # its progress ticks name it: the driver replaces them by its result
    if stale is not None:
        log.info("task %s runs again, its completion marker does not count: %s", task_id, stale)
    try:
        return fn(ctx, *args)
    except BaseException:
        import traceback

        if handler.stream is not None:  # open unless the handler was closed (it is opened eagerly)
            handler.stream.write(f"task {task_id} failed (pid {os.getpid()}):\n{traceback.format_exc()}\n")
        raise
    finally:
        progress.set_task(None)
        package_logger.removeHandler(handler)
        handler.close()
        trim_heap()  # workers are long-lived: what the task freed goes back to the system


def _run_mirrored(
    fn: Callable[..., TaskResult], result_type: type[TaskResult], ctx: TaskContext, task_id: str, *args: Any
) -> TaskResult:
    """`run_task` on an object work store through local folders (`thresher.run.store_mirror`): the
    task runs in a scratch folder holding the store's committed files, and what it writes there is
    uploaded as its attempt's objects and committed with its result."""
    from thresher.run.store_mirror import mirrored_task
    from thresher.run.store_object import ObjectWorkStore

    store = ctx.store
    assert isinstance(store, ObjectWorkStore)
    store.commits.pop(task_id, None)  # asked afresh: a sweep or a reset may have removed it since
    standing = store.committed(task_id)
    stale: SchemaVersionError | None = None
    if standing is not None:
        try:
            return load(result_type, standing.result)
        except SchemaVersionError as exc:
            stale = exc
    with mirrored_task(store, task_id, Path(ctx.workdir)) as (workdir, attempt):
        task_ctx = replace(ctx, workdir=workdir)
        with store.task_log(task_id, attempt.name) as log_path, attempt_running(attempt):
            result = _logged(fn, task_ctx, task_id, log_path, stale, args)
    commit = attempt.commit(dump(result))
    if commit.attempt != attempt.name:
        return load(result_type, commit.result)
    return result


def describe_task(task_id: str, args: tuple[Any, ...]) -> str:
    """A task and the input it works on, for error messages."""
    for arg in args:
        if isinstance(arg, Partition):
            return f"{task_id} (input {arg.describe()})"
    return task_id


class NullWriter:
    """A file that keeps nothing: the rejects file of a task when the build writes none."""

    def __enter__(self) -> NullWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def write(self, data: bytes) -> None:
        return None

    def tell(self) -> int:
        return 0
