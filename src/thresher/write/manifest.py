"""The manifest: the dataset's table of contents, written last.

`manifest.json` lists every shard with its record count, byte size and sha256, the resolved config
and its hash, and the versions that produced it; `complete: true` is only ever written by a finished
build. `read_shards` reads through the manifest (never by globbing), so a missing, truncated or
altered shard raises instead of silently yielding fewer records; `verify_dataset` checks without
reading records. A dataset may be a local folder or an fsspec URL (`s3://bucket/prefix`): shards are
then streamed through sha256 (`thresher.write.storage`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from thresher.core.errors import DatasetError
from thresher.version import __version__
from thresher.write.storage import Store, open_store

MANIFEST = "manifest.json"
FORMAT_VERSION = 1


def build_manifest(
    *,
    fmt: str,
    shards: Sequence[dict[str, Any]],
    config_hash: str,
    config: dict[str, Any],
    extractor: dict[str, Any],
    inputs: Sequence[dict[str, Any]],
    stats: dict[str, Any],
) -> dict[str, Any]:
    """The manifest of a finished build (the schema `load_manifest` reads): `shards` are the
    entries `{path, records, bytes, sha256}` in order, `stats` the totals of `stats.json`."""
    return {
        "format_version": FORMAT_VERSION,
        "complete": True,
        "thresher_version": __version__,
        "format": fmt,
        "records": sum(s["records"] for s in shards),
        "bytes": sum(s["bytes"] for s in shards),
        "shards": list(shards),
        "config_hash": config_hash,
        "config": config,
        "extractor": extractor,
        "inputs": list(inputs),
        "stats": {k: stats[k] for k in ("seen", "kept", "dropped", "malformed")},
    }


def stream_digest(f: IO[bytes]) -> tuple[int, str]:
    h = hashlib.sha256()
    size = 0
    while chunk := f.read(1 << 20):
        h.update(chunk)
        size += len(chunk)
    return size, h.hexdigest()


def file_digest(path: Path) -> tuple[int, str]:
    with open(path, "rb") as f:
        return stream_digest(f)


def _store(dataset: str | Path | Store) -> Store:
    return dataset if hasattr(dataset, "locate") else open_store(dataset)  # type: ignore[return-value]


def load_manifest(dataset: str | Path | Store) -> dict[str, Any]:
    store = _store(dataset)
    path = store.locate(MANIFEST)
    try:
        with store.open(MANIFEST) as f:
            manifest: dict[str, Any] = json.loads(f.read().decode("utf-8"))
    except FileNotFoundError as exc:
        raise DatasetError(f"{path}: no manifest (not a thresher dataset, or the build did not finish)") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: manifest is not valid JSON: {exc}") from exc
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read the manifest: {exc}") from exc
    defect = manifest_defect(manifest)
    if defect is not None:
        raise DatasetError(f"{path}: {defect}")
    return manifest


_SHA256 = re.compile(r"[0-9a-f]{64}")


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def manifest_defect(manifest: Any) -> str | None:
    """What makes a parsed `manifest.json` unusable (None: it has the schema `build_manifest`
    writes, as far as the readers rely on it). Paths are checked for safety by `verify`."""
    if not isinstance(manifest, dict):
        return f"not a manifest: a JSON {type(manifest).__name__}, not an object"
    if manifest.get("complete") is not True:
        return "the manifest does not mark the dataset complete"
    for key, kind in (("format_version", int), ("thresher_version", str), ("format", str), ("config_hash", str),
                      ("shards", list)):
        if not isinstance(manifest.get(key), kind) or isinstance(manifest.get(key), bool):
            return f"{key} is missing or not a {kind.__name__} (a damaged manifest)"
    for key in ("records", "bytes"):
        if not _count(manifest.get(key)):
            return f"{key} is missing or not a count (a damaged manifest)"
    for key, shape in (("config", dict), ("stats", dict), ("inputs", list), ("embeddings", dict)):
        if key in manifest and not isinstance(manifest[key], shape):
            return f"{key} is not a JSON {'object' if shape is dict else 'array'} (a damaged manifest)"
    for i, entry in enumerate(manifest["shards"]):
        if not isinstance(entry, dict):
            return f"shards[{i}] is not an object (a damaged manifest)"
        if not isinstance(entry.get("path"), str):
            return f"shards[{i}].path is missing or not a string (a damaged manifest)"
        for key in ("records", "bytes"):
            if not _count(entry.get(key)):
                return f"shards[{i}].{key} is missing or not a count (a damaged manifest)"
        if not isinstance(entry.get("sha256"), str) or not _SHA256.fullmatch(entry["sha256"]):
            return f"shards[{i}].sha256 is not a SHA-256 digest (a damaged manifest)"
    return None


@dataclass(frozen=True, slots=True)
class ShardProblem:
    shard: str
    problem: str  # missing | size | checksum | records

    def describe(self) -> str:
        return f"{self.shard}: {self.problem}"


def check_shard(root: str | Path | Store, entry: dict[str, Any]) -> ShardProblem | None:
    store = _store(root)
    if store.size(entry["path"]) is None:
        return ShardProblem(entry["path"], "missing")
    try:
        with store.open(entry["path"]) as f:
            size, digest = stream_digest(f)
    except FileNotFoundError:
        return ShardProblem(entry["path"], "missing")
    if size != entry["bytes"]:
        return ShardProblem(entry["path"], f"size {size} bytes, manifest says {entry['bytes']} (truncated or altered)")
    if digest != entry["sha256"]:
        return ShardProblem(entry["path"], "sha256 differs from the manifest (altered)")
    return None


def verify_dataset(dataset: str | Path, count_records: bool = False) -> list[ShardProblem]:
    """Every problem found in a dataset (a folder or a URL) against its manifest (empty list: the
    dataset is intact)."""
    root = _store(dataset)
    manifest = load_manifest(root)
    problems = []
    for entry in manifest["shards"]:
        problem = check_shard(root, entry)
        if problem is None and count_records:
            n = sum(1 for _ in _read_records(root, entry["path"], manifest.get("format", "jsonl.gz")))
            if n != entry["records"]:
                problem = ShardProblem(entry["path"], f"{n} records, manifest says {entry['records']}")
        if problem is not None:
            problems.append(problem)
    return problems


def _read_records(store: Store, rel: str, fmt: str) -> Iterator[dict[str, Any]]:
    """The records of one shard, read by its output format (`thresher.write.formats`)."""
    from thresher.write.formats import get_format

    with store.open(rel) as raw:
        yield from get_format(fmt).read(raw)


def read_shard(dataset: str | Path, entry: dict[str, Any], fmt: str, verify: bool = True) -> Iterator[dict[str, Any]]:
    """The records of one shard of a dataset (`entry`: its line in the manifest's `shards`, `fmt` the
    manifest's `format`), checked as `read_shards` checks each: `DatasetError` for any problem."""
    root = _store(dataset)
    if verify:
        problem = check_shard(root, entry)
        if problem is not None:
            raise DatasetError(f"{root.locate()}: {problem.describe()}")
    n = 0
    try:
        for record in _read_records(root, entry["path"], fmt):
            n += 1
            yield record
    except (OSError, EOFError, ValueError) as exc:
        raise DatasetError(f"{root.locate(entry['path'])}: unreadable: {exc}") from exc
    if n != entry["records"]:
        raise DatasetError(f"{root.locate(entry['path'])}: {n} records, manifest says {entry['records']}")


def read_shards(dataset: str | Path, verify: bool = True, with_embeddings: bool = False) -> Iterator[Any]:
    """Every record of a dataset (a folder or a URL), shard by shard, in order. Each shard is checked against the
    manifest before its records are yielded; any problem raises `DatasetError`. `with_embeddings`
    yields (record, vector) pairs from the vector files `thresher embed` wrote (`thresher.embed`)."""
    root = _store(dataset)
    manifest = load_manifest(root)
    fmt = manifest.get("format", "jsonl.gz")
    if with_embeddings:
        from thresher.embed.vectors import embedding_section, load_vectors

        section = embedding_section(manifest, root.locate())
    for entry in manifest["shards"]:
        if verify:
            problem = check_shard(root, entry)
            if problem is not None:
                raise DatasetError(f"{root.locate()}: {problem.describe()}")
        vectors = load_vectors(root, section, entry, verify) if with_embeddings else None
        n = 0
        where = root.locate(entry["path"])
        try:
            for record in _read_records(root, entry["path"], fmt):
                n += 1
                yield record if vectors is None else (record, vectors[n - 1])
        except (OSError, EOFError, ValueError) as exc:  # JSONDecodeError and zstd/Parquet errors are ValueErrors
            raise DatasetError(f"{where}: unreadable: {exc}") from exc
        if n != entry["records"]:
            raise DatasetError(f"{where}: {n} records, manifest says {entry['records']}")
