"""Semantic dedup inside a build: the centroids, assign, semantic, boundary and decide tasks between
the embed phase and the write task (the phases are described in `thresher.embed.phase`).
"""

from __future__ import annotations

import json
import math
from typing import Any

from thresher.clusters import Decision, keep_policy
from thresher.core.document import Drop
from thresher.embed.config import EmbedConfig
from thresher.embed.results import AssignResult, BoundaryResult, CentroidsResult, DecideResult, SemanticResult
from thresher.embed.rows import (
    CHUNK_ROWS,
    PHASED_STAGE,
    id_hex,
    map_vectors,
    meta_record_dtype,
    range_files,
    read_meta,
    via_file,
    work_files,
)
from thresher.read.base import ordinal_partition
from thresher.run.task import TaskContext
from thresher.run.workdir import WorkDir
from thresher.write.atomic import atomic_open, dumps_line

# As in `thresher.embed.phase`, the task bodies import NumPy and the clustering module: every build imports
# this module (its tasks are in the build's task table), and a build without an encoder must not pay for them.

_BOUNDARY_EDGES = 8  # boundary pairs kept per surviving document (its closest visitors)


# -- centroids -----------------------------------------------------------------------------------


def cluster_count(config: EmbedConfig, total: int) -> int:
    """k: as configured, else one cluster per ~1,000 documents (SemDeDup's scale), at most the rows."""
    return max(1, min(total, config.semantic_clusters or math.ceil(total / 1000)))


def centroids_task(ctx: TaskContext, rows: list[list[int]], dimension: int) -> CentroidsResult:
    """k-means on a seeded sample of every partition's rows; `rows` is [[partition, rows], ...]."""
    import numpy as np

    from thresher.embed.semantic import kmeans, split_oversized

    config = ctx.config.embed
    total = sum(n for _, n in rows)
    rng = np.random.default_rng(config.semantic_seed)
    picks = np.sort(rng.choice(total, size=min(config.semantic_sample, total), replace=False))
    sample = np.empty((len(picks), dimension), dtype=np.float32)  # filled in place: no second copy
    start = filled = 0
    for p, n in rows:
        local = picks[(picks >= start) & (picks < start + n)] - start
        if len(local):
            mapped = map_vectors(work_files(ctx.work, p)["vectors"], dimension)
            for c in range(0, len(local), CHUNK_ROWS):
                chunk = local[c : c + CHUNK_ROWS]
                sample[filled : filled + len(chunk)] = mapped.rows[chunk]
                filled += len(chunk)
                mapped.release()
        start += n
    centroids = kmeans(
        sample, cluster_count(config, total), iterations=config.semantic_iterations, seed=config.semantic_seed
    )
    centroids, split = split_oversized(sample, centroids, total=total, max_rows=config.semantic_cluster_max,
                                       iterations=config.semantic_iterations, seed=config.semantic_seed)
    with atomic_open(ctx.work.path("semantic", "centroids.f32"), "wb", durable=False) as f:
        f.write(np.ascontiguousarray(centroids, dtype="<f4").tobytes())
    return CentroidsResult(clusters=len(centroids), sample=len(sample), split=split)


def _centroids(work: WorkDir, dimension: int) -> Any:
    import numpy as np

    return np.fromfile(work.path("semantic", "centroids.f32"), dtype="<f4").reshape(-1, dimension)


# -- assign --------------------------------------------------------------------------------------


def assign_task(ctx: TaskContext, p: int, dimension: int) -> AssignResult:
    """Each row's nearest centroid, and its second-nearest when within `semantic_margin` (the row is
    then also a *visitor* there). The sorted files hold, cluster by cluster, its own rows then its
    visitors, each in ordinal order; the counts file, per cluster, (own rows, visitors)."""
    import numpy as np

    from thresher.embed.semantic import nearest_two

    files = work_files(ctx.work, p)
    centroids = _centroids(ctx.work, dimension)
    mapped = map_vectors(files["vectors"], dimension)
    vectors = mapped.rows
    meta = read_meta(files["meta"])
    n, k = len(meta), len(centroids)
    first = np.zeros(n, dtype=np.int64)
    second = np.zeros(n, dtype=np.int64)
    for s in range(0, n, CHUNK_ROWS):
        first[s : s + CHUNK_ROWS], second[s : s + CHUNK_ROWS] = nearest_two(vectors[s : s + CHUNK_ROWS], centroids,
                                                                             ctx.config.embed.semantic_margin)
        mapped.release()
    visiting = np.flatnonzero(second >= 0)
    rows = np.concatenate([np.arange(n, dtype=np.int64), visiting])
    slots = np.concatenate([2 * first, 2 * second[visiting] + 1])  # cluster j's own rows: slot 2j, visitors: 2j+1
    order = np.argsort(slots, kind="stable")  # by slot, ordinal order within one
    counts = np.bincount(slots, minlength=2 * k)
    with (
        atomic_open(files["sorted_vectors"], "wb", durable=False) as vf,
        atomic_open(files["sorted_meta"], "wb", durable=False) as mf,
    ):
        for s in range(0, len(order), CHUNK_ROWS):
            picked = rows[order[s : s + CHUNK_ROWS]]
            vf.write(np.ascontiguousarray(vectors[picked], dtype="<f4").tobytes())
            mf.write(meta[picked].tobytes())
            mapped.release()
    with atomic_open(files["counts"], "wb", durable=False) as f:
        f.write(counts.astype("<i8").tobytes())
    return AssignResult(counts=tuple(int(c) for c in counts[0::2]), visitors=tuple(int(c) for c in counts[1::2]))


