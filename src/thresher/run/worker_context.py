"""Pool workers that do not re-run the driver's main module.

A `spawn` or `forkserver` child re-imports the parent's `__main__` (as `__mp_main__`) before it runs
anything, so that functions defined there can be unpickled. A script calling `thresher.build(...)`
at top level, without an `if __name__ == "__main__":` guard, then started a second build inside
every worker ("another build is running", a broken pool). thresher's workers only run thresher's own
task functions, which never live in `__main__`, so the start-up data a worker receives leaves the
main module out: multiprocessing decides what to re-import from `sys.modules["__main__"]` when it
prepares a child (`multiprocessing.spawn.get_preparation_data`), and the driver shows it a bare
module for exactly that moment.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import sys
import threading
import types
from collections.abc import Iterator
from typing import Any

_swap_lock = threading.Lock()


@contextlib.contextmanager
def _main_module_hidden() -> Iterator[None]:
    """While a child's start-up data is written, `__main__` is a module with no file and no spec,
    which multiprocessing records as "nothing to re-import"."""
    with _swap_lock:
        real = sys.modules.get("__main__")
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            yield
        finally:
            if real is not None:
                sys.modules["__main__"] = real


def _launch_without_main(popen_cls: type) -> type:
    class DetachedMainPopen(popen_cls):  # type: ignore[misc]
        def _launch(self, process_obj: Any) -> None:
            with _main_module_hidden():
                super()._launch(process_obj)

    return DetachedMainPopen


# The process classes are pickled into each child, so they live at module level.
class ForkServerProcess(multiprocessing.context.ForkServerProcess):
    @staticmethod
    def _Popen(process_obj: Any) -> Any:
        from multiprocessing.popen_forkserver import Popen

        return _launch_without_main(Popen)(process_obj)


class SpawnProcess(multiprocessing.context.SpawnProcess):
    @staticmethod
    def _Popen(process_obj: Any) -> Any:
        from multiprocessing.popen_spawn_posix import Popen

        return _launch_without_main(Popen)(process_obj)


class ForkServerContext(multiprocessing.context.ForkServerContext):
    Process = ForkServerProcess


class SpawnContext(multiprocessing.context.SpawnContext):
    Process = SpawnProcess


def detached_main_context(method: str) -> Any:
    """A multiprocessing context for `method` ('forkserver' or 'spawn') whose processes start
    without re-importing the driver's `__main__`."""
    if method == "forkserver":
        return ForkServerContext()
    if method == "spawn":
        return SpawnContext()
    raise ValueError(f"unsupported start method {method!r}")
