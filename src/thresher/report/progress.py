"""Progress on stderr: a live line on a terminal, periodic lines otherwise.

On a terminal the line is redrawn at most five times a second with records, kept share, docs/s
and, when the input size is known, a percentage and ETA. When stderr is not a terminal (logs, CI),
one line sums up each phase when it ends (its tasks done, its records), and the scan prints a line
every `every` records, so logs stay readable; a phase's start, with nothing done yet, prints nothing.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from thresher.run.progress import Snapshot


def _eta(seconds: float) -> str:
    seconds = int(seconds)
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}"


def format_line(s: Snapshot) -> str:
    parts = [f"{s.phase:<8}"]
    if s.tasks_total:
        parts.append(f"tasks {s.tasks_done}/{s.tasks_total}")
    if s.phase == "scan":
        passed_pct = f"{100.0 * s.passed / s.seen:.1f}%" if s.seen else "-"
        parts.append(f"{s.seen:,} seen")
        parts.append(f"{passed_pct} passed")
        parts.append(f"{s.docs_per_s():,.0f} docs/s")
    else:
        parts.append(f"{s.seen:,} seen")
        if s.kept:
            parts.append(f"{s.kept:,} kept ({100.0 * s.kept / max(1, s.seen):.1f}%)")
    if s.malformed:
        parts.append(f"{s.malformed:,} malformed")
    frac = s.fraction()
    if frac is not None:
        parts.append(f"{100 * frac:5.1f}%")
        phase_elapsed = time.monotonic() - s.phase_started
        if 0.02 < frac < 1.0 and phase_elapsed > 1.0:
            parts.append(f"ETA {_eta(phase_elapsed * (1 - frac) / frac)}")
    return "  ".join(parts)


class ProgressPrinter:
    def __init__(self, stream: TextIO | None = None, every: int = 10_000, quiet: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.every = every
        self.quiet = quiet
        self.last_draw = 0.0
        self.last_phase = ""
        self.next_seen = every
        self.phase_line: str | None = None  # the current phase's latest line, printed when it ends

    def __call__(self, s: Snapshot) -> None:
        if self.quiet:
            return
        if self.tty:
            now = time.monotonic()
            if s.final or s.phase != self.last_phase or now - self.last_draw >= 0.2:
                self.stream.write("\r\x1b[2K" + format_line(s))
                if s.final:
                    self.stream.write("\n")
                self.stream.flush()
                self.last_draw = now
                self.last_phase = s.phase
            return
        if self.every <= 0:
            return
        if s.phase != self.last_phase:
            if self.phase_line is not None:  # the phase that just ended, as it ended
                self.stream.write(self.phase_line + "\n")
            self.last_phase = s.phase
        self.phase_line = format_line(s)
        if s.final:
            self.stream.write(self.phase_line + "\n")
            self.phase_line = None
            self.stream.flush()
            return
        if s.phase == "scan" and s.seen >= self.next_seen:
            while self.next_seen <= s.seen:
                self.next_seen += self.every
            self.stream.write(self.phase_line + "\n")
        self.stream.flush()
