"""The embed stage and semantic dedup inside a build, as phases between cluster and write, and the
vector files beside the shards after assemble (see `thresher.run.phases.semantic_phases`).

    embed     one per input partition: the documents the cluster phase kept, embedded in batches
              planned on real token lengths over `plan_docs` documents at a time → the partition's
              float32 rows + (ordinal, id, length, quality) per row; an encoder that raises even on
              one document alone drops that document (`embed.encoder_failed`)
    centroids one: spherical k-means on a seeded sample of all rows (only with semantic dedup)
    assign    one per partition: each row's nearest centroid; the rows rewritten sorted by cluster
              (stable, so ordinal order within a cluster), with the per-cluster counts
    semantic  one per range of clusters (planned from the counts): each cluster's rows read from
              every partition's sorted file, then compared block by block; a document whose cosine
              to an earlier kept one (in keep-policy order) reaches the threshold is dropped, naming
              that document and the cosine → drop files per partition
    decide    one per partition: its drops sorted by ordinal into `decisions/pXXXXXX.later.jsonl`,
              which the write task applies after the cluster phase's (`thresher.run.tasks`)
    vectors   one per output shard: the kept rows of the shard's records, in document order, as
              `shard-XXXXX.embeddings.npy` beside the shard

Memory: one plan chunk of texts (embed), the sample (centroids), one partition's cluster ids
(assign), one cluster's rows and a bounded block of cosines (semantic), one shard's vectors
streamed (vectors). Every plan depends on the data and the config only, never on the worker count,
and each task's float work is on arrays whose shapes follow from the data, so the files are
byte-identical on every engine (for a transformer encoder: on the same device and thread count).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from thresher.core.document import Drop
from thresher.dedup.cluster import Decision
from thresher.embed.batched import encode_texts
from thresher.embed.config import EmbedConfig
from thresher.embed.encoder import Encoder, get_encoder
from thresher.embed.semantic import STAGE, cluster_neighbours, kmeans
from thresher.embed.vectors import DTYPES, vector_path
from thresher.read.base import ordinal_partition
from thresher.run.tasks import TaskContext, iter_cluster_decisions, iter_scan_docs, later_decisions
from thresher.run.workdir import WorkDir
from thresher.write.atomic import atomic_open, dumps_line

FAILED = "embed"  # the stage of an encoder_failed drop
_CHUNK_ROWS = 8192  # rows read, assigned or written at a time

# the per-row record beside each vector: what the keep policy and a drop's detail need
META_FIELDS = [("ordinal", "<u8"), ("id", "S8"), ("length", "<u4"), ("quality", "<f4")]

_encoders: dict[tuple[str, str], Encoder] = {}  # per process: loading a model costs more than a task


def encoder_for(config: EmbedConfig) -> Encoder:
    name = config.encoder_name
    assert name is not None, "the embed phase runs only with an encoder"
    key = (name, config.device)
    encoder = _encoders.get(key)
    if encoder is None:
        encoder = _encoders[key] = get_encoder(name, config.device)
    return encoder


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


def _id_bytes(doc_id: str) -> bytes:
    from thresher.run.records import id_bytes

    return id_bytes(doc_id)


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

    def to_json(self) -> dict[str, Any]:
        return {"encoder": self.encoder, "version": self.version, "dimension": self.dimension, "rows": self.rows, "tokens": self.tokens, "padded_tokens": self.padded_tokens, "batches": self.batches,
                "truncated": self.truncated, "empty": self.empty, "failed": self.failed}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        return cls(**data)


@dataclass(frozen=True, slots=True, kw_only=True)
class CentroidsResult:
    clusters: int
    sample: int

    def to_json(self) -> dict[str, Any]:
        return {"clusters": self.clusters, "sample": self.sample}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        return cls(**data)


@dataclass(frozen=True, slots=True, kw_only=True)
class AssignResult:
    counts: tuple[int, ...]  # rows of the partition per cluster

    def to_json(self) -> dict[str, Any]:
        return {"counts": list(self.counts)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        return cls(counts=tuple(data["counts"]))


@dataclass(frozen=True, slots=True, kw_only=True)
class SemanticResult:
    duplicates: int
    largest: int

    def to_json(self) -> dict[str, Any]:
        return {"duplicates": self.duplicates, "largest": self.largest}

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

    config = ctx.config.embed
    encoder = encoder_for(config)
    files = _files(ctx.work, p)
    meta_dtype = _meta_dtype()
    totals = {"rows": 0, "tokens": 0, "padded_tokens": 0, "batches": 0, "truncated": 0, "empty": 0, "failed": 0}
    with (
        atomic_open(files["vectors"], "wb", durable=False) as vec_out,
        atomic_open(files["meta"], "wb", durable=False) as meta_out,
        atomic_open(files["failed"], "wb", durable=False) as failed_out,
    ):

        def flush(chunk: list[tuple[int, dict[str, Any]]]) -> None:
            texts = [text if isinstance(text := r.get("text"), str) else "" for _, r in chunk]
            encoded = encode_texts(encoder, texts, max_batch_size=config.batch_size, max_batch_tokens=config.batch_tokens)
            failed = set(encoded.failed)
            keep = [i for i in range(len(chunk)) if i not in failed]
            vec_out.write(np.ascontiguousarray(encoded.vectors[keep], dtype="<f4").tobytes())
            meta = np.zeros(len(keep), dtype=meta_dtype)
            for row, i in enumerate(keep):
                ordinal, record = chunk[i]
                meta[row] = (ordinal, _id_bytes(str(record.get("id"))), len(texts[i]),
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
    return EmbedResult(encoder=encoder.name, version=encoder.version, dimension=encoder.dimension, **totals)


def _vectors(path: Path, dimension: int) -> Any:
    """A partition's rows, memory-mapped (nothing read until used)."""
    import numpy as np

    if path.stat().st_size == 0:
        return np.zeros((0, dimension), dtype="<f4")
    return np.memmap(path, dtype="<f4", mode="r").reshape(-1, dimension)


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

    config = ctx.config.embed
    total = sum(n for _, n in rows)
    rng = np.random.default_rng(config.semantic_seed)
    picks = np.sort(rng.choice(total, size=min(config.semantic_sample, total), replace=False))
    parts, start = [], 0
    for p, n in rows:
        local = picks[(picks >= start) & (picks < start + n)] - start
        if len(local):
            parts.append(np.asarray(_vectors(_files(ctx.work, p)["vectors"], dimension)[local], dtype=np.float32))
        start += n
    sample = np.concatenate(parts) if parts else np.zeros((0, dimension), dtype=np.float32)
    centroids = kmeans(sample, cluster_count(config, total), iterations=config.semantic_iterations, seed=config.semantic_seed)
    with atomic_open(ctx.work.path("semantic", "centroids.f32"), "wb", durable=False) as f:
        f.write(np.ascontiguousarray(centroids, dtype="<f4").tobytes())
    return CentroidsResult(clusters=len(centroids), sample=len(sample))