def plan_cluster_ranges(totals: list[int], max_rows: int) -> list[tuple[int, int]]:
    """Contiguous cluster ranges of about `max_rows` rows each (a larger cluster is a range alone)."""
    ranges: list[tuple[int, int]] = []
    lo, acc = 0, 0
    for j, n in enumerate(totals):
        if acc and acc + n > max_rows:
            ranges.append((lo, j))
            lo, acc = j, 0
        acc += n
    if lo < len(totals):
        ranges.append((lo, len(totals)))
    return ranges


# -- semantic ------------------------------------------------------------------------------------


def keep_order(rows: Any, policy: str) -> Any:
    """Row indexes in keep-policy order (`thresher.clusters.KeepPolicy`, the cluster phase's
    rank): the earliest of two duplicates is the one kept."""
    import numpy as np

    return np.lexsort(keep_policy(policy).sort_keys(rows))


def _edge_dtype() -> Any:
    import numpy as np

    meta = meta_record_dtype()
    return np.dtype([("a", meta), ("b", meta), ("cosine", "<f4"), ("cluster", "<i8")])


_DROPPED_DTYPE = [("ordinal", "<u8"), ("kept", "<u8")]


def _read_slot(
    work: WorkDir, partitions: list[int], offsets: dict[int, Any], slot: int, dimension: int
) -> tuple[Any, Any]:
    """One slot (a cluster's own rows or its visitors) gathered from every partition's sorted files."""
    import numpy as np

    meta_dtype = meta_record_dtype()
    vec_parts, meta_parts = [], []
    for p in partitions:
        start, counts = offsets[p]
        n = int(counts[slot])
        if n:
            files = work_files(work, p)
            first = int(start[slot])
            vec_parts.append(np.fromfile(files["sorted_vectors"], dtype="<f4", count=n * dimension,
                                         offset=first * dimension * 4).reshape(n, dimension))
            meta_parts.append(
                np.fromfile(files["sorted_meta"], dtype=meta_dtype, count=n, offset=first * meta_dtype.itemsize)
            )
    if not vec_parts:
        return np.zeros((0, dimension), dtype="<f4"), np.zeros(0, dtype=meta_dtype)
    return np.concatenate(vec_parts), np.concatenate(meta_parts)


def semantic_task(ctx: TaskContext, lo: int, hi: int, partitions: list[int], dimension: int) -> SemanticResult:
    """Semantic duplicates within clusters lo..hi-1, each cluster's rows gathered from every
    partition; then the cluster's surviving rows against its visitors, the pairs at or above the
    threshold left for the boundary task (which alone knows whether a visitor survived at home)."""
    import numpy as np

    from thresher.embed.semantic import STAGE, boundary_pairs, cluster_neighbours

    config = ctx.config.embed
    threshold = config.semantic_threshold
    assert threshold is not None
    work = ctx.work
    offsets = {}
    for p in partitions:
        counts = np.fromfile(work_files(work, p)["counts"], dtype="<i8")
        offsets[p] = (np.cumsum(counts) - counts, counts)
    drops: dict[int, list[bytes]] = {}
    dropped: list[tuple[int, int]] = []
    edges: list[Any] = []
    edge_dtype = _edge_dtype()
    duplicates = largest = 0
    for j in range(lo, hi):
        vectors, meta = _read_slot(work, partitions, offsets, 2 * j, dimension)
        if not len(meta):
            continue
        largest = max(largest, len(meta))
        order = keep_order(meta, ctx.config.dedup.keep)
        vectors, meta = vectors[order], meta[order]
        cluster = f"semantic-{j}"
        survived = np.ones(len(meta), dtype=bool)
        for row, kept_row, cosine in cluster_neighbours(vectors, threshold) if len(meta) > 1 else ():
            duplicates += 1
            survived[row] = False
            ordinal = int(meta["ordinal"][row])
            dropped.append((ordinal, int(meta["ordinal"][kept_row])))
            detail = {"kept_id": id_hex(meta["id"][kept_row]), "cluster": cluster}
            drop = Drop(STAGE, "semantic_duplicate", value=round(cosine, 6), limit=threshold, detail=detail)
            drops.setdefault(ordinal_partition(ordinal), []).append(
                dumps_line(Decision(ordinal=ordinal, cluster=cluster, drop=drop).to_json())
            )
        visitor_vectors, visitor_meta = _read_slot(work, partitions, offsets, 2 * j + 1, dimension)
        if len(visitor_meta):
            own = np.flatnonzero(survived)
            pairs = boundary_pairs(vectors[own], visitor_vectors, threshold, _BOUNDARY_EDGES)
            found = np.zeros(len(pairs), dtype=edge_dtype)
            for e, (a, b, cosine) in enumerate(pairs):
                found[e] = (meta[own[a]], visitor_meta[b], cosine, j)
            edges.append(found)
    for p, lines in drops.items():
        with atomic_open(work_files(work, p)["drops"] / f"c{lo:06d}.jsonl", "wb", durable=False) as f:
            f.writelines(lines)
    files = range_files(work, lo)
    found_edges = np.concatenate(edges) if edges else np.zeros(0, dtype=edge_dtype)
    with atomic_open(files["edges"], "wb", durable=False) as f:
        f.write(found_edges.tobytes())
    with atomic_open(files["dropped"], "wb", durable=False) as f:
        f.write(np.array(dropped, dtype=_DROPPED_DTYPE).tobytes())
    return SemanticResult(duplicates=duplicates, largest=largest, edges=len(found_edges))


