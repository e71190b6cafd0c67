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
    decide    one per partition: its drops sorted by ordinal into `decisions/pXXXXXX.semantic.jsonl`,
              which the write task applies after the cluster phase's (`thresher.run.cluster`)
    vectors   one per output shard: the kept rows of the shard's records, in document order, as
              `shard-XXXXX.embeddings.npy` beside the shard

Memory: one plan chunk of texts (embed), the sample (centroids), one partition's cluster ids
(assign), one cluster's rows and visitors and a bounded block of cosines (semantic), the boundary
pairs (≤ `semantic_phase._BOUNDARY_EDGES` per surviving boundary row) and 16 bytes per in-cluster drop
(boundary), one shard's vectors streamed (vectors). Every plan depends on the data and the config only,
never on the worker count, and each task's float work is on arrays whose shapes follow from the data, so
the files are byte-identical on every engine (for a transformer encoder: on the same device and thread
count).

This module holds the embed and vectors tasks and the manifest's `embeddings` section; centroids,
assign, semantic, boundary and decide are in `thresher.embed.semantic_phase`, the task results in
`thresher.embed.results` and the work files they share in `thresher.embed.rows`.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from thresher.clusters import Decision
from thresher.core.document import Drop
from thresher.embed.config import EmbedConfig
from thresher.embed.results import EmbedResult, VectorFile
from thresher.embed.rows import CHUNK_ROWS, PHASED_STAGE, map_vectors, meta_record_dtype, read_meta, work_files
from thresher.run.cluster import iter_kept
from thresher.run.records import id_bytes
from thresher.run.task import TaskContext
from thresher.run.workdir import WorkDir
from thresher.write.atomic import atomic_open, dumps_line

if TYPE_CHECKING:
    from thresher.embed.encoder import Encoder


# The task bodies import the encoder, batching, clustering and vector-file modules they use: every
# build imports this module (its tasks are in the build's task table), and a build without an
# encoder must not pay ~6 ms of CPU importing them.

FAILED = "embed"  # the stage of an encoder_failed drop

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


# -- embed ---------------------------------------------------------------------------------------


def _kept_records(work: WorkDir, p: int, decided_by: Sequence[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(ordinal, record) of every document of partition p kept so far (by the cluster phase and the
    phased stages `decided_by`)."""
    for ordinal, line in iter_kept(work, p, decided_by):
        yield ordinal, json.loads(line)


def embed_task(ctx: TaskContext, p: int, decided_by: Sequence[str] = ()) -> EmbedResult:
    import numpy as np

    from thresher.embed.batched import encode_texts

    config = ctx.config.embed
    encoder = encoder_for(config)
    files = work_files(ctx.work, p)
    meta_dtype = meta_record_dtype()
    totals = {
        "rows": 0,
        "tokens": 0,
        "padded_tokens": 0,
        "batches": 0,
        "truncated": 0,
        "empty": 0,
        "failed": 0,
        "oom_backoffs": 0,
    }
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
        for item in _kept_records(ctx.work, p, decided_by):
            chunk.append(item)
            if len(chunk) >= config.plan_docs:
                flush(chunk)
                chunk = []
        if chunk:
            flush(chunk)
    reduced = budget["tokens"] if totals["oom_backoffs"] else None
    return EmbedResult(
        encoder=encoder.name, version=encoder.version, dimension=encoder.dimension, batch_tokens=reduced, **totals
    )


# -- vectors -------------------------------------------------------------------------------------


def _kept_rows(work: WorkDir, p: int, decided_by: Sequence[str]) -> Any:
    """Positions in partition p's rows of the documents the write task keeps: not dropped by this
    stage nor by any phased stage after it (`decided_by`: every phased stage of the build)."""
    import numpy as np

    meta = read_meta(work_files(work, p)["meta"])
    dropped = []
    for stage in decided_by:
        path = work.stage_decisions(stage, p)
        if path.exists():
            with open(path, "rb") as f:
                dropped += [json.loads(line)["o"] for line in f]
    return np.flatnonzero(~np.isin(meta["ordinal"], np.asarray(dropped, dtype=np.uint64)))


def vectors_task(
    ctx: TaskContext, shard: str, ranges: list[list[int]], dimension: int, decided_by: Sequence[str] = (PHASED_STAGE,)
) -> VectorFile:
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
        np.lib.format.write_array_header_1_0(
            head, {"descr": DTYPES[config.dtype], "fortran_order": False, "shape": (rows, dimension)}
        )
        write(head.getvalue())
        for p, first, end in ranges:
            kept = _kept_rows(ctx.work, p, decided_by)
            if end > len(kept):
                raise RuntimeError(f"partition {p}: {len(kept)} embedded documents kept, the shard {shard} needs {end}")
            mapped = map_vectors(work_files(ctx.work, p)["vectors"], dimension)
            for s in range(first, end, CHUNK_ROWS):
                picked = kept[s : min(end, s + CHUNK_ROWS)]
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
        "out_of_memory": {
            "backoffs": sum(r.oom_backoffs for r in embedded),
            "lowest_batch_tokens": min((r.batch_tokens for r in embedded if r.batch_tokens is not None), default=None),
        },
        "files": [f.to_json() for f in files],
    }
    if semantic is not None:
        section["semantic_dedup"] = semantic
    return section
