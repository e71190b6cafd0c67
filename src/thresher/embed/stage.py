"""The embed stage and semantic dedup as one phased corpus stage (`thresher.core.phased`): its phases
(embed, centroids, assign, semantic, boundary, decide; vectors after the shards are written), how it
plans them from the previous phase's results, and the manifest's `embeddings` section. The tasks are
in `thresher.embed.phase` and `thresher.embed.semantic_phase`, described in the first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from thresher.config import RunConfig
from thresher.core.phased import AddedFile, AfterWrite, KeptCorpus, PhaseDriver, StageOutcome, StagePhase
from thresher.embed.phase import embed_task, embeddings_section, shard_ranges, vectors_task
from thresher.embed.results import (
    AssignResult,
    BoundaryResult,
    CentroidsResult,
    DecideResult,
    EmbedResult,
    SemanticResult,
    VectorFile,
)
from thresher.embed.rows import PHASED_STAGE
from thresher.embed.semantic_phase import (
    assign_task,
    boundary_task,
    centroids_task,
    decide_task,
    plan_cluster_ranges,
    semantic_task,
)


def _on_gpu(config: Any) -> bool:
    """An embed task asks a scheduler for a GPU when the encoder is to run on one (`--device cuda`;
    `auto` decides in the worker, so it asks for none)."""
    return bool(config.embed.device == "cuda")


# Memory per task (what Ray reserves): an embed task holds its encoder (MiniLM ~90 MB, ONNX
# Runtime) and a batch; the others one partition's or one cluster range's rows (see
# `thresher.embed.phase` on memory).
PHASES = (
    StagePhase("embed", embed_task, EmbedResult, memory_mib=2048, gpu=_on_gpu),
    StagePhase("centroids", centroids_task, CentroidsResult),
    StagePhase("assign", assign_task, AssignResult),
    StagePhase("semantic", semantic_task, SemanticResult, memory_mib=1024),
    StagePhase("boundary", boundary_task, BoundaryResult),
    StagePhase("decide", decide_task, DecideResult),
    StagePhase("vectors", vectors_task, VectorFile, memory_mib=256),
)


class SemanticStage:
    """Embed the documents kept so far and, with `--semantic-dedup`, drop the semantic duplicates
    among them; after the shards, a vector file beside each."""

    name = PHASED_STAGE
    section = "embeddings"
    phases = PHASES

    def run(self, driver: PhaseDriver, corpus: KeptCorpus) -> StageOutcome:
        config = driver.config
        partitions = list(corpus.partitions)
        embedded: list[EmbedResult] = driver.phase(
            "embed", [driver.call("embed", f"embed-{p:06d}", p, list(corpus.decided_by)) for p in partitions]
        )
        semantic = None
        threshold = config.embed.semantic_threshold
        total = sum(r.rows for r in embedded)
        if threshold is not None and total:
            semantic = self._dedup(driver, partitions, embedded)
        elif threshold is not None:
            semantic = {"threshold": threshold, "clusters": 0, "sample": 0, "largest_cluster": 0, "duplicates": 0}
        decided: list[DecideResult] = driver.phase(
            "decide", [driver.call("decide", f"decide-{p:06d}", p) for p in partitions]
        )
        dropped = {p: d.dropped for p, d in zip(partitions, decided, strict=True)}
        return StageOutcome(dropped, (embedded, semantic))

    @staticmethod
    def _dedup(driver: PhaseDriver, partitions: list[int], embedded: list[EmbedResult]) -> dict[str, Any]:
        config = driver.config
        dimension = embedded[0].dimension
        rows = [[p, r.rows] for p, r in zip(partitions, embedded, strict=True)]
        (centroids,) = driver.phase("centroids", [driver.call("centroids", "centroids", rows, dimension)])
        assigned: list[AssignResult] = driver.phase(
            "assign", [driver.call("assign", f"assign-{p:06d}", p, dimension) for p in partitions]
        )
        # a task's rows: each cluster's own rows and its visitors (boundary rows compared there too)
        totals = [
            sum(a.counts[j] + (a.visitors[j] if a.visitors else 0) for a in assigned) for j in range(centroids.clusters)
        ]
        ranges = plan_cluster_ranges(totals, config.embed.semantic_cluster_rows)
        found: list[SemanticResult] = driver.phase(
            "semantic",
            [driver.call("semantic", f"semantic-{lo:06d}", lo, hi, partitions, dimension) for lo, hi in ranges],
        )
        (across,) = driver.phase("boundary", [driver.call("boundary", "boundary", [lo for lo, _ in ranges])])
        return {"threshold": config.embed.semantic_threshold, "clusters": centroids.clusters,
                "sample": centroids.sample, "clusters_split": centroids.split, "margin": config.embed.semantic_margin,
                "boundary_rows": sum(sum(a.visitors) for a in assigned),
                "largest_cluster": max((r.largest for r in found), default=0),
                "duplicates": sum(r.duplicates for r in found) + across.duplicates,
                "boundary_duplicates": across.duplicates, "reattributed": across.reattributed}

    def after_write(
        self, driver: PhaseDriver, corpus: KeptCorpus, shards: Sequence[Any], outcome: StageOutcome
    ) -> AfterWrite:
        """A vector file beside every shard, and the manifest's `embeddings` section."""
        embedded, semantic = outcome.state
        if not embedded:  # no partition: nothing embedded, no vector files
            return AfterWrite()
        per_shard = driver.config.output.shard_max_records
        pieces: list[list[Any]] = []
        g = 0
        for p, kept in zip(corpus.partitions, corpus.kept, strict=True):
            end = g + kept
            while g < end:  # the partition's kept documents, cut where the shards are cut
                stop = min(end, (g // per_shard + 1) * per_shard)
                pieces.append([p, g // per_shard, stop - g])
                g = stop
        ranges = shard_ranges(pieces)
        dimension = embedded[0].dimension
        stages = list(corpus.decided_by)
        calls = [driver.call("vectors", f"vectors-{k:05d}", s.path, ranges[k], dimension, stages)
                 for k, s in enumerate(shards)]
        files: list[VectorFile] = driver.phase("vectors", calls)
        return AfterWrite(
            files=[AddedFile(path=v.path, records=v.rows, bytes=v.bytes, sha256=v.sha256) for v in files],
            section=embeddings_section(driver.config.embed, embedded, files, semantic),
        )


def semantic_stage(config: RunConfig) -> SemanticStage | None:
    """The stage table's factory: the stage when an encoder is configured (`--encoder` or
    `--semantic-dedup`), else None."""
    return SemanticStage() if config.embed.enabled else None
