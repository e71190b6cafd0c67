"""The Ray engine: the same task functions as Ray tasks, on a local Ray instance or a cluster.

Each task asks for one CPU. Inputs, the work dir and the output must be paths every worker can
reach (one machine, or a shared filesystem). Progress ticks from tasks go to a small actor that the
driver drains. Failed tasks (an exception, or a dead worker) are retried by this engine, like the
pool's, so the attempt count and the final message are the same on every engine.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from thresher.core.errors import ConfigError, InputError
from thresher.run import progress
from thresher.run.calls import TaskCall, TaskResources, kept_result, task_failed

log = logging.getLogger(__name__)


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise ConfigError("--engine ray needs Ray: pip install 'thresher[ray]'") from exc
    return ray


def check_reachable(address: str, timeout_s: float = 3.0) -> None:
    """Fail fast, with one line, when a `host:port` Ray address does not answer: Ray itself waits
    minutes for an unreachable cluster. `auto` and other non host:port forms are left to Ray."""
    import socket

    target = address.removeprefix("ray://")
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit():
        return
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout_s):
            pass
    except OSError as exc:
        raise InputError(f"cannot reach the Ray cluster at {address!r}: {exc.strerror or exc}") from exc


# Ray on Linux turns a loopback `_node_ip_address` into the machine's routable address
# (`services.resolve_ip_for_localhost`) unless "cluster mode" is off; with it off, the node address is
# loopback and every server Ray starts (GCS, raylet, object manager, workers, the runtime-env agent)
# binds to that address instead of the wildcard or a LAN address. Ray reads this variable once, into
# `ray_constants.ENABLE_RAY_CLUSTER`, which `services.get_node_ip_address` consults at each call.
_CLUSTER_MODE_VARIABLE = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


@contextlib.contextmanager
def loopback_only() -> Iterator[None]:
    """While a local instance starts: Ray's node address is loopback, in this process (the constant
    Ray already read) and in the processes it spawns (the variable they inherit). Both are restored
    after, so a later `ray.init(address=...)` by a library caller is Ray's default again."""
    import importlib

    constants: Any = importlib.import_module("ray._private.ray_constants")
    before_constant = constants.ENABLE_RAY_CLUSTER
    before_variable = os.environ.get(_CLUSTER_MODE_VARIABLE)
    constants.ENABLE_RAY_CLUSTER = False
    os.environ[_CLUSTER_MODE_VARIABLE] = "0"
    try:
        yield
    finally:
        constants.ENABLE_RAY_CLUSTER = before_constant
        if before_variable is None:
            os.environ.pop(_CLUSTER_MODE_VARIABLE, None)
        else:
            os.environ[_CLUSTER_MODE_VARIABLE] = before_variable


class _ProgressBox:
    """Collects progress ticks from tasks until the driver drains them (runs as a Ray actor)."""

    def __init__(self) -> None:
        self.items: list[tuple[str, dict[str, int]]] = []

    def add(self, phase: str, counts: dict[str, int]) -> None:
        self.items.append((phase, counts))

    def drain(self) -> list[tuple[str, dict[str, int]]]:
        items, self.items = self.items, []
        return items


def _run_in_worker(fn: Callable[..., Any], args: tuple[Any, ...], box: Any) -> Any:
    from thresher.run.deadline import allow_hard_exit

    allow_hard_exit()  # a worker may end itself for a document stuck past its deadline (the task is retried)
    progress.install((lambda phase, counts: box.add.remote(phase, counts)) if box is not None else None)
    try:
        return fn(*args)
    finally:
        progress.install(None)


def ray_task_options(resources: TaskResources) -> dict[str, Any]:
    """Ray's options for a task that asks for `resources` (`num_cpus`, `num_gpus`, `memory` in bytes)."""
    options: dict[str, Any] = {"num_cpus": resources.cpus}
    if resources.gpus:
        options["num_gpus"] = resources.gpus
    if resources.memory_bytes is not None:
        options["memory"] = resources.memory_bytes
    return options


