"""Progress reporting from tasks to whoever is listening, wherever the task runs.

Tasks call `Throttle(phase).tick(...)`; counts are batched (every ~0.25 s) and handed to the sink
installed in this process: the driver's aggregator when running in-process, or a queue back to the
driver from a pool worker. The library never prints: the CLI renders the aggregate.

Ticks are estimates, the finished task's result is exact. Ticks name the task they come from
(`set_task`, called by the task runner), so that the driver counts a task's ticks only while it runs:
its result then replaces them, a retried attempt's ticks replace the failed one's, and ticks that
arrive after the result (a pool worker's queue drains late) are ignored. So the counts shown never
exceed what the tasks really did, after retries or a resume, and equal it when a phase ends.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Sink = Callable[[str, dict[str, int]], None]
_sink: Sink | None = None
_task: str | None = None

# A tick's phase is "PHASE" or "PHASE<TASK_SEP>TASK-ID": the sink's plain (str, counts) shape crosses
# a pool's queue and a Ray actor unchanged.
TASK_SEP = "\x1f"
# The count an attempt's Throttle sends first: what earlier attempts of the task ticked is void.
ATTEMPT = "attempt"


def install(sink: Sink | None) -> None:
    global _sink
    _sink = sink


def set_task(task_id: str | None) -> None:
    """Name the task this process runs now (None when it is done): its Throttles tag their ticks."""
    global _task
    _task = task_id


def split_phase(tagged: str) -> tuple[str, str | None]:
    phase, _, task = tagged.partition(TASK_SEP)
    return phase, task or None


class Throttle:
    def __init__(self, phase: str, every_s: float = 0.25) -> None:
        self.phase = phase if _task is None else f"{phase}{TASK_SEP}{_task}"
        self.every_s = every_s
        self.pending: Counter[str] = Counter()
        self.last = time.monotonic()
        if _sink is not None and _task is not None:
            _sink(self.phase, {ATTEMPT: 1})

    def tick(self, **counts: int) -> None:
        if _sink is None:
            return
        self.pending.update(counts)
        now = time.monotonic()
        if now - self.last >= self.every_s:
            self.flush(now)

    def flush(self, now: float | None = None) -> None:
        if _sink is not None and self.pending:
            _sink(self.phase, dict(self.pending))
            self.pending.clear()
        self.last = now if now is not None else time.monotonic()


@dataclass
class Snapshot:
    """What the progress display shows: the current phase, tasks, documents and rate."""

    phase: str = "plan"
    tasks_done: int = 0
    tasks_total: int = 0
    seen: int = 0  # scan: records read (including malformed)
    passed: int = 0  # scan: documents that passed the per-document stages
    dropped: int = 0
    malformed: int = 0
    kept: int = 0  # write: documents written
    bytes_done: int = 0  # input bytes of finished scan tasks
    bytes_running: int = 0  # input bytes read so far by scan tasks still running
    bytes_read: int = 0  # input bytes ticked by tasks that do not name themselves (no `set_task`)
    bytes_total: int = 0
    started: float = field(default_factory=time.monotonic)
    phase_started: float = field(default_factory=time.monotonic)
    final: bool = False

    def docs_per_s(self) -> float:
        t = time.monotonic() - self.phase_started
        return self.seen / t if t > 0 and self.phase == "scan" else 0.0

    def fraction(self) -> float | None:
        if self.phase == "scan" and self.bytes_total > 0:
            # running tasks tick their bytes as they read; a finished one (or one skipped on resume)
            # counts through bytes_done. Ticks of unnamed tasks stay counted once the task is done:
            # for them the larger of the two is the better estimate
            return min(1.0, max(self.bytes_done + self.bytes_running, self.bytes_read) / self.bytes_total)
        if self.tasks_total:
            return self.tasks_done / self.tasks_total
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "tasks_done": self.tasks_done,
            "tasks_total": self.tasks_total,
            "seen": self.seen,
            "passed": self.passed,
            "dropped": self.dropped,
            "malformed": self.malformed,
            "kept": self.kept,
        }


_EXACT_FIELDS = ("seen", "passed", "dropped", "malformed", "kept")
# the counts each phase's tasks tick (and so must be set from their results)
_PHASE_FIELDS = {"scan": ("seen", "passed", "dropped", "malformed"), "write": ("kept", "dropped")}


def exact_counts(phase: str, result: Any) -> dict[str, int] | None:
    """The counts a finished task's result holds for the fields its phase ticks, or None when the
    result does not say (then the ticks stand)."""
    fields = _PHASE_FIELDS.get(phase)
    stats = getattr(result, "stats", None)
    if fields is None or stats is None:
        return None
    if phase == "scan":
        survivors = getattr(result, "survivors", None)
        if survivors is None:
            return None
        return {"seen": stats.seen, "passed": survivors, "dropped": stats.dropped, "malformed": stats.malformed}
    kept = getattr(result, "kept", None)
    if kept is None:
        return None
    return {"kept": kept, "dropped": stats.dropped}


def tick_fields(phase: str, counts: dict[str, int]) -> Counter[str]:
    """What one tick adds to the snapshot's fields."""
    passed = counts.get("passed", 0)
    dropped = counts.get("dropped", 0)
    malformed = counts.get("malformed", 0)
    fields: Counter[str] = Counter(dropped=dropped, malformed=malformed, kept=counts.get("kept", 0))
    if phase == "scan":
        fields.update(seen=passed + dropped + malformed, passed=passed)
    return fields


