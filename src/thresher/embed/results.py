"""What each embed and semantic-dedup task returns: its completion marker (`thresher.run.task.run_task`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Self


@dataclass(frozen=True, slots=True, kw_only=True)
class EmbedResult:
    """An embed task: the encoder that ran, rows written and what the batching cost."""

    encoder: str
    version: str
    dimension: int
    rows: int
    tokens: int
    padded_tokens: int
    batches: int
    truncated: int
    empty: int
    failed: int
    oom_backoffs: int = 0  # token-budget halvings after out-of-memory errors (`batched.encode_texts`)
    batch_tokens: int | None = None  # the budget the task ended at after them (None: never reduced)

    def to_json(self) -> dict[str, Any]:
        return {
            "encoder": self.encoder,
            "version": self.version,
            "dimension": self.dimension,
            "rows": self.rows,
            "tokens": self.tokens,
            "padded_tokens": self.padded_tokens,
            "batches": self.batches,
            "truncated": self.truncated,
            "empty": self.empty,
            "failed": self.failed,
            "oom_backoffs": self.oom_backoffs,
            "batch_tokens": self.batch_tokens,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        return cls(**data)


@dataclass(frozen=True, slots=True, kw_only=True)
class CentroidsResult:
    clusters: int
    sample: int
    split: int = 0  # clusters re-split because the sample said they were over `semantic_cluster_max`

    def to_json(self) -> dict[str, Any]:
        return {"clusters": self.clusters, "sample": self.sample, "split": self.split}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        return cls(**data)


@dataclass(frozen=True, slots=True, kw_only=True)
class AssignResult:
    counts: tuple[int, ...]  # rows of the partition per cluster (its nearest centroid)
    visitors: tuple[int, ...] = ()  # rows of the partition per cluster that is their second-nearest, within the margin

    def to_json(self) -> dict[str, Any]:
        return {"counts": list(self.counts), "visitors": list(self.visitors)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        return cls(counts=tuple(data["counts"]), visitors=tuple(data.get("visitors", ())))


@dataclass(frozen=True, slots=True, kw_only=True)
class SemanticResult:
    duplicates: int
    largest: int
    edges: int = 0  # boundary pairs at or above the threshold, left for the boundary task

    def to_json(self) -> dict[str, Any]:
        return {"duplicates": self.duplicates, "largest": self.largest, "edges": self.edges}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        return cls(**data)


@dataclass(frozen=True, slots=True, kw_only=True)
class BoundaryResult:
    duplicates: int  # documents dropped for a duplicate across a cluster boundary
    pairs: int  # distinct boundary pairs between documents both clusters kept
    reattributed: int  # drops whose kept document the boundary dropped, now naming that one's kept document

    def to_json(self) -> dict[str, Any]:
        return {"duplicates": self.duplicates, "pairs": self.pairs, "reattributed": self.reattributed}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        return cls(**data)


@dataclass(frozen=True, slots=True, kw_only=True)
class DecideResult:
    dropped: int  # the partition's documents the later decisions drop

    def to_json(self) -> dict[str, Any]:
        return {"dropped": self.dropped}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        return cls(**data)


@dataclass(frozen=True, slots=True, kw_only=True)
class VectorFile:
    """A vector file beside a shard, as the manifest's `embeddings.files` lists it."""

    shard: str
    path: str
    rows: int
    bytes: int
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return {"shard": self.shard, "path": self.path, "rows": self.rows, "bytes": self.bytes, "sha256": self.sha256}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        return cls(**data)
