"""The signals table (`build --signals`): one Parquet file per input partition under `signals/`, one
row per document the per-document chain judged, with every value the stages measured, the corpus
stages' signatures, the build's decision and the text. The schema is in docs/signals.md; this
module owns it: the layout (which annotation columns, of which type), the row-to-column conversion,
the writer, and what `thresher verify` checks of the files.

One schema for every part file of a build: the annotation columns are the union, over all
partitions, of the keys the documents carried (`table_layout`), each typed from the JSON types its
values took (ints only: int64; ints and floats: float64; strings: string; booleans: bool; anything
else, or a mix: a JSON string). Every annotation is also in the `annotations` JSON column exactly
as the output record holds it, so nothing depends on the typed copy.

pyarrow is imported only when a file is written or read (the `parquet` extra).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import IO, Any

SIGNALS_DIR = "signals"
SCHEMA_VERSION = 2
ROW_GROUP_ROWS = 4096
ROW_GROUP_TEXT_CHARS = 32 << 20  # bounds a row group's memory on long documents

# (column, Arrow type) of the columns every signals file has, before the annotation columns
HEAD_COLUMNS: tuple[tuple[str, str], ...] = (
    ("ordinal", "int64"),
    ("id", "string"),
    ("url", "string"),
    ("source_file", "string"),
    ("source_offset", "int64"),
    ("status", "string"),
    ("drop_stage", "string"),
    ("drop_reason", "string"),
    ("drop_value", "float64"),
    ("drop_limit", "float64"),
    ("drop", "json"),
    ("failures", "json"),
    ("dropped_by", "string"),
    ("shard", "int64"),
    ("row", "int64"),
    ("dedup_cluster", "string"),
    ("dedup_duplicates", "int64"),
    ("edited", "bool"),
    ("text_chars", "int64"),
    ("text_bytes", "int64"),
    ("words", "int64"),
    ("title", "string"),
    ("fetched_at", "string"),
)
# after the annotation and signature columns: the record's free-form parts (JSON) and the text
TAIL_COLUMNS: tuple[tuple[str, str], ...] = (
    ("measured", "json"),
    ("marks", "json"),
    ("annotations", "json"),
    ("source", "json"),
    ("metadata", "json"),
    ("text", "string"),
)
RESERVED = frozenset(name for name, _ in HEAD_COLUMNS + TAIL_COLUMNS)


def part_path(p: int) -> str:
    """The signals file of input partition p, relative to the dataset folder."""
    return f"{SIGNALS_DIR}/part-{p:06d}.parquet"


def column_name(key: str) -> str:
    """An annotation key's column, as in Parquet shards: `.` written `_` (`lang.code` -> `lang_code`)."""
    return key.replace(".", "_")


def column_type(kinds: Iterable[str]) -> str:
    """The column type of an annotation whose values took the JSON types `kinds`."""
    found = set(kinds)
    if found == {"bool"}:
        return "bool"
    if found == {"int"}:
        return "int64"
    if found and found <= {"int", "float"}:
        return "float64"
    if found == {"str"}:
        return "string"
    return "json"


