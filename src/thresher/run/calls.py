"""A task as an engine receives it (`TaskCall`), the order engines start calls in, and the error a
task that keeps failing becomes. Shared by every engine (`thresher.run.engines`,
`thresher.run.pool_engine`, `thresher.run.ray_engine`), so that no engine module imports another."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from thresher.core.errors import TaskError

# A warm-up for new workers: a function (importable by name) and the bytes it is called with, e.g.
# the driver's built stages (`thresher.stage_cache.worker_warmup`). Engines pass it on unread.
Warmup = tuple[Callable[[bytes], None], bytes]


@dataclass(frozen=True, slots=True)
class TaskResources:
    """What one task asks the engine for. Ray schedules by it (a task waits for a node with the CPUs,
    GPUs and memory free); the local and pool engines run one task per worker and do not read it."""

    cpus: float = 1.0
    gpus: float = 0.0
    memory_bytes: int | None = None  # the task's expected peak, headroom included; None: not declared


ONE_CPU = TaskResources()


@dataclass(frozen=True, slots=True)
class TaskCall:
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    label: str  # the task and its input, for messages
    log_path: str | None = None
    weight: float | None = None  # expected cost (e.g. input bytes); None: an argument's `size_hint`
    resources: TaskResources = ONE_CPU


def task_weight(call: TaskCall) -> float | None:
    """A call's expected cost: its `weight`, else the `size_hint` of an argument that has one (an
    input partition that is a byte range), else None (unknown)."""
    if call.weight is not None:
        return call.weight
    for arg in call.args:
        hint = getattr(arg, "size_hint", None)
        if isinstance(hint, (int, float)):
            return hint
    return None


def dispatch_order(calls: Sequence[TaskCall]) -> list[int]:
    """The order to start calls in: heaviest first when every weight is known (ties keep call
    order), else call order. It never changes results, which are returned in call order."""
    weights = [task_weight(c) for c in calls]
    if not weights or any(w is None for w in weights):
        return list(range(len(calls)))
    return sorted(range(len(calls)), key=lambda i: -weights[i])  # type: ignore[operator]


def kept_result(replacement: Any, result: Any) -> Any:
    """What an engine keeps of a finished task: the driver's `on_done` may return a slim form of the
    result (it folded the rest into running totals, so the driver holds per task only what later
    phases plan from, not every task's counters); None keeps the result as it came."""
    return result if replacement is None else replacement


def task_failed(call: TaskCall, attempts: int, exc: BaseException) -> TaskError:
    where = f"; its log: {call.log_path}" if call.log_path else ""
    cause = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    error = TaskError(f"task {call.label} failed after {attempts} attempt(s): {cause}{where}")
    error.__cause__ = exc
    return error
