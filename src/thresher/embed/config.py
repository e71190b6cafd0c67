"""Settings of the build's embed stage and semantic dedup (composed into `RunConfig` as `embed`).

`--embed ENCODER` writes a vector file beside every shard; `--semantic-dedup THRESHOLD` drops the
documents whose cosine to an earlier kept one in their k-means cluster reaches THRESHOLD, and turns
the embed stage on by itself (with the default encoder unless `--embed` names one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from thresher.core.config import setting
from thresher.core.errors import ConfigError

DEFAULT_ENCODER = "wordllama"


@dataclass(frozen=True, slots=True, kw_only=True)
class EmbedConfig:
    encoder: str | None = setting(
        None,
        "embed every kept document with this encoder (wordllama: packaged static model, CPU, no torch; "
        "minilm / minilm-onnx: all-MiniLM-L6-v2 through sentence-transformers / ONNX Runtime; stub: tests) "
        "and write a vector file beside each shard; none: no embeddings",
        flag="--embed",
    )
    dtype: Literal["float16", "float32"] = setting("float16", "element type of the vector files beside the shards",
                                                   flag="--embed-dtype")
    batch_size: int = setting(64, "most texts per encoder batch")
    batch_tokens: int | None = setting(
        None, "most padded tokens per encoder batch (none: the encoder's max length x batch size)"
    )
    plan_docs: int = setting(
        4096, "documents whose batches are planned together (sorted by token length); bounds the embed task's memory"
    )
    device: Literal["auto", "cpu", "cuda"] = setting(
        "auto", "where a transformer encoder runs: cuda (an error when absent), cpu, or auto (cuda when present)",
        flag="--device", hashed=False,
    )
    semantic_threshold: float | None = setting(
        None,
        "semantic dedup: drop a document whose embedding cosine to an earlier kept one in its k-means "
        "cluster is at least this (SemDeDup); turns --embed on; none: off",
        flag="--semantic-dedup",
    )
    semantic_clusters: int | None = setting(None, "semantic dedup: k-means clusters (none: one per ~1,000 documents)")
    semantic_sample: int = setting(
        50_000, "semantic dedup: vectors the k-means centroids are fitted on (a seeded sample)"
    )
    semantic_iterations: int = setting(25, "semantic dedup: Lloyd rounds of k-means (stops early when stable)")
    semantic_seed: int = setting(0, "semantic dedup: seed of the k-means sample and start")
    semantic_margin: float = setting(
        0.05,
        "semantic dedup: a document whose cosine to its second-nearest centroid is within this of its nearest's "
        "is also compared in that cluster, so duplicates split by a cluster boundary are found; 0: nearest only",
    )
    semantic_cluster_max: int = setting(
        20_000,
        "semantic dedup: a cluster estimated (from the k-means sample) to hold more rows than this is re-split by a "
        "seeded k-means inside it, bounding one cluster's m^2/2 cosines",
    )
    semantic_cluster_rows: int = setting(
        200_000, "semantic dedup: rows of clusters one task compares (a cluster larger than this is one task alone)",
        hashed=False,
    )

    def __post_init__(self) -> None:
        t = self.semantic_threshold
        if t is not None and not 0 < t <= 1:
            raise ConfigError(f"embed.semantic_threshold (--semantic-dedup) must be in (0, 1], not {t}")
        if self.semantic_clusters is not None and self.semantic_clusters < 1:
            raise ConfigError("embed.semantic_clusters must be at least 1")
        if not 0 <= self.semantic_margin < 2:
            raise ConfigError(f"embed.semantic_margin must be in [0, 2), not {self.semantic_margin}")
        if self.semantic_cluster_max < 2:
            raise ConfigError("embed.semantic_cluster_max must be at least 2")
        if self.batch_size < 1 or self.plan_docs < 1 or self.semantic_sample < 1:
            raise ConfigError("embed.batch_size, embed.plan_docs and embed.semantic_sample must be at least 1")

    @property
    def encoder_name(self) -> str | None:
        """The encoder the build runs: the one named, else the default when semantic dedup is on."""
        if self.encoder is not None:
            return self.encoder
        return DEFAULT_ENCODER if self.semantic_threshold is not None else None

    @property
    def enabled(self) -> bool:
        return self.encoder_name is not None