def table_layout(parts: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """One layout for every part file from the partitions' column files (`run.signal_rows`): each
    annotation key with its column and type, each signature with its column, sorted by key. A key
    whose column would clash with another column is left out of the typed columns (it is still in
    `annotations`)."""
    kinds: dict[str, set[str]] = {}
    signals: set[str] = set()
    settings: dict[str, str] = {}
    decided: dict[str, str] = {}
    for part in parts:
        for key, seen in (part.get("annotations") or {}).items():
            kinds.setdefault(key, set()).update(seen)
        signals.update(part.get("signals") or ())
        settings.update(part.get("settings") or {})  # one build: every partition has the same
        decided.update(part.get("decided") or {})
    taken = set(RESERVED)
    annotations = []
    for key in sorted(kinds):
        column = column_name(key)
        if column not in taken:
            taken.add(column)
            annotations.append([key, column, column_type(kinds[key])])
    signatures = []
    for name in sorted(signals):
        column = column_name(name)
        if column not in taken:
            taken.add(column)
            signatures.append([name, column])
    return {"schema_version": SCHEMA_VERSION, "annotations": annotations, "signals": signatures,
            "settings": dict(sorted(settings.items())), "decided": dict(sorted(decided.items()))}


def _pyarrow() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet  # noqa: F401
    except ImportError as exc:  # pragma: no cover - the build's preflight names the extra first
        raise ImportError("the signals table needs the parquet extra: pip install 'thresher[parquet]'") from exc
    return pa


def _arrow_type(pa: Any, kind: str) -> Any:
    return {"int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_(), "binary": pa.binary()}.get(
        kind, pa.string()
    )


def schema(layout: Mapping[str, Any]) -> Any:
    """The Arrow schema of a layout, with the annotation keys and signature names in its metadata."""
    pa = _pyarrow()
    columns = list(HEAD_COLUMNS)
    columns += [(column, kind) for _, column, kind in layout["annotations"]]
    columns += [(column, "binary") for _, column in layout["signals"]]
    columns += TAIL_COLUMNS
    fields = [pa.field(name, _arrow_type(pa, kind), nullable=name not in ("ordinal", "id", "status"))
              for name, kind in columns]
    metadata = {
        "thresher.signals.schema_version": str(SCHEMA_VERSION),
        "thresher.annotation_keys": json.dumps({c: k for k, c, _ in layout["annotations"]}, sort_keys=True),
        "thresher.signal_keys": json.dumps({c: k for k, c in layout["signals"]}, sort_keys=True),
        # per corpus stage, the settings its signals were computed under (`thresher.read.signals`)
        "thresher.signal_settings": json.dumps(layout.get("settings") or {}, sort_keys=True),
        # per rule set, what its decisions depend on besides the measurements (`thresher.replay_chain`)
        "thresher.decided_with": json.dumps(layout.get("decided") or {}, sort_keys=True),
        "thresher.json_columns": json.dumps(
            sorted(name for name, kind in columns if kind == "json")),
    }
    return pa.schema(fields, metadata=metadata)


# one encoder, built once: `json.dumps` with arguments builds a new one per call, most of its cost on
# small objects; the output is `dumps_line`'s (key order kept, compact, non-ASCII kept)
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
dumps = _ENCODER.encode


def _json(value: Any) -> str | None:
    """A free-form value as the output record writes it (None for an empty one)."""
    if not value and value is not False and value != 0:
        return None
    return dumps(value)


def _number(value: Any) -> float | None:
    return float(value) if type(value) in (int, float) else None


class SignalsWriter:
    """Writes rows (dicts of the head columns, `annotations`, `source`, `metadata` and `text`;
    `signals` by name as bytes; `measured` and `marks` as JSON text) into one Parquet file, a row
    group at a time (memory: one row group)."""

    def __init__(self, layout: Mapping[str, Any], out: IO[bytes]) -> None:
        pa = _pyarrow()
        import pyarrow.parquet as pq

        self.pa = pa
        self.schema = schema(layout)
        self.typed = [(key, column, kind) for key, column, kind in layout["annotations"]]
        self.signatures = [(name, column) for name, column in layout["signals"]]
        self.names = self.schema.names
        # dictionaries and min/max statistics only where they pay: short, repeated strings (status,
        # stage, reason, file, language) and numbers; never the text, ids, URLs or JSON columns,
        # whose values rarely repeat (a dictionary attempt would hash every one of them)
        plain = {name for name, kind in [*HEAD_COLUMNS, *TAIL_COLUMNS] if kind == "json"}
        plain |= {"text", "id", "url", "title"}
        plain |= {col for _, col in self.signatures} | {col for _, col, kind in self.typed if kind == "json"}
        dictionary = [f.name for f in self.schema if pa.types.is_string(f.type) and f.name not in plain]
        statistics = [f.name for f in self.schema if f.name not in plain]
        self.writer = pq.ParquetWriter(out, self.schema, compression="zstd", compression_level=3,
                                       use_dictionary=dictionary, write_statistics=statistics)
        self.rows = 0
        self._batch: list[dict[str, Any]] = []
        self._chars = 0

    def add(self, row: dict[str, Any]) -> None:
        self._batch.append(row)
        self._chars += len(row["text"] or "")
        if len(self._batch) >= ROW_GROUP_ROWS or self._chars >= ROW_GROUP_TEXT_CHARS:
            self._flush()

    def _flush(self) -> None:
        if not self._batch:
            return
        pa = self.pa
        columns = self._columns(self._batch)
        arrays = []
        for field in self.schema:
            values = columns[field.name]
            if pa.types.is_floating(field.type) and None in values:
                # a float list with nulls converts ~20x slower than one without and a mask (pyarrow 26:
                # 1.1 vs 0.05 us a value, measured), and the table has dozens of float columns
                mask = pa.array([v is None for v in values], pa.bool_())
                arrays.append(pa.array([0.0 if v is None else v for v in values], field.type, mask=mask))
            else:
                arrays.append(pa.array(values, field.type))
        table = pa.Table.from_arrays(arrays, schema=self.schema)
        self.writer.write_table(table, row_group_size=len(self._batch))
        self.rows += len(self._batch)
        self._batch, self._chars = [], 0

    def _columns(self, rows: Sequence[dict[str, Any]]) -> dict[str, list[Any]]:
        """Each column's values (comprehensions: a column costs one pass over the rows); a float
        column may hold ints, which pyarrow converts."""
        cols: dict[str, list[Any]] = {name: [row.get(name) for row in rows] for name, _ in HEAD_COLUMNS}
        annotations = [row["annotations"] for row in rows]
        for key, col, kind in self.typed:
            values = [a.get(key) for a in annotations]
            cols[col] = [None if v is None else dumps(v) for v in values] if kind == "json" else values
        signatures = [row["signals"] for row in rows]
        for name, col in self.signatures:
            cols[col] = [s.get(name) for s in signatures]
        cols["measured"] = [row.get("measured") for row in rows]  # JSON already (`run.signal_rows`)
        cols["marks"] = [row.get("marks") for row in rows]
        cols["annotations"] = [_json(a) for a in annotations]
        cols["source"] = [_json(row["source"]) for row in rows]
        cols["metadata"] = [_json(row["metadata"]) for row in rows]
        cols["text"] = [row["text"] for row in rows]
        return cols

    def close(self) -> int:
        self._flush()
        if self.rows == 0:
            self.writer.write_table(self.pa.Table.from_pylist([], schema=self.schema))
        self.writer.close()
        return self.rows


def drop_columns(drop: Mapping[str, Any] | None, failures: Any, by: str) -> dict[str, Any]:
    """The head columns a drop record fills; `by`: `chain` (a document stage) or `corpus`."""
    if drop is None:
        return {}
    return {
        "dropped_by": by,
        "drop_stage": drop.get("stage"),
        "drop_reason": drop.get("reason"),
        "drop_value": _number(drop.get("value")),
        "drop_limit": _number(drop.get("limit")),
        "drop": dumps(drop),
        "failures": None if not failures else dumps(failures),
    }


def signals_problems(store: Any, manifest: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(path, problem) for each signals file that is missing, altered or unlisted (none when the
    dataset has no signals table)."""
    from thresher.write.manifest import check_shard

    section = manifest.get("signals")
    listed = set()
    problems = []
    for entry in (section or {}).get("files") or []:
        rel = entry.get("path")
        if not isinstance(rel, str) or not rel.startswith(f"{SIGNALS_DIR}/") or ".." in rel.split("/"):
            problems.append((str(rel), "refused: not a path under signals/"))
            continue
        listed.add(rel)
        problem = check_shard(store, entry)
        if problem is not None:
            problems.append((rel, problem.problem))
    try:
        present = store.files(f"{SIGNALS_DIR}/part-")
    except OSError:
        present = []
    problems += [(name, "a signals file the manifest does not list") for name in present if name not in listed]
    return problems


def iter_signal_files(store: Any, manifest: Mapping[str, Any]) -> Iterator[str]:
    """The signals files a dataset's manifest lists, in partition order."""
    section = manifest.get("signals")
    if not section:
        from thresher.core.errors import DatasetError

        raise DatasetError(f"{store.locate()}: the dataset has no signals table (build it with --signals)")
    for entry in section.get("files") or []:
        yield entry["path"]