class Aggregator:
    """Folds task ticks and task completions into a `Snapshot` and calls the user's callback."""

    def __init__(self, callback: Callable[[Snapshot], None] | None) -> None:
        self.callback = callback
        self.snapshot = Snapshot()
        self.phase_seconds: dict[str, float] = {}  # wall time of each finished phase
        # Each finished task's result has exact counts: it replaces the task's ticks at once, and
        # once every task of a phase has reported one, the phase's counts are set from them (ticks
        # of tasks that do not name themselves included: no "kept (136%)" after a resume).
        self._phase_base: dict[str, int] = {}
        self._phase_exact: Counter[str] = Counter()
        self._phase_results = 0
        self._running: dict[str, Counter[str]] = {}  # per named running task: what its ticks added
        self._finished: set[str] = set()

    def start_phase(self, phase: str, tasks_total: int, bytes_total: int = 0) -> None:
        s = self.snapshot
        if s.phase != "plan":
            self.phase_seconds[s.phase] = self.phase_seconds.get(s.phase, 0.0) + time.monotonic() - s.phase_started
        s.phase, s.tasks_done, s.tasks_total = phase, 0, tasks_total
        self._phase_base = {name: getattr(s, name) for name in _EXACT_FIELDS}
        self._phase_exact = Counter()
        self._phase_results = 0
        self._running, self._finished = {}, set()
        s.bytes_done, s.bytes_running, s.bytes_read, s.bytes_total = 0, 0, 0, bytes_total
        s.phase_started = time.monotonic()
        self.emit()

    def _add(self, fields: Counter[str], sign: int = 1) -> None:
        s = self.snapshot
        for name, n in fields.items():
            if name == "bytes":
                s.bytes_running += sign * n
            else:
                setattr(s, name, getattr(s, name) + sign * n)

    def tick(self, tagged_phase: str, counts: dict[str, int]) -> None:
        s = self.snapshot
        phase, task = split_phase(tagged_phase)
        if phase != s.phase or self._phase_results == s.tasks_total > 0 or task in self._finished:
            return  # late: its phase, or its task, has reported exact counts since
        fields = tick_fields(phase, counts)
        if task is None:
            self._add(fields)
            s.bytes_read += counts.get("bytes", 0)
        else:
            mine = self._running.setdefault(task, Counter())
            if counts.get(ATTEMPT):  # a new attempt: an earlier one's ticks no longer count
                self._add(mine, -1)
                mine.clear()
            fields["bytes"] = counts.get("bytes", 0)
            self._add(fields)
            mine.update(fields)
        self.emit()

    def task_done(self, task_bytes: int = 0, result: Any = None, task: str | None = None) -> None:
        s = self.snapshot
        s.tasks_done += 1
        s.bytes_done += task_bytes
        counts = exact_counts(s.phase, result)
        if task is not None:
            self._finished.add(task)
            ticked = self._running.pop(task, None)
            if counts is not None and ticked is not None:
                self._add(ticked, -1)
            elif ticked is not None:  # no exact counts to put instead: only its bytes are done
                s.bytes_running -= ticked["bytes"]
            if counts is not None:
                self._add(Counter(counts))
        if counts is not None:
            self._phase_exact.update(counts)
            self._phase_results += 1
            if self._phase_results == s.tasks_total:
                for name in _EXACT_FIELDS:
                    if name in self._phase_exact or name in _PHASE_FIELDS.get(s.phase, ()):
                        setattr(s, name, self._phase_base[name] + self._phase_exact[name])
        self.emit()

    def emit(self, final: bool = False) -> None:
        if final:
            s = self.snapshot
            self.phase_seconds[s.phase] = self.phase_seconds.get(s.phase, 0.0) + time.monotonic() - s.phase_started
        self.snapshot.final = final
        if self.callback is not None:
            self.callback(self.snapshot)