# -- boundary ------------------------------------------------------------------------------------


def boundary_task(ctx: TaskContext, starts: list[int]) -> BoundaryResult:
    """The duplicates across cluster boundaries, decided once for the whole corpus.

    The semantic tasks left every pair (a document its cluster kept, a visitor there at or above
    the threshold). Pairs whose visitor its own cluster dropped are discarded; the rest, each pair
    once, are resolved greedily in keep-policy order: a document is dropped when an earlier one of
    its pairs is still kept (the closest such), as inside a cluster. So no document is dropped
    twice (a cluster drops only its own rows; the boundary only rows both clusters kept), and every
    kept document named is kept. A drop inside a cluster that named a document the boundary then
    dropped is re-attributed (`via.bin`, applied by `decide_task`): it names that document's kept
    one, with `via` naming the link, as the cluster phase does for an indirect near duplicate.

    Memory: the boundary pairs (at most `_BOUNDARY_EDGES` per surviving boundary document) and the
    (ordinal, kept ordinal) of every drop inside a cluster, 16 bytes each."""
    import numpy as np

    from thresher.embed.semantic import STAGE

    config = ctx.config.embed
    threshold = config.semantic_threshold
    assert threshold is not None
    work = ctx.work
    edge_dtype = _edge_dtype()
    edges = np.concatenate([np.fromfile(range_files(work, lo)["edges"], dtype=edge_dtype) for lo in starts])
    dropped = np.concatenate([np.fromfile(range_files(work, lo)["dropped"], dtype=_DROPPED_DTYPE) for lo in starts])
    edges = edges[~np.isin(edges["b"]["ordinal"], dropped["ordinal"])]
    # each pair once (a pair of two boundary documents is seen from both sides): the lower cluster's
    swap = edges["a"]["ordinal"] > edges["b"]["ordinal"]
    first = np.where(swap, edges["b"]["ordinal"], edges["a"]["ordinal"])
    second = np.where(swap, edges["a"]["ordinal"], edges["b"]["ordinal"])
    by_pair = np.lexsort((edges["cluster"], second, first))
    edges, first, second = edges[by_pair], first[by_pair], second[by_pair]
    unique = np.ones(len(edges), dtype=bool)
    unique[1:] = (first[1:] != first[:-1]) | (second[1:] != second[:-1])
    edges = edges[unique]
    # the documents in any pair, ranked by the keep policy
    nodes = np.concatenate([edges["a"], edges["b"]])
    nodes = nodes[np.unique(nodes["ordinal"], return_index=True)[1]]
    rank = np.empty(len(nodes), dtype=np.int64)
    rank[keep_order(nodes, ctx.config.dedup.keep)] = np.arange(len(nodes))
    a = rank[np.searchsorted(nodes["ordinal"], edges["a"]["ordinal"])]
    b = rank[np.searchsorted(nodes["ordinal"], edges["b"]["ordinal"])]
    later, earlier = np.maximum(a, b), np.minimum(a, b)
    by_node = np.lexsort((earlier, -edges["cosine"], later))  # each later document's pairs, closest first
    by_rank = np.empty(len(nodes), dtype=np.int64)
    by_rank[rank] = np.arange(len(nodes))
    is_dropped = np.zeros(len(nodes), dtype=bool)  # by rank
    kept_for: dict[int, int] = {}  # rank dropped -> rank it names
    lines: dict[int, list[bytes]] = {}
    for e in by_node:
        v, u = int(later[e]), int(earlier[e])
        if is_dropped[v] or is_dropped[u]:
            continue
        is_dropped[v] = True
        kept_for[v] = u
        doc, kept = nodes[by_rank[v]], nodes[by_rank[u]]
        cluster = f"semantic-{int(edges['cluster'][e])}"
        detail = {"kept_id": id_hex(kept["id"]), "cluster": cluster, "boundary": True}
        drop = Drop(
            STAGE, "semantic_duplicate", value=round(float(edges["cosine"][e]), 6), limit=threshold, detail=detail
        )
        ordinal = int(doc["ordinal"])
        lines.setdefault(ordinal_partition(ordinal), []).append(
            dumps_line(Decision(ordinal=ordinal, cluster=cluster, drop=drop).to_json())
        )
    for p, found in lines.items():
        found.sort(key=lambda line: json.loads(line)["o"])
        with atomic_open(work_files(work, p)["drops"] / "b000000.jsonl", "wb", durable=False) as f:
            f.writelines(found)
    # drops inside a cluster naming a document the boundary dropped: name its kept one instead
    gone = {int(nodes["ordinal"][by_rank[v]]): nodes[by_rank[u]]["id"] for v, u in kept_for.items()}
    via_ids = {int(nodes["ordinal"][by_rank[v]]): nodes[by_rank[v]]["id"] for v in kept_for}
    moved = dropped[np.isin(dropped["kept"], np.fromiter(gone, dtype=np.uint64, count=len(gone)))]
    via = np.zeros(len(moved), dtype=[("ordinal", "<u8"), ("kept", "S8"), ("via", "S8")])
    for i, (ordinal, kept_ordinal) in enumerate(moved[np.argsort(moved["ordinal"], kind="stable")].tolist()):
        via[i] = (ordinal, gone[kept_ordinal], via_ids[kept_ordinal])
    with atomic_open(via_file(work), "wb", durable=False) as f:
        f.write(via.tobytes())
    return BoundaryResult(duplicates=len(kept_for), pairs=len(edges), reattributed=len(via))