def _centroids(work: WorkDir, dimension: int) -> Any:
    import numpy as np

    return np.fromfile(work.path("semantic", "centroids.f32"), dtype="<f4").reshape(-1, dimension)


# -- assign --------------------------------------------------------------------------------------


def assign_task(ctx: TaskContext, p: int, dimension: int) -> AssignResult:
    import numpy as np

    files = _files(ctx.work, p)
    centroids = _centroids(ctx.work, dimension)
    vectors = _vectors(files["vectors"], dimension)
    meta = _meta(files["meta"])
    n = len(meta)
    assign = np.zeros(n, dtype=np.int64)
    for s in range(0, n, _CHUNK_ROWS):
        assign[s : s + _CHUNK_ROWS] = np.argmax(np.asarray(vectors[s : s + _CHUNK_ROWS]) @ centroids.T, axis=1)
    order = np.argsort(assign, kind="stable")  # by cluster, ordinal order within one
    counts = np.bincount(assign, minlength=len(centroids))
    with atomic_open(files["sorted_vectors"], "wb", durable=False) as vf, atomic_open(files["sorted_meta"], "wb", durable=False) as mf:
        for s in range(0, n, _CHUNK_ROWS):
            rows = order[s : s + _CHUNK_ROWS]
            vf.write(np.ascontiguousarray(vectors[rows], dtype="<f4").tobytes())
            mf.write(meta[rows].tobytes())
    with atomic_open(files["counts"], "wb", durable=False) as f:
        f.write(counts.astype("<i8").tobytes())
    return AssignResult(counts=tuple(int(c) for c in counts))


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


