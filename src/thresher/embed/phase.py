"""The embed stage and semantic dedup inside a build, as phases between cluster and write, and the
vector files beside the shards after assemble (see `thresher.run.phases.semantic_phases`).

    embed     one per input partition: the documents the cluster phase kept, embedded in batches
              planned on real token lengths over `plan_docs` documents at a time → the partition's
              float32 rows + (ordinal, id, length, quality) per row; an encoder that raises even on
              one document alone drops that document (`embed.encoder_failed`)
    centroids one: spherical k-means on a seeded sample of all rows (only with semantic dedup); a
              cluster the sample says is over `semantic_cluster_max` rows re-split by k-means inside it
    assign    one per partition: each row's nearest centroid, and its second-nearest when that is
              within `semantic_margin` (the row then *visits* that cluster too); the rows rewritten
              sorted by (cluster, own rows before visitors), stable, with the per-cluster counts
    semantic  one per range of clusters (planned from the counts): each cluster's rows read from
              every partition's sorted file, then compared block by block; a document whose cosine
              to an earlier kept one (in keep-policy order) reaches the threshold is dropped, naming
              that document and the cosine → drop files per partition. Then the cluster's surviving
              rows against its visitors: the pairs at or above the threshold → an edge file
    boundary  one: the edge files resolved once for the corpus (`boundary_task`): pairs whose visitor
              its home cluster dropped are discarded, each pair kept once, and the rest decided
              greedily in keep-policy order, so nothing is dropped twice and every drop names a
              kept document (a drop inside a cluster whose kept one the boundary dropped is
              re-attributed to that one's kept document, `via` naming the link)
    decide    one per partition: its drops sorted by ordinal into `decisions/pXXXXXX.later.jsonl`,
              which the write task applies after the cluster phase's (`thresher.run.cluster`)
    vectors   one per output shard: the kept rows of the shard's records, in document order, as
              `shard-XXXXX.embeddings.npy` beside the shard

Memory: one plan chunk of texts (embed), the sample (centroids), one partition's cluster ids
(assign), one cluster's rows and visitors and a bounded block of cosines (semantic), the boundary
pairs (≤ `_BOUNDARY_EDGES` per surviving boundary row) and 16 bytes per in-cluster drop
(boundary), one shard's vectors streamed (vectors). Every plan depends on the data and the config only, never on the worker count,
and each task's float work is on arrays whose shapes follow from the data, so the files are
byte-identical on every engine (for a transformer encoder: on the same device and thread count).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from thresher.core.document import Drop
from thresher.dedup.cluster import Decision
from thresher.embed.config import EmbedConfig
from thresher.read.base import ordinal_partition
from thresher.run.cluster import iter_cluster_decisions, later_decisions
from thresher.run.records import id_bytes
from thresher.run.scan import iter_scan_docs
from thresher.run.task import TaskContext
from thresher.run.workdir import WorkDir
from thresher.write.atomic import atomic_open, dumps_line

if TYPE_CHECKING:
    from thresher.embed.encoder import Encoder

# The task bodies import the encoder, batching, clustering and vector-file modules they use: every
# build imports this module (its tasks are in the build's task table), and a build without an
# encoder must not pay ~6 ms of CPU importing them.

FAILED = "embed"  # the stage of an encoder_failed drop
_CHUNK_ROWS = 8192  # rows read, assigned or written at a time
_BOUNDARY_EDGES = 8  # boundary pairs kept per surviving document (its closest visitors)

# the per-row record beside each vector: what the keep policy and a drop's detail need
META_FIELDS = [("ordinal", "<u8"), ("id", "S8"), ("length", "<u4"), ("quality", "<f4")]

_encoders: dict[tuple[str, str], Encoder] = {}  # per process: loading a model costs more than a task


def encoder_for(config: EmbedConfig) -> Encoder:
    from thresher.embed.encoder import get_encoder

    name = config.encoder_name
    assert name is not None, "the embed phase runs only with an encoder"
    key = (name, config.device)
    encoder = _encoders.get(key)
    if encoder is None:
        encoder = _encoders[key] = get_encoder(name, config.device)
    return encoder


def id_hex(raw: bytes) -> str:
    """The 16 hex digits of an 8-byte id read from a meta array: NumPy's `S8` drops trailing zero
    bytes, so an id ending in 00 would otherwise name no document."""
    return bytes(raw).ljust(8, b"\0").hex()


def _meta_dtype() -> Any:
    import numpy as np

    return np.dtype(META_FIELDS)


def _files(work: WorkDir, p: int) -> dict[str, Path]:
    stem = f"p{p:06d}"
    return {
        "vectors": work.path("embed", f"{stem}.f32"),
        "meta": work.path("embed", f"{stem}.meta"),
        "failed": work.path("embed", f"{stem}.failed.jsonl"),
        "sorted_vectors": work.path("semantic", f"{stem}.f32"),
        "sorted_meta": work.path("semantic", f"{stem}.meta"),
        "counts": work.path("semantic", f"{stem}.counts"),
        "drops": work.path("semantic", "drops", stem),
    }


def _range_files(work: WorkDir, lo: int) -> dict[str, Path]:
    """What the semantic task of the cluster range starting at `lo` leaves for the boundary task."""
    return {
        "edges": work.path("semantic", "edges", f"c{lo:06d}.edges"),  # boundary pairs, `_edge_dtype`
        "dropped": work.path("semantic", "edges", f"c{lo:06d}.dropped"),  # (ordinal, kept ordinal) of its drops
    }


def _via_file(work: WorkDir) -> Path:
    return work.path("semantic", "via.bin")


# -- results -------------------------------------------------------------------------------------


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
        return {"encoder": self.encoder, "version": self.version, "dimension": self.dimension, "rows": self.rows, "tokens": self.tokens, "padded_tokens": self.padded_tokens, "batches": self.batches,
                "truncated": self.truncated, "empty": self.empty, "failed": self.failed, "oom_backoffs": self.oom_backoffs,
                "batch_tokens": self.batch_tokens}

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


# -- embed ---------------------------------------------------------------------------------------


def _kept_records(work: WorkDir, p: int) -> Iterator[tuple[int, dict[str, Any]]]:
    """(ordinal, record) of every document of partition p the cluster phase did not drop."""
    decisions = iter_cluster_decisions(work, p)
    pending = next(decisions, None)
    for ordinal, line in iter_scan_docs(work, p):
        while pending is not None and pending.ordinal < ordinal:
            pending = next(decisions, None)
        if pending is not None and pending.ordinal == ordinal:
            dropped = pending.drop is not None
            pending = next(decisions, None)
            if dropped:
                continue
        yield ordinal, json.loads(line)


def embed_task(ctx: TaskContext, p: int) -> EmbedResult:
    import numpy as np

    from thresher.embed.batched import encode_texts

    config = ctx.config.embed
    encoder = encoder_for(config)
    files = _files(ctx.work, p)
    meta_dtype = _meta_dtype()
    totals = {"rows": 0, "tokens": 0, "padded_tokens": 0, "batches": 0, "truncated": 0, "empty": 0, "failed": 0, "oom_backoffs": 0}
    budget = {"tokens": config.batch_tokens}  # lowered for the rest of the task by an out-of-memory back-off
    with (
        atomic_open(files["vectors"], "wb", durable=False) as vec_out,
        atomic_open(files["meta"], "wb", durable=False) as meta_out,
        atomic_open(files["failed"], "wb", durable=False) as failed_out,
    ):

        def flush(chunk: list[tuple[int, dict[str, Any]]]) -> None:
            texts = [text if isinstance(text := r.get("text"), str) else "" for _, r in chunk]
            encoded = encode_texts(encoder, texts, max_batch_size=config.batch_size, max_batch_tokens=budget["tokens"])
            if encoded.batch_tokens is not None:
                budget["tokens"] = encoded.batch_tokens
                totals["oom_backoffs"] += encoded.oom_backoffs
            failed = set(encoded.failed)
            keep = [i for i in range(len(chunk)) if i not in failed]
            vec_out.write(np.ascontiguousarray(encoded.vectors[keep], dtype="<f4").tobytes())
            meta = np.zeros(len(keep), dtype=meta_dtype)
            for row, i in enumerate(keep):
                ordinal, record = chunk[i]
                meta[row] = (ordinal, id_bytes(str(record.get("id"))), len(texts[i]),
                             float((record.get("annotations") or {}).get("quality.score", 0.0)))
            meta_out.write(meta.tobytes())
            for i in sorted(failed):
                ordinal, record = chunk[i]
                drop = Drop(FAILED, "encoder_failed", detail={"encoder": encoder.name, "cluster": "embed"})
                failed_out.write(dumps_line(Decision(ordinal=ordinal, cluster="embed", drop=drop).to_json()))
            totals["rows"] += len(keep)
            totals["tokens"] += encoded.plan.real_tokens
            totals["padded_tokens"] += encoded.plan.padded_tokens
            totals["batches"] += len(encoded.plan.batches)
            totals["truncated"] += encoded.truncated
            totals["empty"] += encoded.empty
            totals["failed"] += len(failed)

        chunk: list[tuple[int, dict[str, Any]]] = []
        for item in _kept_records(ctx.work, p):
            chunk.append(item)
            if len(chunk) >= config.plan_docs:
                flush(chunk)
                chunk = []
        if chunk:
            flush(chunk)
    reduced = budget["tokens"] if totals["oom_backoffs"] else None
    return EmbedResult(encoder=encoder.name, version=encoder.version, dimension=encoder.dimension, batch_tokens=reduced, **totals)


class _MappedRows:
    """A partition's float32 rows, mapped read-only (nothing read until used). `release()` drops
    the pages read so far from this process's resident set (they stay in the page cache, and are
    read back on the next touch): a task walking a partition's rows in chunks then holds about one
    chunk resident, not the whole file it mapped (a 64 MiB partition of short texts is ~200 MiB
    of 256-dimension rows)."""

    def __init__(self, path: Path, dimension: int) -> None:
        import mmap

        import numpy as np

        self._map: Any = None
        if path.stat().st_size == 0:
            self.rows = np.zeros((0, dimension), dtype="<f4")
            return
        with open(path, "rb") as f:
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        self.rows = np.frombuffer(self._map, dtype="<f4").reshape(-1, dimension)

    def release(self) -> None:
        import mmap

        if self._map is not None and hasattr(mmap, "MADV_DONTNEED"):
            self._map.madvise(mmap.MADV_DONTNEED)


def _vectors(path: Path, dimension: int) -> _MappedRows:
    return _MappedRows(path, dimension)


def _meta(path: Path) -> Any:
    import numpy as np

    return np.fromfile(path, dtype=_meta_dtype())


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
            mapped = _vectors(_files(ctx.work, p)["vectors"], dimension)
            for c in range(0, len(local), _CHUNK_ROWS):
                chunk = local[c : c + _CHUNK_ROWS]
                sample[filled : filled + len(chunk)] = mapped.rows[chunk]
                filled += len(chunk)
                mapped.release()
        start += n
    centroids = kmeans(sample, cluster_count(config, total), iterations=config.semantic_iterations, seed=config.semantic_seed)
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

    files = _files(ctx.work, p)
    centroids = _centroids(ctx.work, dimension)
    mapped = _vectors(files["vectors"], dimension)
    vectors = mapped.rows
    meta = _meta(files["meta"])
    n, k = len(meta), len(centroids)
    first = np.zeros(n, dtype=np.int64)
    second = np.zeros(n, dtype=np.int64)
    for s in range(0, n, _CHUNK_ROWS):
        first[s : s + _CHUNK_ROWS], second[s : s + _CHUNK_ROWS] = nearest_two(vectors[s : s + _CHUNK_ROWS], centroids,
                                                                             ctx.config.embed.semantic_margin)
        mapped.release()
    visiting = np.flatnonzero(second >= 0)
    rows = np.concatenate([np.arange(n, dtype=np.int64), visiting])
    slots = np.concatenate([2 * first, 2 * second[visiting] + 1])  # cluster j's own rows: slot 2j, visitors: 2j+1
    order = np.argsort(slots, kind="stable")  # by slot, ordinal order within one
    counts = np.bincount(slots, minlength=2 * k)
    with atomic_open(files["sorted_vectors"], "wb", durable=False) as vf, atomic_open(files["sorted_meta"], "wb", durable=False) as mf:
        for s in range(0, len(order), _CHUNK_ROWS):
            picked = rows[order[s : s + _CHUNK_ROWS]]
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


def _keep_order(meta: Any, keep: str) -> Any:
    """The cluster's rows in keep-policy order: the earliest-ranked of two duplicates is kept, as in
    the cluster phase (`thresher.dedup.cluster`: first, longest, best_quality; ties by ordinal)."""
    import numpy as np

    if keep == "longest":
        return np.lexsort((meta["ordinal"], -meta["length"].astype(np.int64)))
    if keep == "best_quality":
        return np.lexsort((meta["ordinal"], -meta["quality"]))
    return np.argsort(meta["ordinal"], kind="stable")


def _edge_dtype() -> Any:
    import numpy as np

    meta = _meta_dtype()
    return np.dtype([("a", meta), ("b", meta), ("cosine", "<f4"), ("cluster", "<i8")])


_DROPPED_DTYPE = [("ordinal", "<u8"), ("kept", "<u8")]


def _read_slot(work: WorkDir, partitions: list[int], offsets: dict[int, Any], slot: int, dimension: int) -> tuple[Any, Any]:
    """One slot (a cluster's own rows or its visitors) gathered from every partition's sorted files."""
    import numpy as np

    meta_dtype = _meta_dtype()
    vec_parts, meta_parts = [], []
    for p in partitions:
        start, counts = offsets[p]
        n = int(counts[slot])
        if n:
            files = _files(work, p)
            first = int(start[slot])
            vec_parts.append(np.fromfile(files["sorted_vectors"], dtype="<f4", count=n * dimension,
                                         offset=first * dimension * 4).reshape(n, dimension))
            meta_parts.append(np.fromfile(files["sorted_meta"], dtype=meta_dtype, count=n, offset=first * meta_dtype.itemsize))
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
        counts = np.fromfile(_files(work, p)["counts"], dtype="<i8")
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
        order = _keep_order(meta, ctx.config.dedup.keep)
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
        with atomic_open(_files(work, p)["drops"] / f"c{lo:06d}.jsonl", "wb", durable=False) as f:
            f.writelines(lines)
    files = _range_files(work, lo)
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
    edges = np.concatenate([np.fromfile(_range_files(work, lo)["edges"], dtype=edge_dtype) for lo in starts])
    dropped = np.concatenate([np.fromfile(_range_files(work, lo)["dropped"], dtype=_DROPPED_DTYPE) for lo in starts])
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
    rank[_keep_order(nodes, ctx.config.dedup.keep)] = np.arange(len(nodes))
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
        drop = Drop(STAGE, "semantic_duplicate", value=round(float(edges["cosine"][e]), 6), limit=threshold, detail=detail)
        ordinal = int(doc["ordinal"])
        lines.setdefault(ordinal_partition(ordinal), []).append(
            dumps_line(Decision(ordinal=ordinal, cluster=cluster, drop=drop).to_json())
        )
    for p, found in lines.items():
        found.sort(key=lambda line: json.loads(line)["o"])
        with atomic_open(_files(work, p)["drops"] / "b000000.jsonl", "wb", durable=False) as f:
            f.writelines(found)
    # drops inside a cluster naming a document the boundary dropped: name its kept one instead
    gone = {int(nodes["ordinal"][by_rank[v]]): nodes[by_rank[u]]["id"] for v, u in kept_for.items()}
    via_ids = {int(nodes["ordinal"][by_rank[v]]): nodes[by_rank[v]]["id"] for v in kept_for}
    moved = dropped[np.isin(dropped["kept"], np.fromiter(gone, dtype=np.uint64, count=len(gone)))]
    via = np.zeros(len(moved), dtype=[("ordinal", "<u8"), ("kept", "S8"), ("via", "S8")])
    for i, (ordinal, kept_ordinal) in enumerate(moved[np.argsort(moved["ordinal"], kind="stable")].tolist()):
        via[i] = (ordinal, gone[kept_ordinal], via_ids[kept_ordinal])
    with atomic_open(_via_file(work), "wb", durable=False) as f:
        f.write(via.tobytes())
    return BoundaryResult(duplicates=len(kept_for), pairs=len(edges), reattributed=len(via))


# -- decide --------------------------------------------------------------------------------------


def decide_task(ctx: TaskContext, p: int) -> DecideResult:
    """Partition p's later drops (semantic duplicates inside clusters and across their boundaries,
    encoder failures) in ordinal order, with the boundary's re-attributions applied."""
    import numpy as np

    files = _files(ctx.work, p)
    sources = [files["failed"]]
    if files["drops"].is_dir():
        sources += sorted(files["drops"].glob("[bc]*.jsonl"))
    via_path = _via_file(ctx.work)
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
    with atomic_open(later_decisions(ctx.work, p), "wb", durable=False) as out:
        out.writelines(unique)
    return DecideResult(dropped=len(unique))


