"""The cluster task and the decision files it writes.

One task clusters the verified edges of every corpus stage (`thresher.clusters`) and writes a
keep-or-drop decision per colliding document, per input partition, in ordinal order. The write task,
`thresher dedup` and the phased stages read them back here (`iter_decisions`, `iter_kept`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from thresher import decided
from thresher.clusters import Decision, Node, cluster, decide
from thresher.pipeline import build_corpus_stages
from thresher.read.base import ordinal_partition
from thresher.run.records import EDGE
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
                    # unpacked in C, a chunk at a time (the cluster phase reads every edge three
                    # times: a sliced `unpack_edge` per edge was ~40% of the phase)
                    for oa, ia, la, qa, ob, ib, lb, qb, sim in EDGE.iter_unpack(chunk):
                        yield si, Node(oa, ia, la, qa), Node(ob, ib, lb, qb), sim


def cluster_task(ctx: TaskContext) -> ClusterResult:
    """Cluster the verified edges of every corpus stage (`thresher.clusters`) and write the
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


def iter_decisions(work: WorkDir, p: int, stages: Sequence[str] = ()) -> Iterator[Decision]:
    """Every decision the write task applies to partition p, in ordinal order: the cluster phase's,
    then each phased stage's of `stages` in order (`WorkDir.stage_decisions`), a later one applying
    over an earlier one for the same document (`Decision.then`)."""
    return decided.iter_decisions(work.kept_sources(p, stages)[1])


def iter_kept(work: WorkDir, p: int, stages: Sequence[str] = ()) -> Iterator[tuple[int, bytes]]:
    """(ordinal, JSON line) of every document of partition p that passed the scan and that neither
    the cluster phase nor the phased stages `stages` dropped, in ordinal order, edits applied: what
    a phased stage decides over (`thresher.core.phased.KeptCorpus`)."""
    return decided.iter_kept(*work.kept_sources(p, stages))
