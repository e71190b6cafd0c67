"""Counts of a fetch run, its progress line and its summary table (`fetch-stats.json`)."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class FetchStats:
    planned: int = 0
    started_at: float = field(default_factory=time.monotonic)
    outcomes: Counter[str] = field(default_factory=Counter)  # fetched | failed | skipped
    reasons: Counter[str] = field(default_factory=Counter)  # failure and skip kinds
    body_bytes: int = 0
    hosts_parked: int = 0
    requests: int = 0
    retries: int = 0
    robots_fetches: int = 0
    refused_targets: int = 0
    hosts_active: int = 0

    @property
    def settled(self) -> int:
        return sum(self.outcomes.values())

    def add(self, outcome: str, reason: str | None, body_bytes: int) -> None:
        self.outcomes[outcome] += 1
        if reason:
            self.reasons[reason] += 1
        self.body_bytes += body_bytes

    def elapsed_s(self) -> float:
        return max(1e-9, time.monotonic() - self.started_at)

    def eta_s(self) -> float | None:
        done = self.settled
        if not done or not self.planned:
            return None
        return (self.planned - done) * self.elapsed_s() / done

    def progress_line(self) -> str:
        elapsed = self.elapsed_s()
        errors = ", ".join(f"{k} {v}" for k, v in self.reasons.most_common(4))
        eta = self.eta_s()
        eta_text = "-" if eta is None else f"{int(eta) // 3600}:{int(eta) % 3600 // 60:02d}:{int(eta) % 60:02d}"
        return (
            f"fetch {self.settled:,}/{self.planned:,}  {self.outcomes['fetched'] / elapsed:,.1f} pages/s  "
            f"{self.body_bytes / elapsed / 1e6:,.2f} MB/s  failed {self.outcomes['failed']:,}"
            f"{f' ({errors})' if errors else ''}  hosts active {self.hosts_active} parked {self.hosts_parked}  ETA "
            f"{eta_text}"
        )

    def as_dict(self) -> dict[str, Any]:
        elapsed = self.elapsed_s()
        return {
            "planned": self.planned, "settled": self.settled,
            "outcomes": dict(sorted(self.outcomes.items())), "reasons": dict(self.reasons.most_common()),
            "requests": self.requests, "retries": self.retries, "robots_fetches": self.robots_fetches,
            "refused_targets": self.refused_targets, "hosts_parked": self.hosts_parked,
            "body_bytes": self.body_bytes, "elapsed_s": round(elapsed, 3),
            "pages_per_s": round(self.outcomes["fetched"] / elapsed, 2),
            "bytes_per_s": round(self.body_bytes / elapsed, 1),
        }

    def render(self) -> str:
        """The summary table printed at the end of a run."""
        rows = [("planned", f"{self.planned:,}")]
        rows += [(k, f"{v:,}") for k, v in sorted(self.outcomes.items())]
        rows += [(f"  {k}", f"{v:,}") for k, v in self.reasons.most_common()]
        rows += [
            ("requests", f"{self.requests:,}"), ("retries", f"{self.retries:,}"),
            ("robots.txt fetched", f"{self.robots_fetches:,}"), ("hosts parked", f"{self.hosts_parked:,}"),
            ("body bytes", f"{self.body_bytes:,}"), ("elapsed", f"{self.elapsed_s():,.1f} s"),
            ("pages/s", f"{self.outcomes['fetched'] / self.elapsed_s():,.1f}"),
        ]
        width = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{width}}  {v:>12}" for k, v in rows)
