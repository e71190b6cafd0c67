"""Vector files beside the shards: one `.npy` per shard, a row per record in document order,
listed in the manifest under `embeddings` with each file's rows, bytes and sha256 and the encoder's
name, version and dimension.

This module imports nothing from `thresher.write` but the storage layer, so the manifest reader and
`verify` can call it without an import cycle. Checking a vector file needs no NumPy: the `.npy` header
(a Python dict literal) is parsed here, so `thresher verify` reports a missing, truncated, altered or
wrong-shaped file on a bare install.
"""

from __future__ import annotations

import ast
import hashlib
import io
from pathlib import PurePosixPath
from typing import Any

from thresher.core.errors import DatasetError
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


def _outside(rel: Any) -> bool:
    """A manifest path that is not a plain relative path inside the dataset (never opened)."""
    if not isinstance(rel, str) or not rel or "\\" in rel or "\x00" in rel or "://" in rel:
        return True
    path = PurePosixPath(rel)
    return path.is_absolute() or ".." in path.parts


def vector_file_problem(store: Store, entry: dict[str, Any], dimension: int, dtype: str) -> str | None:
    """What is wrong with one vector file against its manifest entry (None: present, same size and
    sha256, shape (rows, dimension), the stated dtype)."""
    rel = entry.get("path")
    if _outside(rel):
        return "refused: the manifest names a vector path outside the dataset"
    assert isinstance(rel, str)  # _outside refuses anything else
    if store.size(rel) is None:
        return "missing (vector file)"
    h = hashlib.sha256()
    size = 0
    try:
        with store.open(rel) as f:
            head = f.read(4096)
            chunk = head
            while chunk:
                h.update(chunk)
                size += len(chunk)
                chunk = f.read(1 << 20)
        header = npy_header(head)
    except (OSError, ValueError, SyntaxError) as exc:
        return f"unreadable vector file: {exc}"
    shape = tuple(header["shape"])
    if header["descr"] != DTYPES.get(dtype) or header["fortran_order"]:
        return f"vectors are {header['descr']}, the manifest says {dtype}"
    if len(shape) != 2 or shape[1] != dimension:
        return f"vectors have shape {shape}, the manifest says dimension {dimension}"
    if shape[0] != entry.get("rows"):
        return f"{shape[0]} vectors, the manifest says {entry.get('rows')}"
    expected = header["data_offset"] + shape[0] * shape[1] * int(DTYPES[dtype][-1])
    if size != expected or size != entry.get("bytes"):
        return f"size {size} bytes, expected {entry.get('bytes')} (truncated or altered)"
    if h.hexdigest() != entry.get("sha256"):
        return "sha256 differs from the manifest (altered)"
    return None


def embedding_problems(store: Store, manifest: dict[str, Any]) -> list[tuple[str, str]]:
    """(path, problem) for every problem with the dataset's vector files (none when it has no embeddings)."""
    section = manifest.get("embeddings")
    if not section:
        return []
    shards = {s.get("path"): s for s in manifest.get("shards") or []}
    problems = []
    files = section.get("files") or []
    for entry in files:
        shard = shards.get(entry.get("shard"))
        if shard is None:
            problems.append((str(entry.get("path")), "vector file for a shard the manifest does not list"))
        elif entry.get("rows") != shard.get("records"):
            problems.append((str(entry.get("path")), f"{entry.get('rows')} vectors for {shard.get('records')} records"))
        elif (problem := vector_file_problem(store, entry, int(section["dimension"]), section["dtype"])) is not None:
            problems.append((str(entry.get("path")), problem))
    covered = {e.get("shard") for e in files}
    problems += [
        (str(path), "no vector file (the manifest lists embeddings for other shards)")
        for path in shards
        if path not in covered
    ]
    return problems


def embedding_section(manifest: dict[str, Any], where: str) -> dict[str, Any]:
    section = manifest.get("embeddings")
    if not section:
        raise DatasetError(f"{where}: the dataset has no embeddings (run thresher embed first)")
    return dict(section)


def load_vectors(store: Store, section: dict[str, Any], shard: dict[str, Any], verify: bool = True) -> Any:
    """The vectors of one shard (its manifest entry) as a NumPy array, a row per record in document
    order; `DatasetError` when the file is missing or does not match the manifest or the shard."""
    import numpy as np

    entry = next((f for f in section.get("files") or [] if f.get("shard") == shard["path"]), None)
    if entry is None:
        raise DatasetError(f"{store.locate(shard['path'])}: no vector file in the manifest")
    if entry.get("rows") != shard["records"]:
        raise DatasetError(
            f"{store.locate(entry.get('path'))}: {entry.get('rows')} vectors for {shard['records']} records"
        )
    if verify or _outside(entry.get("path")):
        problem = vector_file_problem(store, entry, int(section["dimension"]), section["dtype"])
        if problem is not None:
            raise DatasetError(f"{store.locate()}: {entry.get('path')}: {problem}")
    try:
        with store.open(entry["path"]) as f:
            vectors = np.load(f, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{store.locate(entry['path'])}: unreadable: {exc}") from exc
    if vectors.shape != (entry["rows"], section["dimension"]):
        raise DatasetError(
            f"{store.locate(entry['path'])}: vectors of shape {vectors.shape}, expected "
            f"{(entry['rows'], section['dimension'])}"
        )
    return vectors
