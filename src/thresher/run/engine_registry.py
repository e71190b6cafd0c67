"""The registry of engines by name (`exec.engine`, `--engine`): where a build's tasks run.

Each entry is a factory `(options: EngineOptions) -> Engine` (the protocol in
`thresher.run.engines`: `name`, `run(calls, on_done)` returning results in call order, `close()`).
The built-ins are `local`, `pool` and `ray`; a third-party package registers a factory through an
entry point in the `thresher.engines` group and is then chosen by name like a built-in. This module
imports no engine: the config checks names against it, and `make_engine` imports the one a build runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from thresher.registry import Registry

if TYPE_CHECKING:
    from thresher.run.calls import Warmup
    from thresher.run.engines import Engine
    from thresher.run.progress import Sink


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineOptions:
    """What a build tells the engine it asks for (the `exec` settings and the driver's hooks)."""

    workers: int | None = None  # worker processes (None: the CPU count); an in-process engine ignores it
    sink: Sink | None = None  # progress ticks from tasks: an engine installs it where its tasks run
    retries: int = 0  # times a failed task is run again before the engine raises `TaskError`
    ray_address: str | None = None  # the Ray cluster to join (the ray engine)
    warmup: Callable[[], Warmup | None] | None = None  # for new worker processes (the pool engine)
    preload: Sequence[str] = ()  # modules a forking engine's server imports before it forks workers


EngineFactory = Callable[[EngineOptions], "Engine"]


def _check(obj: object) -> EngineFactory:
    if not callable(obj):
        raise TypeError(f"a thresher.engines entry point must name a factory (EngineOptions -> Engine), not {obj!r}")
    factory: Callable[[EngineOptions], Any] = obj
    return factory


ENGINES: Registry[EngineFactory] = Registry(
    "engine",
    "thresher.engines",
    {
        "local": "thresher.run.engines:local_engine",
        "pool": "thresher.run.engines:pool_engine",
        "ray": "thresher.run.engines:ray_engine",
    },
    check=_check,
)
