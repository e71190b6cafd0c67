"""What each task of a build returns: typed, frozen records with one JSON form each.

A task's result is also its completion marker (`done/<task>.json`, see `thresher.run.task.run_task`),
written and read back by `thresher.core.serial` from the fields' types, with the class's schema
version; the driver and `thresher dedup` read the records' fields, never string keys. The cluster
phase's per-document record is `thresher.clusters.Decision`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Self

from thresher.core.serial import Serializable
from thresher.core.stats import Stats


class TaskResult(Protocol):
    """What any task returns, a phased stage's included (`thresher.core.phased.StagePhase.result`):
    its completion marker is `serial.dump(result)`, read back through `from_json`."""

    def to_json(self) -> dict[str, Any]: ...

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ScanResult(Serializable):
    """A scan task: its counts, the documents that passed to the corpus stages, and per corpus stage
    the key bytes it spilled into each key bucket (the driver plans the group tasks from them)."""

    stats: Stats
    survivors: int
    key_bytes: tuple[tuple[int, ...], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupResult(Serializable):
    """A group task: edges written between identical payloads, candidate pairs spilled, and the
    pair bytes per pair bucket (the driver plans the verify tasks from them)."""

    stats: Stats
    edges: int
    pairs: int
    pair_bytes: tuple[int, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class VerifyResult(Serializable):
    stats: Stats
    edges: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterResult(Serializable):
    """The cluster task: per input partition, how many of its documents were dropped as duplicates
    (each write task's first global index follows from them), and the size of the graph."""

    dropped: dict[int, int]
    clusters: int
    nodes: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SplitResult(Serializable):
    """A split task of the partitioned cluster phase (`thresher.run.cluster_rounds`)."""

    edges: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundResult(Serializable):
    """A round task: the directed edges it read, the edges it wrote, and (large-star rounds) how
    many of its nodes were not in star form (0 in every partition: the labels are final)."""

    edges_in: int
    edges_out: int
    violations: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RankResult(Serializable):
    """A rank task: its nodes and the distinct labels among them."""

    nodes: int
    labels: int


@dataclass(frozen=True, slots=True, kw_only=True)
class KeepersResult(Serializable):
    """A keepers task: the clusters (labels) it chose a keeper for."""

    clusters: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Piece:
    """One write task's share of one output shard, `records` output lines: a file of those lines, or
    for a format of compressed members (`thresher.write.members`) `members` whole members from
    member `member` on."""

    shard: int
    path: str
    records: int
    member: int = 0
    members: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteResult(Serializable):
    SCHEMA = 2  # pieces may be compressed members (a version-1 piece is plain lines)

    stats: Stats
    pieces: tuple[Piece, ...]
    kept: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ShardFile(Serializable):
    """An assembled output shard, as the manifest lists it (`to_json` is its manifest entry)."""

    path: str
    records: int
    bytes: int
    sha256: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Published(Serializable):
    """A shard copied or uploaded from the stage folder to the output."""

    path: str
    bytes: int
