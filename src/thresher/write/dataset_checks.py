"""What `thresher verify` checks beyond each shard's digest: that the manifest is the whole truth.

- every shard path stays inside the dataset (no absolute path, no `..`): a tampered manifest
  cannot make verify open and hash files elsewhere;
- no entry is missing: entries are numbered shard 0..n-1 by their names, and their records and
  bytes add up to the manifest's totals;
- no shard or vector file is unlisted (a file named like one that the manifest does not name);
- with `records`, every record of every shard decodes as strict UTF-8 JSON (no lone surrogates,
  no NaN or Infinity) and their count matches the entry.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import IO, Any

from thresher.write.manifest import ShardProblem, _store, check_shard, load_manifest
from thresher.write.storage import Store

_VECTOR_FILE = re.compile(r"^(?:shard-\d{5}|data/train-\d{5}-of-\d{5})\.embeddings\.npy$")
_SHARD_FILE = re.compile(r"^(?:shard-\d{5}\.jsonl\.(?:gz|zst)|data/train-\d{5}-of-\d{5}\.parquet)$")


def unsafe_path(rel: Any) -> str | None:
    """Why a manifest path may not be opened (None: it is a plain path inside the dataset)."""
    if not isinstance(rel, str) or not rel:
        return "not a path"
    if "\\" in rel or "\x00" in rel or "://" in rel:
        return "not a plain relative path"
    path = PurePosixPath(rel)
    if path.is_absolute() or ".." in path.parts:
        return "outside the dataset"
    return None


def check_dataset(dataset: Any, records: bool = False) -> tuple[dict[str, Any], list[ShardProblem]]:
    """The manifest and every problem found (empty: the dataset is intact and complete)."""
    store = _store(dataset)
    manifest = load_manifest(store)
    problems: list[ShardProblem] = []
    shards = manifest.get("shards") or []
    fmt = manifest.get("format", "jsonl.gz")
    for entry in shards:
        rel = entry.get("path")
        why = unsafe_path(rel)
        if why is not None:
            problems.append(ShardProblem(str(rel), f"refused: the manifest names a path {why}"))
            continue
        problem = check_shard(store, entry)
        if problem is None and records:
            problem = strict_records(store, rel, fmt, entry.get("records"))
        if problem is not None:
            problems.append(problem)
    problems += completeness(manifest, shards, fmt)
    from thresher.embed.vectors import embedding_problems

    problems += [ShardProblem(path, problem) for path, problem in embedding_problems(store, manifest)]
    problems += unlisted_files(store, manifest)
    from thresher.write.signals import signals_problems

    problems += [ShardProblem(path, problem) for path, problem in signals_problems(store, manifest)]
    return manifest, problems


def unlisted_files(store: Store, manifest: dict[str, Any]) -> list[ShardProblem]:
    """Shard and vector files present that the manifest does not list: a reader going by the
    manifest would skip them, one globbing the folder would read them."""
    shards = {e.get("path") for e in manifest.get("shards") or [] if isinstance(e, dict)}
    section = manifest.get("embeddings") if isinstance(manifest.get("embeddings"), dict) else {}
    vectors = {e.get("path") for e in (section or {}).get("files") or [] if isinstance(e, dict)}
    problems = [ShardProblem(name, "a shard file the manifest does not list")
                for name in shard_files(store) if name not in shards]
    problems += [ShardProblem(name, "a vector file the manifest does not list")
                 for name in vector_files(store) if name not in vectors]
    return problems


def vector_files(store: Store) -> list[str]:
    try:
        names = store.files("shard-") + store.files("data/train-")
    except OSError:
        return []
    return [n for n in names if _VECTOR_FILE.match(n)]


def completeness(manifest: dict[str, Any], shards: list[dict[str, Any]], fmt: str) -> list[ShardProblem]:
    from thresher.write.formats import get_format

    problems = []
    try:
        names = get_format(fmt, 1)
        for i, entry in enumerate(shards):
            expected = names.shard_name(i, len(shards))
            if entry.get("path") != expected:
                problems.append(
                    ShardProblem(
                        str(entry.get("path")), f"entry {i} should be {expected}: an entry is missing or out of order"
                    )
                )
                break
    except Exception:  # noqa: BLE001 - an unknown format: the totals below still say
        pass
    for key in ("records", "bytes"):
        total = sum(int(e.get(key) or 0) for e in shards)
        if key in manifest and total != manifest[key]:
            problems.append(
                ShardProblem(
                    "manifest.json",
                    f"shard {key} add up to {total}, the manifest says {manifest[key]}: an entry is missing",
                )
            )
    return problems


def shard_files(store: Store) -> list[str]:
    try:
        names = store.files("shard-") + store.files("data/train-")
    except OSError:
        return []
    return [n for n in names if _SHARD_FILE.match(n)]


def _strict_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def strict_records(store: Store, rel: str, fmt: str, expected: Any) -> ShardProblem | None:
    """Every record of a JSONL shard as strict UTF-8 JSON, counted (Parquet: counted)."""
    n = 0
    try:
        if fmt == "parquet":
            from thresher.write.manifest import _read_records

            n = sum(1 for _ in _read_records(store, rel, fmt))
        else:
            with store.open(rel) as raw:
                for line_no, line in enumerate(_lines(raw, fmt), 1):
                    try:
                        value = json.loads(line.decode("utf-8"), parse_constant=_strict_constant)
                    except (UnicodeDecodeError, ValueError) as exc:
                        return ShardProblem(rel, f"record {line_no} is not strict UTF-8 JSON: {exc}")
                    if not isinstance(value, dict):
                        return ShardProblem(rel, f"record {line_no} is not a JSON object")
                    n += 1
    except (OSError, EOFError, ValueError) as exc:
        return ShardProblem(rel, f"unreadable: {exc}")
    if n != expected:
        return ShardProblem(rel, f"{n} records, manifest says {expected}")
    return None


def _lines(raw: IO[bytes], fmt: str) -> Iterator[bytes]:
    if fmt == "jsonl.zst":
        import io

        import zstandard

        yield from io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw))
        return
    import gzip

    with gzip.open(raw, "rb") as f:
        yield from f
