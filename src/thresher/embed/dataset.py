"""Embed an existing dataset: a vector file per shard, then the manifest updated atomically
(`read_shards(..., with_embeddings=True)` reads them back as (record, vector) pairs).

Memory: one shard's texts and vectors at a time (`--shard-size` bounds both). The manifest is
rewritten once, after every vector file is in place, through an atomic replace: a reader sees the
old manifest or the new one, never a manifest naming a vector file not yet written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from thresher.core.errors import ConfigError, DatasetError
from thresher.embed.batched import encode_texts
from thresher.embed.encoder import Encoder
from thresher.embed.vectors import DTYPES, embedding_section, load_vectors, npy_bytes, vector_path
from thresher.run.heap import trim_heap
from thresher.write.atomic import dumps_json
from thresher.write.manifest import MANIFEST, _read_records, _store, load_manifest


@dataclass(slots=True)
class EmbedReport:
    encoder: str
    version: str
    dimension: int
    dtype: str
    records: int = 0
    tokens: int = 0
    padded_tokens: int = 0
    batches: int = 0
    truncated: int = 0
    empty: int = 0
    files: list[dict[str, Any]] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)  # {shard, row} the encoder raised on (zero rows)
    oom_backoffs: int = 0  # token-budget halvings after out-of-memory errors
    lowest_batch_tokens: int | None = None  # the budget they left (the rest of the run kept it)

    @property
    def padding_efficiency(self) -> float:
        return self.tokens / self.padded_tokens if self.padded_tokens else 1.0

    def section(self) -> dict[str, Any]:
        """The manifest's `embeddings` entry."""
        return {
            "encoder": self.encoder,
            "version": self.version,
            "dimension": self.dimension,
            "dtype": self.dtype,
            "normalized": True,
            "text_field": "text",
            "records": self.records,
            "truncated": self.truncated,
            "empty": self.empty,
            "failed": self.failed,
            "out_of_memory": {"backoffs": self.oom_backoffs, "lowest_batch_tokens": self.lowest_batch_tokens},
            "padding_efficiency": round(self.padding_efficiency, 6),
            "files": self.files,
        }


def embed_dataset(
    dataset: str | Path,
    encoder: Encoder,
    *,
    dtype: str = "float16",
    max_batch_size: int = 64,
    max_batch_tokens: int | None = None,
    plan_docs: int = 4096,
    on_shard: Callable[[str, int], None] | None = None,
) -> EmbedReport:
    """Write a vector file beside every shard of `dataset` and list them in its manifest."""
    if dtype not in DTYPES:
        raise ConfigError(f"dtype must be one of {', '.join(DTYPES)}, not {dtype!r}")
    store = _store(dataset)
    manifest = load_manifest(store)
    fmt = manifest.get("format", "jsonl.gz")
    report = EmbedReport(encoder.name, encoder.version, encoder.dimension, dtype)
    batching = {"max_batch_size": max_batch_size, "max_batch_tokens": max_batch_tokens}
    for shard in manifest["shards"]:
        import numpy as np

        rows: list[Any] = []
        texts: list[str] = []
        first = report.records
        # batches are planned over plan_docs texts at a time, as in the build: memory is one chunk
        # of texts and token ids plus the shard's vectors (its rows x dimension in `dtype`)
        for record in read_shards_of(store, shard, fmt):
            text = record.get("text")
            texts.append(text if isinstance(text, str) else "")
            if len(texts) >= plan_docs:
                rows.append(_encode_chunk(encoder, texts, report, shard["path"], dtype, batching))
                texts = []
        if texts or not rows:
            rows.append(_encode_chunk(encoder, texts, report, shard["path"], dtype, batching))
        for entry in report.failed:
            if entry["shard"] == shard["path"]:
                entry["row"] -= first
        data = npy_bytes(np.concatenate(rows), dtype)
        rows.clear()
        rel = vector_path(shard["path"])
        store.write_bytes(rel, data)
        count = report.records - first
        report.files.append({"shard": shard["path"], "path": rel, "rows": count, "bytes": len(data),
                             "sha256": hashlib.sha256(data).hexdigest()})
        del data
        trim_heap()  # the chunk's token-id lists freed: returned to the system, not kept as heap
        if on_shard is not None:
            on_shard(shard["path"], count)
    manifest["embeddings"] = report.section()
    store.write_bytes(MANIFEST, dumps_json(manifest).encode("utf-8"))  # atomic replace (write.storage)
    return report


def _encode_chunk(encoder: Encoder, texts: list[str], report: EmbedReport, shard: str, dtype: str,
                  batching: dict[str, Any]) -> Any:
    """One plan chunk of a shard encoded: its rows in `dtype`, its counts added to `report`
    (a failed row is listed by its position in the dataset until the shard is done)."""
    encoded = encode_texts(encoder, texts, **batching)
    report.failed.extend({"shard": shard, "row": report.records + i} for i in encoded.failed)
    report.records += len(texts)
    report.tokens += encoded.plan.real_tokens
    report.padded_tokens += encoded.plan.padded_tokens
    report.batches += len(encoded.plan.batches)
    report.truncated += encoded.truncated
    report.empty += encoded.empty
    if encoded.batch_tokens is not None:  # out of memory: the rest of the run keeps the lowered budget
        report.oom_backoffs += encoded.oom_backoffs
        report.lowest_batch_tokens = batching["max_batch_tokens"] = encoded.batch_tokens
    return encoded.vectors.astype(DTYPES[dtype])


def read_shards_of(store: Any, shard: dict[str, Any], fmt: str) -> Iterator[dict[str, Any]]:
    try:
        yield from _read_records(store, shard["path"], fmt)
    except (OSError, EOFError, ValueError) as exc:
        raise DatasetError(f"{store.locate(shard['path'])}: unreadable: {exc}") from exc


def shard_vectors(dataset: str | Path, verify: bool = True) -> Iterator[tuple[dict[str, Any], Any]]:
    """(vector file entry, that shard's vectors), shard by shard in manifest order."""
    store = _store(dataset)
    manifest = load_manifest(store)
    section = embedding_section(manifest, store.locate())
    for shard in manifest["shards"]:
        vectors = load_vectors(store, section, shard, verify=verify)
        yield next(f for f in section["files"] if f["shard"] == shard["path"]), vectors