def _reattributed(line: bytes, kept: str, via: str) -> bytes:
    """A drop inside a cluster whose kept document the boundary dropped: it names that document's
    kept one now, `via` the document it is similar to (the cosine stays the one to `via`)."""
    decision = Decision.from_json(json.loads(line))
    assert decision.drop is not None
    detail = {**(decision.drop.detail or {}), "kept_id": kept, "via": via}
    drop = Drop(decision.drop.stage, decision.drop.reason, value=decision.drop.value, limit=decision.drop.limit, detail=detail)
    return dumps_line(Decision(ordinal=decision.ordinal, cluster=decision.cluster, drop=drop).to_json())


# -- vectors -------------------------------------------------------------------------------------


def _kept_rows(work: WorkDir, p: int) -> Any:
    """Positions in partition p's rows of the documents the write task keeps (not dropped later)."""
    import numpy as np

    meta = _meta(_files(work, p)["meta"])
    dropped = []
    path = later_decisions(work, p)
    if path.exists():
        with open(path, "rb") as f:
            dropped = [json.loads(line)["o"] for line in f]
    return np.flatnonzero(~np.isin(meta["ordinal"], np.asarray(dropped, dtype=np.uint64)))


def vectors_task(ctx: TaskContext, shard: str, ranges: list[list[int]], dimension: int) -> VectorFile:
    """The vector file of one shard: for each [partition, first, end) of `ranges`, in order, the
    rows of that partition's kept documents first..end-1, as the configured dtype."""
    import numpy as np

    from thresher.embed.vectors import DTYPES, vector_path

    config = ctx.config.embed
    rows = sum(end - first for _, first, end in ranges)
    rel = vector_path(shard)
    dest = Path(ctx.workdir).parent / rel
    for stale in dest.parent.glob(f".{dest.name}.tmp-*"):  # a killed attempt's temp file
        stale.unlink(missing_ok=True)
    digest = hashlib.sha256()
    size = 0
    with atomic_open(dest, "wb") as out:

        def write(data: bytes) -> None:
            nonlocal size
            out.write(data)
            digest.update(data)
            size += len(data)

        head = io.BytesIO()  # the header np.save writes (format 1.0), so `thresher embed` files match
        np.lib.format.write_array_header_1_0(head, {"descr": DTYPES[config.dtype], "fortran_order": False, "shape": (rows, dimension)})
        write(head.getvalue())
        for p, first, end in ranges:
            kept = _kept_rows(ctx.work, p)
            if end > len(kept):
                raise RuntimeError(f"partition {p}: {len(kept)} embedded documents kept, the shard {shard} needs {end}")
            mapped = _vectors(_files(ctx.work, p)["vectors"], dimension)
            for s in range(first, end, _CHUNK_ROWS):
                picked = kept[s : min(end, s + _CHUNK_ROWS)]
                write(np.ascontiguousarray(mapped.rows[picked], dtype=DTYPES[config.dtype]).tobytes())
                mapped.release()
    return VectorFile(shard=shard, path=rel, rows=rows, bytes=size, sha256=digest.hexdigest())