class RayEngine:
    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        workers: int | None = None,
        sink: progress.Sink | None = None,
        retries: int = 0,
    ) -> None:
        ray = _import_ray()
        self.ray = ray
        self.sink = sink
        self.retries = retries
        self.started_here = False
        self.temp_dir: str | None = None
        if not ray.is_initialized():
            options: dict[str, Any] = {
                "logging_level": logging.ERROR,
                "log_to_driver": False,
                "include_dashboard": False,
            }
            try:
                if address:
                    check_reachable(address)
                    ray.init(address=address, **options)
                else:
                    # a local instance: every server bound to loopback, its session files in a private
                    # folder. Ray makes its temp root and the folders in it world-writable (again after
                    # ray.init: a chmod after it was undone once a task had run), so the root is a folder
                    # inside one that only the user can enter, which Ray never touches.
                    self.temp_dir = tempfile.mkdtemp(prefix="thresher-ray-")
                    with loopback_only():
                        ray.init(
                            num_cpus=workers or os.cpu_count() or 1,
                            _node_ip_address="127.0.0.1",
                            _temp_dir=os.path.join(self.temp_dir, "ray"),
                            **options,
                        )
            except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
                where = f"the Ray cluster at {address!r}" if address else "a local Ray instance"
                raise InputError(f"cannot start or reach {where}: {exc}".splitlines()[0]) from exc
            self.started_here = True
        from thresher.run.interrupts import InterruptHandlers

        self.interrupts = InterruptHandlers(on_force=self.ray.shutdown if self.started_here else None)
        # the progress box on the driver's own node (soft: anywhere if that cannot be), so that losing a
        # worker node loses only its running tasks, never the box the driver drains
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        self.here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=True)
        self.box = self._new_box()
        self.remote = ray.remote(num_cpus=1, max_retries=0)(_run_in_worker)

    def _new_box(self) -> Any:
        return self.ray.remote(num_cpus=0)(_ProgressBox).options(scheduling_strategy=self.here).remote()

    def _submit(self, call: TaskCall) -> Any:
        return self.remote.options(**ray_task_options(call.resources)).remote(call.fn, call.args, self.box)

    def _drain(self) -> None:
        if self.sink is None:
            return
        try:
            items = self.ray.get(self.box.drain.remote())
        except self.ray.exceptions.RayActorError:
            # its node was lost: only progress ticks go with it (results come back with the tasks);
            # the tasks submitted from now on tick into a new box
            log.warning("the progress box was lost with its node; progress counts may fall short")
            self.box = self._new_box()
            return
        for phase, counts in items:
            self.sink(phase, counts)

    def run(self, calls: Sequence[TaskCall], on_done: Callable[[int, Any], Any] | None = None) -> list[Any]:
        ray = self.ray
        results: list[Any] = [None] * len(calls)
        attempts = [1] * len(calls)
        pending = {self._submit(c): i for i, c in enumerate(calls)}
        last_drain = time.monotonic()
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1, timeout=0.25)
            if time.monotonic() - last_drain > 0.25:
                self._drain()
                last_drain = time.monotonic()
            for ref in done:
                i = pending.pop(ref)
                try:
                    results[i] = ray.get(ref)
                except Exception as exc:  # noqa: BLE001 - RayTaskError, WorkerCrashedError, ...
                    cause = getattr(exc, "cause", None) or exc
                    if attempts[i] > self.retries:
                        for other in pending:
                            ray.cancel(other, force=True)
                        raise task_failed(calls[i], attempts[i], cause) from exc
                    log.warning("task %s failed (attempt %d), retrying: %s", calls[i].label, attempts[i], cause)
                    attempts[i] += 1
                    pending[self._submit(calls[i])] = i
                    continue
                if on_done is not None:
                    results[i] = kept_result(on_done(i, results[i]), results[i])
        self._drain()
        return results

    def close(self) -> None:
        self.interrupts.restore()
        try:
            self._drain()
        except Exception:  # noqa: BLE001 - best effort at shutdown
            pass
        if self.started_here:
            self.ray.shutdown()
        if self.temp_dir is not None:
            import shutil

            shutil.rmtree(self.temp_dir, ignore_errors=True)
            self.temp_dir = None
