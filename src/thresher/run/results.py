"""What each task of a build returns: typed, frozen records with one JSON form each.

A task's result is also its completion marker (`done/<task>.json`, see `thresher.run.task.run_task`),
so each record converts to and from plain JSON data; the driver and `thresher dedup` read the
records' fields, never string keys. The cluster phase's per-document record is
`thresher.dedup.cluster.Decision`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Self

from thresher.core.stats import Stats


class TaskResult(Protocol):
    def to_json(self) -> dict[str, Any]: ...

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self: ...


def _buckets(rows: Any) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(row) for row in rows)


@dataclass(frozen=True, slots=True, kw_only=True)
class ScanResult:
    """A scan task: its counts, the documents that passed to the corpus stages, and per corpus stage
    the key bytes it spilled into each key bucket (the driver plans the group tasks from them)."""

    stats: Stats
    survivors: int
    key_bytes: tuple[tuple[int, ...], ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "stats": self.stats.to_dict(),
            "survivors": self.survivors,
            "key_bytes": [list(r) for r in self.key_bytes],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        return cls(
            stats=Stats.from_dict(data["stats"]), survivors=data["survivors"], key_bytes=_buckets(data["key_bytes"])
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupResult:
    """A group task: edges written between identical payloads, candidate pairs spilled, and the
    pair bytes per pair bucket (the driver plans the verify tasks from them)."""

    stats: Stats
    edges: int
    pairs: int
    pair_bytes: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "stats": self.stats.to_dict(),
            "edges": self.edges,
            "pairs": self.pairs,
            "pair_bytes": list(self.pair_bytes),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        return cls(
            stats=Stats.from_dict(data["stats"]),
            edges=data["edges"],
            pairs=data["pairs"],
            pair_bytes=tuple(data["pair_bytes"]),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class VerifyResult:
    stats: Stats
    edges: int

    def to_json(self) -> dict[str, Any]:
        return {"stats": self.stats.to_dict(), "edges": self.edges}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        return cls(stats=Stats.from_dict(data["stats"]), edges=data["edges"])


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterResult:
    """The cluster task: per input partition, how many of its documents were dropped as duplicates
    (each write task's first global index follows from them), and the size of the graph."""

    dropped: dict[int, int]
    clusters: int
    nodes: int

    def to_json(self) -> dict[str, Any]:
        return {"dropped": {str(p): n for p, n in self.dropped.items()}, "clusters": self.clusters, "nodes": self.nodes}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        return cls(
            dropped={int(p): n for p, n in data["dropped"].items()}, clusters=data["clusters"], nodes=data["nodes"]
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Piece:
    """One write task's share of one output shard: a file of `records` output lines."""

    shard: int
    path: str
    records: int


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteResult:
    stats: Stats
    pieces: tuple[Piece, ...]
    kept: int

    def to_json(self) -> dict[str, Any]:
        return {
            "stats": self.stats.to_dict(),
            "pieces": [[p.shard, p.path, p.records] for p in self.pieces],
            "kept": self.kept,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        pieces = tuple(Piece(shard=s, path=p, records=n) for s, p, n in data["pieces"])
        return cls(stats=Stats.from_dict(data["stats"]), pieces=pieces, kept=data["kept"])


@dataclass(frozen=True, slots=True, kw_only=True)
class ShardFile:
    """An assembled output shard, as the manifest lists it (`to_json` is its manifest entry)."""

    path: str
    records: int
    bytes: int
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "records": self.records, "bytes": self.bytes, "sha256": self.sha256}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        return cls(path=data["path"], records=data["records"], bytes=data["bytes"], sha256=data["sha256"])


@dataclass(frozen=True, slots=True, kw_only=True)
class Published:
    """A shard copied or uploaded from the stage folder to the output."""

    path: str
    bytes: int

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "bytes": self.bytes}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        return cls(path=data["path"], bytes=data["bytes"])
