"""Vector files beside the shards: one `.npy` per shard, a row per record in document order,
listed in the manifest under `embeddings` with each file's rows, bytes and sha256 and the encoder's
name, version and dimension.

Checking a vector file needs no NumPy: the `.npy` header (a Python dict literal) is parsed here, so
`thresher verify` reports a missing, truncated, altered or wrong-shaped file on a bare install.
"""

from __future__ import annotations

import ast
import io
from typing import Any

from thresher.write.manifest import ShardProblem, _store, stream_digest
from thresher.write.storage import Store

MAGIC = b"\x93NUMPY"
DTYPES = {"float16": "<f2", "float32": "<f4"}
_SHARD_SUFFIXES = (".jsonl.gz", ".jsonl.zst", ".parquet")


def vector_path(shard: str) -> str:
    """`shard-00000.jsonl.gz` → `shard-00000.embeddings.npy` (beside the shard)."""
    for suffix in _SHARD_SUFFIXES:
        if shard.endswith(suffix):
            return shard[: -len(suffix)] + ".embeddings.npy"
    return shard + ".embeddings.npy"


def npy_bytes(vectors: Any, dtype: str) -> bytes:
    """The `.npy` file of `vectors` as `dtype` (float16|float32): same array, same bytes."""
    import numpy as np

    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(vectors, dtype=DTYPES[dtype]), allow_pickle=False)
    return buf.getvalue()


def npy_header(head: bytes) -> dict[str, Any]:
    """The header dict of an `.npy` file from its first bytes; ValueError when it is not one."""
    if not head.startswith(MAGIC) or len(head) < 10:
        raise ValueError("not an .npy file")
    major = head[6]
    size_bytes = 2 if major == 1 else 4
    size = int.from_bytes(head[8 : 8 + size_bytes], "little")
    start = 8 + size_bytes
    text = head[start : start + size]
    if len(text) < size:
        raise ValueError("truncated .npy header")
    header = ast.literal_eval(text.decode("latin-1"))
    if not isinstance(header, dict) or not {"descr", "shape", "fortran_order"} <= header.keys():
        raise ValueError("not an .npy header")
    header["data_offset"] = start + size
    return header


def check_vector_file(store: Store, entry: dict[str, Any], dimension: int, dtype: str) -> ShardProblem | None:
    """One vector file against its manifest entry: present, same size and sha256, shape (rows, dimension)."""
    rel = entry["path"]
    if store.size(rel) is None:
        return ShardProblem(rel, "missing (vector file)")
    try:
        with store.open(rel) as f:
            head = f.read(4096)
            f.seek(0)
            size, digest = stream_digest(f)
        header = npy_header(head)
    except (OSError, ValueError, SyntaxError) as exc:
        return ShardProblem(rel, f"unreadable vector file: {exc}")
    shape = tuple(header["shape"])
    if header["descr"] != DTYPES.get(dtype) or header["fortran_order"]:
        return ShardProblem(rel, f"vectors are {header['descr']}, the manifest says {dtype}")
    if len(shape) != 2 or shape[1] != dimension:
        return ShardProblem(rel, f"vectors have shape {shape}, the manifest says dimension {dimension}")
    if shape[0] != entry["rows"]:
        return ShardProblem(rel, f"{shape[0]} vectors, the manifest says {entry['rows']}")
    expected = header["data_offset"] + shape[0] * shape[1] * int(DTYPES[dtype][-1])
    if size != expected or size != entry["bytes"]:
        return ShardProblem(rel, f"size {size} bytes, expected {entry['bytes']} (truncated or altered)")
    if digest != entry["sha256"]:
        return ShardProblem(rel, "sha256 differs from the manifest (altered)")
    return None


def check_embeddings(dataset: Any, manifest: dict[str, Any]) -> list[ShardProblem]:
    """Every problem with the dataset's vector files (empty when it has none, or they are intact)."""
    section = manifest.get("embeddings")
    if not section:
        return []
    store = _store(dataset)
    shards = {s["path"]: s for s in manifest.get("shards") or []}
    problems = []
    files = section.get("files") or []
    for entry in files:
        from thresher.write.dataset_checks import unsafe_path

        why = unsafe_path(entry.get("path"))
        if why is not None:
            problems.append(ShardProblem(str(entry.get("path")), f"refused: the manifest names a vector path {why}"))
            continue
        shard = shards.get(entry.get("shard"))
        if shard is None:
            problems.append(ShardProblem(str(entry.get("path")), "vector file for a shard the manifest does not list"))
            continue
        if entry.get("rows") != shard["records"]:
            problems.append(ShardProblem(entry["path"], f"{entry.get('rows')} vectors for {shard['records']} records"))
            continue
        problem = check_vector_file(store, entry, int(section["dimension"]), section["dtype"])
        if problem is not None:
            problems.append(problem)
    covered = {e.get("shard") for e in files}
    for path in shards:
        if path not in covered:
            problems.append(ShardProblem(path, "no vector file (the manifest lists embeddings for other shards)"))
    return problems
