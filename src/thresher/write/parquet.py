"""Parquet shards (the `parquet` extra, pyarrow): zstd-compressed, one fixed schema for every shard of
every run, and the Hugging Face dataset layout (`data/train-00000-of-00004.parquet`).

Schema (version 1), in this order:

| column | type | from |
|---|---|---|
| `id` | string, not null | `Document.id` |
| `url`, `title`, `text` | string | the document |
| `fetched_at` | string | crawl time as the input gave it (ISO 8601 where the input was) |
| typed annotations | string / int64 / float64 / bool | one column per declared annotation key, `.` as `_` |
| `annotations` | string (JSON) | every other annotation key, and a declared key whose value is not of its type |
| `source` | string (JSON) | provenance: file, offset/row, record id, ... |
| `metadata` | string (JSON) | input fields carried along |

A typed annotation's column is its key with `.` written as `_` (`lang.code` → `lang_code`).

Typed columns are declared, not inferred: shards are assembled independently, and a column inferred
from one shard's data could be missing or typed differently in the next, which breaks readers that
open the dataset as one table. JSON strings keep the schema fixed whatever keys the documents carry.

The bytes of a shard depend only on its records (pyarrow writes no clock or host into the file), so
a rerun with the same versions gives byte-identical shards.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from thresher.write.atomic import atomic_open
from thresher.write.hub import HubConfig, front_matter
from thresher.write.pieces import iter_piece_records

SCHEMA_VERSION = "1"
CORE_COLUMNS = ("id", "url", "title", "text", "fetched_at")
# Annotation keys with one meaning and type whatever the configuration (language id, dedup outcome).
DEFAULT_ANNOTATION_TYPES: Mapping[str, str] = {
    "lang.code": "string",
    "lang.label": "string",
    "lang.score": "float64",
    "dedup.duplicates": "int64",
}
_PY_TYPES: Mapping[str, tuple[type, ...]] = {
    "string": (str,),
    "int64": (int,),
    "float64": (float, int),
    "bool": (bool,),
}


def _pyarrow() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("Parquet output needs the parquet extra: pip install 'thresher[parquet]'") from exc
    return pa


def column_name(annotation_key: str) -> str:
    return annotation_key.replace(".", "_")


def hf_shard_path(index: int, total: int, split: str = "train") -> str:
    """The Hugging Face layout name of shard `index` of `total`: `data/train-00000-of-00004.parquet`."""
    if not 0 <= index < total:
        raise ValueError(f"shard index {index} outside 0..{total - 1}")
    return f"data/{split}-{index:05d}-of-{total:05d}.parquet"


def hf_card_config(split: str = "train") -> str:
    """The YAML front matter that tells the Hugging Face hub (and `datasets`) where the shards are."""
    return front_matter([HubConfig("default", (f"data/{split}-*.parquet",), split)])


def _json(value: Any) -> str | None:
    if not value:
        return None
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


class ParquetFormat:
    """A `ShardFormat` (see `thresher.write.formats`): assembles JSONL pieces into one Parquet shard."""

    suffix = ".parquet"

    def __init__(
        self,
        annotation_types: Mapping[str, str] | None = None,
        row_group_rows: int = 10_000,
        compression_level: int = 3,
        row_group_bytes: int = 64 * 1024 * 1024,
    ) -> None:
        self.annotation_types = dict(DEFAULT_ANNOTATION_TYPES if annotation_types is None else annotation_types)
        for key, kind in self.annotation_types.items():
            if kind not in _PY_TYPES:
                raise ValueError(f"annotation {key!r}: type {kind!r} is not one of {', '.join(_PY_TYPES)}")
            if column_name(key) in CORE_COLUMNS + ("annotations", "source", "metadata"):
                raise ValueError(f"annotation {key!r} would overwrite the column {column_name(key)!r}")
        if row_group_rows < 1:
            raise ValueError("row_group_rows must be at least 1")
        self.row_group_rows = row_group_rows
        self.row_group_bytes = row_group_bytes  # bounds memory: a row group is built in memory
        self.compression_level = compression_level

    def schema(self) -> Any:
        pa = _pyarrow()
        fields = [pa.field("id", pa.string(), nullable=False)]
        fields += [pa.field(name, pa.string()) for name in CORE_COLUMNS[1:]]
        fields += [pa.field(column_name(k), getattr(pa, t)()) for k, t in self.annotation_types.items()]
        fields += [pa.field(name, pa.string()) for name in ("annotations", "source", "metadata")]
        keys = json.dumps({column_name(k): k for k in self.annotation_types}, sort_keys=True)
        return pa.schema(fields, metadata={"thresher.schema_version": SCHEMA_VERSION, "thresher.annotation_keys": keys})

    def _columns(self, records: Sequence[Mapping[str, Any]]) -> dict[str, list[Any]]:
        cols: dict[str, list[Any]] = {name: [] for name in self.schema().names}
        typed = self.annotation_types
        for rec in records:
            for name in CORE_COLUMNS:
                cols[name].append(rec.get(name))
            annotations = dict(rec.get("annotations") or {})
            for key, kind in typed.items():
                value = annotations.get(key)
                ok = value is not None and isinstance(value, _PY_TYPES[kind])
                if kind in ("int64", "float64") and isinstance(value, bool):
                    ok = False
                if ok:
                    annotations.pop(key)
                    cols[column_name(key)].append(float(value) if kind == "float64" and value is not None else value)
                else:
                    cols[column_name(key)].append(None)
            cols["annotations"].append(_json(annotations))
            cols["source"].append(_json(rec.get("source")))
            cols["metadata"].append(_json(rec.get("metadata")))
        return cols

    def write_records(self, records: Iterable[Mapping[str, Any]], dest: str | Path) -> int:
        """Write records (the `Document.to_record()` form) to one Parquet file, atomically."""
        with atomic_open(dest, "wb") as raw:
            return self.write_stream(records, raw)

    def write_stream(self, records: Iterable[Mapping[str, Any]], out: IO[bytes]) -> int:
        """Write records as one Parquet file into an open binary stream (left open)."""
        pa = _pyarrow()
        import pyarrow.parquet as pq

        schema = self.schema()
        n = 0
        writer = pq.ParquetWriter(
            out,
            schema,
            compression="zstd",
            compression_level=self.compression_level,
            use_dictionary=[c for k, c in (("lang.code", "lang_code"), ("lang.label", "lang_label"))
                            if k in self.annotation_types] or False,
            write_statistics=True,
        )
        try:
            for batch in _batches(records, self.row_group_rows, self.row_group_bytes):
                table = pa.Table.from_pydict(self._columns(batch), schema=schema)
                writer.write_table(table, row_group_size=len(batch))
                n += len(batch)
            if n == 0:
                writer.write_table(pa.Table.from_pylist([], schema=schema))
        finally:
            writer.close()
        return n

    def assemble(self, pieces: Sequence[Path], dest: Path) -> int:
        return self.write_records(iter_piece_records(pieces), dest)

    def write_shard(self, pieces: Sequence[Path], out: IO[bytes]) -> int:
        return self.write_stream(iter_piece_records(pieces), out)


def _batches(records: Iterable[Mapping[str, Any]], rows: int, text_bytes: int) -> Iterator[list[Mapping[str, Any]]]:
    """Row groups of at most `rows` records and about `text_bytes` of text (the last record may pass
    it): one group is held in memory while it is written."""
    batch: list[Mapping[str, Any]] = []
    size = 0
    for rec in records:
        batch.append(rec)
        size += len(rec.get("text") or "")
        if len(batch) >= rows or size >= text_bytes:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def read_records(path: str | Path) -> Iterator[dict[str, Any]]:
    """The records of a shard written by `ParquetFormat`, back in `Document.to_record()` form."""
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(path)
    names = pf.schema_arrow.names
    typed = [n for n in names if n not in CORE_COLUMNS + ("annotations", "source", "metadata")]
    for batch in pf.iter_batches(batch_size=1024):
        for row in batch.to_pylist():
            rec: dict[str, Any] = {"id": row["id"], "url": row["url"], "title": row["title"], "text": row["text"]}
            if row.get("fetched_at") is not None:
                rec["fetched_at"] = row["fetched_at"]
            if row.get("source"):
                rec["source"] = json.loads(row["source"])
            if row.get("metadata"):
                rec["metadata"] = json.loads(row["metadata"])
            annotations = json.loads(row["annotations"]) if row.get("annotations") else {}
            for name in typed:
                if row.get(name) is not None:
                    annotations[_key_of(name, pf)] = row[name]
            if annotations:
                rec["annotations"] = annotations
            yield rec


def _key_of(column: str, pf: Any) -> str:
    meta = pf.schema_arrow.metadata or {}
    keys: dict[str, str] = json.loads(meta.get(b"thresher.annotation_keys", b"{}"))
    return keys.get(column, column.replace("_", ".", 1))


class ParquetShards:
    """The `parquet` output format: shards in the Hugging Face layout (`data/train-00000-of-000NN.parquet`),
    named by the card's front matter (`thresher.write.hub`) so `datasets` and the hub find them."""

    name = "parquet"
    suffix = ".parquet"

    def __init__(self, compression_level: int = 6) -> None:  # parquet shards always use zstd 3
        self.inner = ParquetFormat()

    def shard_name(self, index: int, total: int) -> str:
        return hf_shard_path(index, total)

    def assemble(self, pieces: Sequence[Path], dest: Path) -> int:
        return self.inner.assemble(pieces, dest)

    def write_shard(self, pieces: Sequence[Path], out: IO[bytes]) -> int:
        return self.inner.write_shard(pieces, out)

    def read(self, raw: Any) -> Iterator[dict[str, Any]]:
        return read_records(raw)

    def card(self, text: str) -> str:
        return text
