"""The cluster task and the decision files it writes.

One task clusters the verified edges of every corpus stage (`thresher.core.clusters`) and writes a
keep-or-drop decision per colliding document, per input partition, in ordinal order. The write task,
`thresher dedup` and semantic dedup read them back here (`iter_decisions`, `iter_cluster_decisions`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from thresher.core.clusters import Decision, Node, cluster, decide
from thresher.pipeline import build_corpus_stages
from thresher.read.base import ordinal_partition
from thresher.run.records import EDGE, unpack_edge
from thresher.run.results import ClusterResult
from thresher.run.task import TaskContext
from thresher.run.workdir import WorkDir
from thresher.write.atomic import atomic_open, dumps_line


def iter_edges(work: WorkDir, stages: list[Any]) -> Iterator[tuple[int, Node, Node, float]]:
    """Every verified edge as (stage index, node a, node b, similarity), in a fixed order. A pair
    colliding in several group tasks appears once per task."""
    size = EDGE.size
    for si, stage in enumerate(stages):
        for path in sorted(work.path("edges", stage.name).glob("*.edges")):
            with open(path, "rb") as f:
                while chunk := f.read(size * 4096):
                    for off in range(0, len(chunk), size):
                        a, b, sim = unpack_edge(chunk[off : off + size])
                        yield si, a, b, sim


def cluster_task(ctx: TaskContext) -> ClusterResult:
    """Cluster the verified edges of every corpus stage (`thresher.core.clusters`) and write the
    decisions per input partition, in ordinal order."""
    work = ctx.work
    stages = build_corpus_stages(ctx.config)
    clustering = cluster(lambda: iter_edges(work, stages), ctx.config.dedup.keep)
    dropped_per_partition: dict[int, int] = {}
    current_p = -1
    out: Any = None
    stack = contextlib.ExitStack()
    with stack:
        for decision in decide(clustering, stages):
            p = ordinal_partition(decision.ordinal)
            if p != current_p:
                stack.close()
                out = stack.enter_context(atomic_open(work.decisions(p), "wb", durable=False))
                current_p = p
                dropped_per_partition[p] = 0
            out.write(dumps_line(decision.to_json()))
            if not decision.kept:
                dropped_per_partition[p] += 1
    return ClusterResult(dropped=dropped_per_partition, clusters=clustering.clusters, nodes=clustering.nodes)


def iter_cluster_decisions(work: WorkDir, p: int) -> Iterator[Decision]:
    """The cluster phase's decisions for partition p (keep or drop per colliding document), in
    ordinal order; none when no document of p collided."""
    yield from _read_decisions(work.decisions(p))


def later_decisions(work: WorkDir, p: int) -> Path:
    """Drops decided after the cluster phase for partition p (semantic dedup, `thresher.embed.semantic_phase`),
    in ordinal order, only for documents the cluster phase kept."""
    return work.decisions(p).with_suffix(".later.jsonl")


def iter_decisions(work: WorkDir, p: int) -> Iterator[Decision]:
    """Every decision the write task applies to partition p, in ordinal order: the cluster phase's,
    with a later drop replacing a keeper's decision for the same document."""
    later = _read_decisions(later_decisions(work, p))
    pending = next(later, None)
    for decision in iter_cluster_decisions(work, p):
        while pending is not None and pending.ordinal < decision.ordinal:
            yield pending
            pending = next(later, None)
        if pending is not None and pending.ordinal == decision.ordinal:
            decision, pending = pending, next(later, None)
        yield decision
    while pending is not None:
        yield pending
        pending = next(later, None)


def _read_decisions(path: Path) -> Iterator[Decision]:
    if path.exists():
        with open(path, "rb") as f:
            for line in f:
                yield Decision.from_json(json.loads(line))