def semantic_task(ctx: TaskContext, lo: int, hi: int, partitions: list[int], dimension: int) -> SemanticResult:
    """Semantic duplicates within clusters lo..hi-1, each cluster's rows gathered from every partition."""
    import numpy as np

    config = ctx.config.embed
    threshold = config.semantic_threshold
    assert threshold is not None
    work = ctx.work
    meta_dtype = _meta_dtype()
    offsets = {}
    for p in partitions:
        counts = np.fromfile(_files(work, p)["counts"], dtype="<i8")
        offsets[p] = (np.cumsum(counts) - counts, counts)
    drops: dict[int, list[bytes]] = {}
    duplicates = largest = 0
    for j in range(lo, hi):
        vec_parts, meta_parts = [], []
        for p in partitions:
            start, counts = offsets[p]
            n = int(counts[j])
            if n:
                files = _files(work, p)
                first = int(start[j])
                vec_parts.append(np.fromfile(files["sorted_vectors"], dtype="<f4", count=n * dimension,
                                             offset=first * dimension * 4).reshape(n, dimension))
                meta_parts.append(np.fromfile(files["sorted_meta"], dtype=meta_dtype, count=n, offset=first * meta_dtype.itemsize))
        if not vec_parts:
            continue
        meta = np.concatenate(meta_parts)
        largest = max(largest, len(meta))
        if len(meta) < 2:
            continue
        order = _keep_order(meta, ctx.config.dedup.keep)
        vectors, meta = np.concatenate(vec_parts)[order], meta[order]
        cluster = f"semantic-{j}"
        for row, kept_row, cosine in cluster_neighbours(vectors, threshold):
            duplicates += 1
            ordinal = int(meta["ordinal"][row])
            detail = {"kept_id": meta["id"][kept_row].hex(), "cluster": cluster}
            drop = Drop(STAGE, "semantic_duplicate", value=round(cosine, 6), limit=threshold, detail=detail)
            drops.setdefault(ordinal_partition(ordinal), []).append(
                dumps_line(Decision(ordinal=ordinal, cluster=cluster, drop=drop).to_json())
            )
    for p, lines in drops.items():
        with atomic_open(_files(work, p)["drops"] / f"c{lo:06d}.jsonl", "wb", durable=False) as f:
            f.writelines(lines)
    return SemanticResult(duplicates=duplicates, largest=largest)


# -- decide --------------------------------------------------------------------------------------


def decide_task(ctx: TaskContext, p: int) -> DecideResult:
    """Partition p's later drops (semantic duplicates, encoder failures) in ordinal order."""
    files = _files(ctx.work, p)
    sources = [files["failed"]]
    if files["drops"].is_dir():
        sources += sorted(files["drops"].glob("c*.jsonl"))
    lines: list[tuple[int, bytes]] = []
    for path in sources:
        with open(path, "rb") as f:
            lines += [(json.loads(line)["o"], line) for line in f]
    lines.sort(key=lambda item: item[0])
    with atomic_open(later_decisions(ctx.work, p), "wb", durable=False) as out:
        out.writelines(line for _, line in lines)
    return DecideResult(dropped=len(lines))


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

        import io

        head = io.BytesIO()  # the header np.save writes (format 1.0), so `thresher embed` files match
        np.lib.format.write_array_header_1_0(head, {"descr": DTYPES[config.dtype], "fortran_order": False, "shape": (rows, dimension)})
        write(head.getvalue())
        for p, first, end in ranges:
            kept = _kept_rows(ctx.work, p)
            if end > len(kept):
                raise RuntimeError(f"partition {p}: {len(kept)} embedded documents kept, the shard {shard} needs {end}")
            vectors = _vectors(_files(ctx.work, p)["vectors"], dimension)
            for s in range(first, end, _CHUNK_ROWS):
                picked = kept[s : min(end, s + _CHUNK_ROWS)]
                write(np.ascontiguousarray(vectors[picked], dtype=DTYPES[config.dtype]).tobytes())
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
        "files": [f.to_json() for f in files],
    }
    if semantic is not None:
        section["semantic_dedup"] = semantic
    return section
