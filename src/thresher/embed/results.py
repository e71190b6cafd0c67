"""What each embed and semantic-dedup task returns: its completion marker (`thresher.run.task.run_task`,
in the form `thresher.core.serial` derives from the fields)."""

from __future__ import annotations

from dataclasses import dataclass

from thresher.core.serial import Serializable


@dataclass(frozen=True, slots=True, kw_only=True)
class EmbedResult(Serializable):
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


@dataclass(frozen=True, slots=True, kw_only=True)
class CentroidsResult(Serializable):
    clusters: int
    sample: int
    split: int = 0  # clusters re-split because the sample said they were over `semantic_cluster_max`


@dataclass(frozen=True, slots=True, kw_only=True)
class AssignResult(Serializable):
    counts: tuple[int, ...]  # rows of the partition per cluster (its nearest centroid)
    visitors: tuple[int, ...] = ()  # rows of the partition per cluster that is their second-nearest, within the margin


@dataclass(frozen=True, slots=True, kw_only=True)
class SemanticResult(Serializable):
    duplicates: int
    largest: int
    edges: int = 0  # boundary pairs at or above the threshold, left for the boundary task


@dataclass(frozen=True, slots=True, kw_only=True)
class BoundaryResult(Serializable):
    duplicates: int  # documents dropped for a duplicate across a cluster boundary
    pairs: int  # distinct boundary pairs between documents both clusters kept
    reattributed: int  # drops whose kept document the boundary dropped, now naming that one's kept document


@dataclass(frozen=True, slots=True, kw_only=True)
class DecideResult(Serializable):
    dropped: int  # the partition's documents the later decisions drop


@dataclass(frozen=True, slots=True, kw_only=True)
class VectorFile(Serializable):
    """A vector file beside a shard, as the manifest's `embeddings.files` lists it (`to_json`)."""

    shard: str
    path: str
    rows: int
    bytes: int
    sha256: str
