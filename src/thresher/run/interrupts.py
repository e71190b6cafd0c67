"""Stopping a build on SIGTERM or Ctrl-C: within a second, with no process left behind.

While a build's engine is open (`InterruptHandlers`, main thread only):
- SIGTERM (a plain `kill PID`, a scheduler's stop) raises `KeyboardInterrupt` in the driver, like a
  first Ctrl-C, so the same path stops the workers and prints the resume hint;
- a second SIGINT or SIGTERM while that stop is under way ends the driver at once (exit 130),
  after killing the worker processes it knows of.
Worker processes ignore SIGINT (a terminal sends Ctrl-C to the whole process group): the driver
decides, and `kill_processes` ends them. Finished tasks keep their completion markers, so a rerun
of the same command resumes.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterable
from types import FrameType
from typing import Any

KILL_GRACE_S = 0.5  # SIGTERM first (a worker flushes nothing that matters), then SIGKILL


class InterruptHandlers:
    """Installs the build's SIGINT/SIGTERM handlers until `restore`; `on_force` is called before a
    forced exit (a second signal) to kill what the driver started."""

    def __init__(self, on_force: Callable[[], None] | None = None) -> None:
        self.on_force = on_force
        self.interrupted = False
        self._previous: dict[int, Any] = {}
        if threading.current_thread() is not threading.main_thread():
            return  # signals are delivered to the main thread only: a library caller's thread keeps its own
        for signum in (signal.SIGINT, signal.SIGTERM):
            self._previous[signum] = signal.signal(signum, self._handle)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.interrupted:
            if self.on_force is not None:
                try:
                    self.on_force()
                finally:
                    os._exit(130)
            os._exit(130)
        self.interrupted = True
        raise KeyboardInterrupt()

    def restore(self) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
        self._previous.clear()


def ignore_interrupts_in_worker() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def kill_processes(pids: Iterable[int], grace_s: float = KILL_GRACE_S) -> None:
    """SIGTERM each process, then SIGKILL what is still alive after `grace_s`, and reap our children."""
    alive = []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
            alive.append(pid)
        except (ProcessLookupError, PermissionError):
            continue
    deadline = time.monotonic() + grace_s
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in alive if _alive(pid)]
        if alive:
            time.sleep(0.02)
    for pid in alive:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    for pid in alive:
        _alive(pid, block=True)


def _alive(pid: int, block: bool = False) -> bool:
    try:
        done, _ = os.waitpid(pid, 0 if block else os.WNOHANG)
        return done == 0
    except ChildProcessError:  # not our child (a fork server's): ask the kernel
        try:
            os.kill(pid, 0)
            return True
        except (ProcessLookupError, PermissionError):
            return False