def shard_ranges(pieces: list[list[Any]]) -> dict[int, list[list[int]]]:
    """Per output shard, its [partition, first, end) ranges of each partition's kept documents,
    from the write tasks' pieces given as [partition, shard, records] in partition order."""
    out: dict[int, list[list[int]]] = {}
    offset: dict[int, int] = {}
    for p, shard, records in pieces:
        first = offset.get(p, 0)
        out.setdefault(shard, []).append([p, first, first + records])
        offset[p] = first + records
    return out


def embeddings_section(config: EmbedConfig, embedded: list[EmbedResult], files: list[VectorFile],
                       semantic: dict[str, Any] | None) -> dict[str, Any]:
    """The manifest's `embeddings` entry for a build (the same keys `thresher embed` writes, plus
    what the build's semantic dedup did)."""
    first = embedded[0]
    tokens = sum(r.tokens for r in embedded)
    padded = sum(r.padded_tokens for r in embedded)
    section: dict[str, Any] = {
        "encoder": first.encoder,
        "version": first.version,
        "dimension": first.dimension,
        "dtype": config.dtype,
        "normalized": True,
        "text_field": "text",
        "records": sum(f.rows for f in files),
        "truncated": sum(r.truncated for r in embedded),
        "empty": sum(r.empty for r in embedded),
        "failed": [],  # documents the encoder failed on are dropped (embed.encoder_failed), never zero rows
        "encoder_failed": sum(r.failed for r in embedded),
        "padding_efficiency": round(tokens / padded, 6) if padded else 1.0,
        # out-of-memory on the device: the token budget halved and the batch retried, never a drop
        "out_of_memory": {"backoffs": sum(r.oom_backoffs for r in embedded),
                          "lowest_batch_tokens": min((r.batch_tokens for r in embedded if r.batch_tokens is not None), default=None)},
        "files": [f.to_json() for f in files],
    }
    if semantic is not None:
        section["semantic_dedup"] = semantic
    return section
