"""A per-document time bound that no input can defeat.

Two layers, so that one pathological page can neither stall a build nor stop it:

1. An interval timer (`setitimer(ITIMER_REAL)`) armed around each document's stage chain. Its
   SIGALRM handler raises `DeadlineExceeded` in the main thread. CPython's regular-expression engine
   checks for pending signals while it matches, so even a single backtracking `re` call is
   interrupted (tests/reliability/test_deadline.py holds a catastrophic pattern to it). The chain
   turns it into `Drop(<stage>, "timeout", value=<seconds>, limit=<deadline>)`.
2. In worker processes only (pool and Ray), a kill timer for a call that never returns to the
   interpreter (a C loop that holds the GIL and checks no signals: no Python-level handler or
   thread can run then). A CPU-time timer (`ITIMER_PROF`) of deadline + grace is armed with it; when
   it expires, `faulthandler` (C code, no GIL needed) writes the stack to the task's dump file and
   lets SIGPROF end the process. Before each document the task's *crumb* (a small memory-mapped
   file) records which document and stage are running. The engine retries the task; the retry
   finds the crumb and the dump, and drops that document as a timeout without running it.
   A worker that died inside a document for any other reason (a segfault in a decoder, the OOM
   killer) is noted the same way, and a document that two attempts died in is skipped
   (`<stage>: worker_died`). So is a document in which an exception escaped the processing of two
   attempts (`RecordFailures`: `<step>: error`), whatever raised it.

A timer only exists in the main thread of a process with `setitimer` (POSIX). Elsewhere (a library
caller's thread) layer 1 is off and only the stages' own cooperative time limits apply.

Determinism: a document is dropped for time only when it runs `seconds` on this machine, which
depends on the machine and its load. The default (30 s) is far above any normal page (the slowest
of the evaluation pages takes well under a second), so it never decides the output of a normal
crawl; every firing is counted (`event/deadline_exceeded`) so a run can tell.
"""

from __future__ import annotations

import json
import mmap
import os
import signal
import struct
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# CPU seconds a worker may stay in one document past its deadline before the kill timer ends it:
# the interval timer normally fires within milliseconds, so this only catches calls ignoring signals.
WATCHDOG_GRACE_S = 5.0

# Set by the pool and Ray engines in their worker processes: only there may the kill timer end the
# process (in the driver, the local engine's process is the user's).
_hard_exit_allowed = False

_CRUMB = struct.Struct("<qqd")  # ordinal (-1: none), stage index, wall-clock start
_NO_DOCUMENT = -1


def allow_hard_exit(allowed: bool = True) -> None:
    global _hard_exit_allowed
    _hard_exit_allowed = allowed


class DeadlineExceeded(BaseException):  # noqa: N818 - raised by the timer, like KeyboardInterrupt
    """Raised in the main thread when a document's deadline passes. A BaseException, so that a
    stage's own `except Exception` cannot swallow it."""


def timers_available() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


class DocumentDeadline:
    """Arms a timer of `seconds` around one document at a time (`start` … `stop`).

    `stuck_dir` and `task`, when set (by the scan task), name where the crumb, the kill dump and
    the stuck log of that task live; with them, worker processes also arm the kill timer."""

    def __init__(self, seconds: float | None, stuck_dir: str | Path | None = None, task: str = "") -> None:
        self.seconds = seconds if seconds is not None and seconds > 0 else None
        self.use_timer = self.seconds is not None and timers_available()
        self._armed = False
        self._installed = False
        self._previous: Any = None
        self._started = 0.0
        self._crumb: mmap.mmap | None = None
        self._kill = False
        self._dump: Any = None
        if stuck_dir is not None and self.seconds is not None:
            self._open_crumb(Path(stuck_dir), task)

    def _open_crumb(self, folder: Path, task: str) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / f"{task}.crumb", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            os.ftruncate(fd, _CRUMB.size)
            self._crumb = mmap.mmap(fd, _CRUMB.size)
        finally:
            os.close(fd)
        _CRUMB.pack_into(self._crumb, 0, _NO_DOCUMENT, 0, 0.0)
        if _hard_exit_allowed and self.use_timer and hasattr(signal, "SIGPROF"):
            import faulthandler

            self._dump = open(folder / f"{task}.dump", "w")  # noqa: SIM115 - open while the task runs
            faulthandler.register(signal.SIGPROF, file=self._dump, all_threads=False, chain=True)
            self._kill = True

    def close(self) -> None:
        """Give back the SIGALRM handler and the kill timer (the chain's owner calls it when done; a
        library `Pipeline` that never does keeps a handler that ignores alarms it did not arm)."""
        self.stop()
        if self._installed:
            signal.signal(signal.SIGALRM, self._previous if self._previous is not None else signal.SIG_DFL)
            self._installed = False
            self._previous = None
        if self._kill:
            import faulthandler

            faulthandler.unregister(signal.SIGPROF)
            self._kill = False
        if self._dump is not None:
            self._dump.close()
            self._dump = None
        if self._crumb is not None:
            self._crumb.close()
            self._crumb = None

    # -- one document --------------------------------------------------------------------------

    def start(self, ordinal: int = 0) -> None:
        if self.seconds is None:
            return
        self._started = time.monotonic()
        if self._crumb is not None:
            _CRUMB.pack_into(self._crumb, 0, ordinal, 0, time.time())
        if self.use_timer:
            if not self._installed:  # once: installing a handler costs ~14 us, arming a timer ~1.5
                self._previous = signal.signal(signal.SIGALRM, self._on_alarm)
                self._installed = True
            self._armed = True
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
            if self._kill:
                signal.setitimer(signal.ITIMER_PROF, self.seconds + max(WATCHDOG_GRACE_S, self.seconds))

    def entering(self, stage_index: int) -> None:
        """Note the stage now running (what a retry attributes a stuck document to)."""
        if self._crumb is not None:
            self._crumb[8:16] = stage_index.to_bytes(8, "little")

    def stop(self) -> None:
        if self._crumb is not None:
            self._crumb[0:8] = _NO_DOCUMENT.to_bytes(8, "little", signed=True)
        if not self._armed:
            return
        self._armed = False  # first: an alarm already pending is ignored by the handler
        signal.setitimer(signal.ITIMER_REAL, 0)
        if self._kill:
            signal.setitimer(signal.ITIMER_PROF, 0)

    def elapsed(self) -> float:
        return time.monotonic() - self._started

    def _on_alarm(self, signum: int, frame: Any) -> None:
        if self._armed:
            self._armed = False
            raise DeadlineExceeded()


