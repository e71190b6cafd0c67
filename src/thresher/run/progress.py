"""Progress reporting from tasks to whoever is listening, wherever the task runs.

Tasks call `Throttle(phase).tick(...)`; counts are batched (every ~0.25 s) and handed to the sink
installed in this process: the driver's aggregator when running in-process, or a queue back to the
driver from a pool worker. The library never prints: the CLI renders the aggregate.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Sink = Callable[[str, dict[str, int]], None]
_sink: Sink | None = None


def install(sink: Sink | None) -> None:
    global _sink
    _sink = sink


class Throttle:
    def __init__(self, phase: str, every_s: float = 0.25) -> None:
        self.phase = phase
        self.every_s = every_s
        self.pending: Counter[str] = Counter()
        self.last = time.monotonic()

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
    bytes_read: int = 0  # input bytes reported by running scan tasks as they read
    bytes_total: int = 0
    started: float = field(default_factory=time.monotonic)
    phase_started: float = field(default_factory=time.monotonic)
    final: bool = False

    def docs_per_s(self) -> float:
        t = time.monotonic() - self.phase_started
        return self.seen / t if t > 0 and self.phase == "scan" else 0.0

    def fraction(self) -> float | None:
        if self.phase == "scan" and self.bytes_total > 0:
            # tasks tick their bytes as they read and the remainder when they finish; a task skipped
            # on resume only counts through bytes_done: the larger of the two is the better estimate
            return min(1.0, max(self.bytes_done, self.bytes_read) / self.bytes_total)
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


class Aggregator:
    """Folds task ticks and task completions into a `Snapshot` and calls the user's callback."""

    def __init__(self, callback: Callable[[Snapshot], None] | None) -> None:
        self.callback = callback
        self.snapshot = Snapshot()
        self.phase_seconds: dict[str, float] = {}  # wall time of each finished phase
        # Ticks are estimates: a failed attempt's ticks stay counted, and a task skipped on resume
        # never ticks. Each finished task's result has exact counts: once every task of a phase has
        # reported one, the phase's counts are set from them (no "kept (136%)" after a resume).
        self._phase_base: dict[str, int] = {}
        self._phase_exact: Counter[str] = Counter()
        self._phase_results = 0

    def start_phase(self, phase: str, tasks_total: int, bytes_total: int = 0) -> None:
        s = self.snapshot
        if s.phase != "plan":
            self.phase_seconds[s.phase] = time.monotonic() - s.phase_started
        s.phase, s.tasks_done, s.tasks_total = phase, 0, tasks_total
        self._phase_base = {name: getattr(s, name) for name in _EXACT_FIELDS}
        self._phase_exact = Counter()
        self._phase_results = 0
        s.bytes_done, s.bytes_read, s.bytes_total = 0, 0, bytes_total
        s.phase_started = time.monotonic()
        self.emit()

    def tick(self, phase: str, counts: dict[str, int]) -> None:
        s = self.snapshot
        passed = counts.get("passed", 0)
        dropped = counts.get("dropped", 0)
        malformed = counts.get("malformed", 0)
        if phase == "scan":
            s.seen += passed + dropped + malformed
            s.passed += passed
        s.dropped += dropped
        s.malformed += malformed
        s.kept += counts.get("kept", 0)
        s.bytes_read += counts.get("bytes", 0)
        self.emit()

    def task_done(self, task_bytes: int = 0, result: Any = None) -> None:
        s = self.snapshot
        s.tasks_done += 1
        s.bytes_done += task_bytes
        counts = exact_counts(s.phase, result)
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
            self.phase_seconds[s.phase] = time.monotonic() - s.phase_started
        self.snapshot.final = final
        if self.callback is not None:
            self.callback(self.snapshot)
