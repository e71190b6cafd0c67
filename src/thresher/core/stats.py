"""Mergeable run statistics.

Counters are keyed by flat strings so that any engine merges task stats by summing:

- `seen`, `kept`, `dropped`, `malformed`: the reconciling totals (`seen == kept + dropped + malformed`);
- `drop/<stage>/<reason>`: documents removed, attributed to the first rule that removed them;
- `fail/<stage>/<reason>`: rule failures, counting every failing rule of a rule set (a document can
  fail several), so the failure histogram is complete;
- `malformed/<reason>`: input records that could not become documents;
- `event/<name>`: notable but harmless things (charset fallback, revisit records, ...).

Timings (seconds per stage) are kept apart because they are the only non-deterministic part.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from thresher.core.document import Drop, Malformed

HIST_PREFIX = "hist/"  # value histograms of the per-document stages' measurements


@dataclass
class Stats:
    counters: Counter[str] = field(default_factory=Counter)
    timings: dict[str, float] = field(default_factory=dict)

    # -- recording ---------------------------------------------------------------------------

    def count(self, key: str, n: int = 1) -> None:
        self.counters[key] += n

    def record_seen(self, n: int = 1) -> None:
        self.counters["seen"] += n

    def record_kept(self, n: int = 1) -> None:
        self.counters["kept"] += n

    def record_drop(self, drop: Drop, failures: list[Drop] | None = None) -> None:
        """Count a removed document under its attributed drop, and every rule failure if given."""
        self.counters["dropped"] += 1
        self.counters[f"drop/{drop.stage}/{drop.reason}"] += 1
        for failure in failures or ():
            self.counters[f"fail/{failure.stage}/{failure.reason}"] += 1

    def record_malformed(self, malformed: Malformed) -> None:
        self.counters["malformed"] += 1
        self.counters[f"malformed/{malformed.reason}"] += 1

    def add_time(self, stage: str, seconds: float) -> None:
        self.timings[stage] = self.timings.get(stage, 0.0) + seconds

    # -- algebra -------------------------------------------------------------------------------

    def __add__(self, other: Stats) -> Stats:
        timings = dict(self.timings)
        for k, v in other.timings.items():
            timings[k] = timings.get(k, 0.0) + v
        return Stats(self.counters + other.counters, timings)

    def __radd__(self, other: Any) -> Stats:
        # lets `sum(list_of_stats)` work: sum starts from 0
        if other == 0:
            return self
        return NotImplemented

    def __iadd__(self, other: Stats) -> Stats:
        self.counters.update(other.counters)
        for k, v in other.timings.items():
            self.timings[k] = self.timings.get(k, 0.0) + v
        return self

    # -- reading ---------------------------------------------------------------------------------

    @property
    def seen(self) -> int:
        return self.counters["seen"]

    @property
    def kept(self) -> int:
        return self.counters["kept"]

    @property
    def dropped(self) -> int:
        return self.counters["dropped"]

    @property
    def malformed(self) -> int:
        return self.counters["malformed"]

    def reconciles(self) -> bool:
        return self.seen == self.kept + self.dropped + self.malformed

    def by_prefix(self, prefix: str) -> dict[str, int]:
        """Counters under `prefix/`, with the prefix removed, in sorted order."""
        p = prefix + "/"
        return {k[len(p):]: v for k, v in sorted(self.counters.items()) if k.startswith(p) and v}

    def to_dict(self) -> dict[str, Any]:
        """The `stats.json` form: totals, a per-stage/per-reason breakdown, then timings."""
        drops: dict[str, dict[str, int]] = {}
        for key, n in self.by_prefix("drop").items():
            stage, reason = key.split("/", 1)
            drops.setdefault(stage, {})[reason] = n
        failures: dict[str, dict[str, int]] = {}
        for key, n in self.by_prefix("fail").items():
            stage, reason = key.split("/", 1)
            failures.setdefault(stage, {})[reason] = n
        return {
            "seen": self.seen,
            "kept": self.kept,
            "dropped": self.dropped,
            "malformed": self.malformed,
            "reconciles": self.reconciles(),
            "drops": drops,
            "rule_failures": failures,
            "malformed_reasons": self.by_prefix("malformed"),
            "events": self.by_prefix("event"),
            "counters": dict(sorted((k, v) for k, v in self.counters.items() if v and not k.startswith(HIST_PREFIX))),
            "histograms": self.histograms(),
            "timings_s": {k: round(v, 6) for k, v in sorted(self.timings.items())},
        }

    def histograms(self) -> dict[str, dict[str, dict[str, int]]]:
        """`hist/<metric>/<side>/<bin>` counters as `{metric: {side: {bin: n}}}` (the values the
        per-document stages measured, binned; see `thresher.run.observe`)."""
        out: dict[str, dict[str, dict[str, int]]] = {}
        for key, n in sorted(self.counters.items()):
            if n and key.startswith(HIST_PREFIX):
                metric, side, name = key[len(HIST_PREFIX):].rsplit("/", 2)
                out.setdefault(metric, {}).setdefault(side, {})[name] = n
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Stats:
        counters = Counter(data.get("counters", {}))
        for metric, sides in (data.get("histograms") or {}).items():
            for side, bins in sides.items():
                for name, n in bins.items():
                    counters[f"{HIST_PREFIX}{metric}/{side}/{name}"] = n
        return cls(counters, dict(data.get("timings_s", {})))

    # the form a task result's `stats` field takes in its completion marker (`thresher.core.serial`)
    to_record = to_dict
    from_record = from_dict

    def render(self) -> str:
        """The human report printed at the end of a build."""
        seen = self.seen or 0
        def pct(n: int) -> str:
            return f"{100.0 * n / seen:5.1f}%" if seen else "    -"

        lines = [
            f"seen       {self.seen:>10}",
            f"kept       {self.kept:>10}  ({pct(self.kept).strip()})",
            f"dropped    {self.dropped:>10}  ({pct(self.dropped).strip()})",
            f"malformed  {self.malformed:>10}  ({pct(self.malformed).strip()})",
        ]
        sections = (
            ("drop", "drops by stage and reason:"),
            ("fail", "rule failures (a document can fail several):"),
            ("malformed", "malformed input by reason:"),
            ("event", "events:"),
        )
        for prefix, title in sections:
            rows = self.by_prefix(prefix)
            if rows:
                width = max(len(k) for k in rows)
                lines.append(title)
                lines.extend(f"  {key:<{width}}  {n:>9}" for key, n in rows.items())
        if not self.reconciles():
            lines.append("WARNING: counts do not reconcile (seen != kept + dropped + malformed)")
        return "\n".join(lines)