@dataclass(frozen=True, slots=True)
class StuckDocument:
    """A document that an earlier attempt of the task died in, or failed in."""

    ordinal: int
    stage_index: int
    timed_out: bool  # the kill timer ended it (else: the process died for another reason)
    deaths: int  # attempts that died in it
    errors: int = 0  # attempts whose exception escaped while they processed it (`RecordFailures`)
    step: str = ""  # where the last such exception was raised
    error: str = ""  # that exception, as `Type: message`

    @property
    def failures(self) -> int:
        return self.deaths + self.errors

    @property
    def skip(self) -> bool:
        """Drop it instead of running it: a timeout needs no second try; anything else, two."""
        return self.timed_out or self.failures >= 2


class RecordFailures:
    """While a task processes records: which record (`ordinal`) and step it is in. When an exception
    escapes that processing it is noted in the task's stuck log, so that the retry skips a record two
    attempts failed in (`collect_stuck`) instead of failing on it until the retries run out.

    An `OSError` (disk full, a file that vanished) is the environment's failure, not the record's:
    it is not noted, so a retry after the disk is freed runs every record."""

    def __init__(self, stuck_dir: str | Path, task: str) -> None:
        self.log_path = Path(stuck_dir) / f"{task}.jsonl"
        self.ordinal: int | None = None
        self.step = ""

    def __enter__(self) -> RecordFailures:
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        if self.ordinal is not None and isinstance(exc, Exception) and not isinstance(exc, OSError):
            line = json.dumps({"o": self.ordinal, "step": self.step, "error": f"{type(exc).__name__}: {exc}"[:500]})
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(line + "\n")


def collect_stuck(stuck_dir: str | Path, task: str, seconds: float | None) -> dict[int, StuckDocument]:
    """Before a task runs: the documents its earlier attempts died in, by ordinal. Reads the crumb
    and kill dump a dead attempt left, appends them to the task's stuck log, and returns every entry
    of that log (`StuckDocument.skip`: whether to drop the document instead of running it)."""
    folder = Path(stuck_dir)
    crumb, dump, log_path = folder / f"{task}.crumb", folder / f"{task}.dump", folder / f"{task}.jsonl"
    try:
        ordinal, stage_index, _ = _CRUMB.unpack(crumb.read_bytes()[: _CRUMB.size])
    except (FileNotFoundError, struct.error):
        ordinal = _NO_DOCUMENT
    if ordinal != _NO_DOCUMENT:
        try:
            timed_out = dump.stat().st_size > 0
        except FileNotFoundError:
            timed_out = False
        line = json.dumps({"o": ordinal, "stage": stage_index, "timed_out": timed_out})
        with open(log_path, "a", encoding="utf-8") as f:
            f.write(line + "\n")
        crumb.unlink(missing_ok=True)
        dump.unlink(missing_ok=True)
    stuck: dict[int, StuckDocument] = {}
    try:
        with open(log_path, "rb") as f:
            for raw in f:
                try:
                    entry = json.loads(raw)
                except ValueError:
                    continue
                o = entry["o"]
                before = stuck.get(o) or StuckDocument(o, 0, False, 0)
                if "error" in entry:  # an exception escaped while an attempt processed it
                    stuck[o] = StuckDocument(
                        o, before.stage_index, before.timed_out, before.deaths, before.errors + 1,
                        str(entry.get("step", "")), str(entry["error"]),
                    )
                else:  # an attempt died in it
                    stuck[o] = StuckDocument(
                        o,
                        int(entry.get("stage", 0)),
                        bool(entry.get("timed_out")) or before.timed_out,
                        before.deaths + 1,
                        before.errors, before.step, before.error,
                    )
    except FileNotFoundError:
        pass
    return stuck
