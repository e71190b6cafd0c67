"""At most `cap` documents of any one host: a phased corpus stage for thresher (see README.md).

The stage's tasks run in thresher's workers and receive the build's task context; what they read and
write in the work dir goes through thresher's run layer (`iter_kept`, `WorkDir.stage_decisions`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from thresher.clusters import Decision
from thresher.core.document import Drop
from thresher.core.phased import AfterWrite, KeptCorpus, PhaseDriver, StageOutcome, StagePhase
from thresher.run.cluster import iter_kept
from thresher.write.atomic import atomic_open, dumps_line

NAME = "host_cap"


def host_of(record: dict[str, Any]) -> str:
    """The lower-cased host of a record's URL, without a leading `www.`; empty when it has none."""
    url = record.get("url")
    if not isinstance(url, str):
        return ""
    host = (urlsplit(url).hostname or "").lower()
    return host[4:] if host.startswith("www.") else host


@dataclass(frozen=True, slots=True)
class Counted:
    """A `host_count` task's result: how many hosts its partition has."""

    hosts: int

    def to_json(self) -> dict[str, Any]:
        return {"hosts": self.hosts}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Counted:
        return cls(data["hosts"])


@dataclass(frozen=True, slots=True)
class Capped:
    """A `host_cap` task's result: how many documents of its partition it dropped."""

    dropped: int

    def to_json(self) -> dict[str, Any]:
        return {"dropped": self.dropped}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Capped:
        return cls(data["dropped"])


def _counts_path(ctx: Any, p: int) -> Any:
    return ctx.work.path(NAME, f"counts-p{p:06d}.json")


def host_count_task(ctx: Any, p: int, decided_by: Sequence[str]) -> Counted:
    """Count partition p's kept documents per host (documents without a host are never capped)."""
    counts = Counter(host for _, line in iter_kept(ctx.work, p, decided_by) if (host := host_of(json.loads(line))))
    with atomic_open(_counts_path(ctx, p), "wb", durable=False) as out:
        out.write(json.dumps(dict(sorted(counts.items()))).encode())
    return Counted(len(counts))


def host_cap_task(ctx: Any, p: int, earlier: Sequence[int], decided_by: Sequence[str], cap: int) -> Capped:
    """Drop partition p's documents of a host beyond its first `cap` in dataset order: the hosts'
    documents in the partitions `earlier` (before p) come first."""
    before: Counter[str] = Counter()
    with open(_counts_path(ctx, p), "rb") as f:
        mine = set(json.loads(f.read()))
    for q in earlier:  # only this partition's hosts are kept: memory follows one partition
        with open(_counts_path(ctx, q), "rb") as f:
            before.update({h: n for h, n in json.loads(f.read()).items() if h in mine})
    dropped = 0
    with atomic_open(ctx.work.stage_decisions(NAME, p), "wb", durable=False) as out:
        for ordinal, line in iter_kept(ctx.work, p, decided_by):
            host = host_of(json.loads(line))
            if not host:
                continue
            before[host] += 1
            rank = before[host]
            if rank > cap:
                drop = Drop(NAME, "host_cap_exceeded", value=rank, limit=cap, detail={"host": host, "cluster": host})
                out.write(dumps_line(Decision(ordinal=ordinal, cluster=host, drop=drop).to_json()))
                dropped += 1
    return Capped(dropped)


class HostCap:
    """The phased stage: `host_count` then `host_cap`, one task per partition each."""

    name = NAME
    section = "host_cap"
    phases = (
        StagePhase("host_count", host_count_task, Counted, memory_mib=256),
        StagePhase("host_cap", host_cap_task, Capped, memory_mib=256),
    )

    def __init__(self, cap: int = 100) -> None:
        if cap < 1:
            raise ValueError(f"host cap must be at least 1, not {cap}")
        self.cap = cap

    def run(self, driver: PhaseDriver, corpus: KeptCorpus) -> StageOutcome:
        parts = list(corpus.partitions)
        stages = list(corpus.decided_by)
        counted: list[Counted] = driver.phase(
            "host_count", [driver.call("host_count", f"host_count-{p:06d}", p, stages) for p in parts])
        capped: list[Capped] = driver.phase(
            "host_cap", [driver.call("host_cap", f"host_cap-{p:06d}", p, parts[:i], stages, self.cap)
                         for i, p in enumerate(parts)])
        dropped = {p: c.dropped for p, c in zip(parts, capped, strict=True)}
        return StageOutcome(dropped, {"cap": self.cap, "dropped": sum(dropped.values()),
                                      "largest_partition_hosts": max((c.hosts for c in counted), default=0)})

    def after_write(
        self, driver: PhaseDriver, corpus: KeptCorpus, shards: Sequence[Any], outcome: StageOutcome
    ) -> AfterWrite:
        return AfterWrite(section=dict(outcome.state))


def host_cap(config: Any) -> HostCap:
    """The entry point's factory: called with the build's config when `dedup.stages` names it."""
    return HostCap()