# -- decide --------------------------------------------------------------------------------------


def decide_task(ctx: TaskContext, p: int) -> DecideResult:
    """Partition p's later drops (semantic duplicates inside clusters and across their boundaries,
    encoder failures) in ordinal order, with the boundary's re-attributions applied."""
    import numpy as np

    files = work_files(ctx.work, p)
    sources = [files["failed"]]
    if files["drops"].is_dir():
        sources += sorted(files["drops"].glob("[bc]*.jsonl"))
    via_path = via_file(ctx.work)
    via: dict[int, tuple[str, str]] = {}
    if via_path.exists():
        entries = np.fromfile(via_path, dtype=[("ordinal", "<u8"), ("kept", "S8"), ("via", "S8")])
        mine = entries[np.array([ordinal_partition(int(o)) == p for o in entries["ordinal"]], dtype=bool)]
        via = {int(o): (id_hex(k), id_hex(v)) for o, k, v in mine.tolist()}
    lines: list[tuple[int, bytes]] = []
    for path in sources:
        with open(path, "rb") as f:
            for line in f:
                ordinal = json.loads(line)["o"]
                if ordinal in via:
                    line = _reattributed(line, *via[ordinal])
                lines.append((ordinal, line))
    lines.sort(key=lambda item: item[0])
    # one decision per document: a semantic task rerun on a resume under another (unhashed)
    # `semantic_cluster_rows` may have left a file of another range split; its drops are the same
    unique = [line for i, (o, line) in enumerate(lines) if i == 0 or lines[i - 1][0] != o]
    with atomic_open(ctx.work.stage_decisions(PHASED_STAGE, p), "wb", durable=False) as out:
        out.writelines(unique)
    return DecideResult(dropped=len(unique))


def _reattributed(line: bytes, kept: str, via: str) -> bytes:
    """A drop inside a cluster whose kept document the boundary dropped: it names that document's
    kept one now, `via` the document it is similar to (the cosine stays the one to `via`)."""
    decision = Decision.from_json(json.loads(line))
    assert decision.drop is not None
    detail = {**(decision.drop.detail or {}), "kept_id": kept, "via": via}
    drop = Drop(
        decision.drop.stage, decision.drop.reason, value=decision.drop.value, limit=decision.drop.limit, detail=detail
    )
    return dumps_line(Decision(ordinal=decision.ordinal, cluster=decision.cluster, drop=drop).to_json())
