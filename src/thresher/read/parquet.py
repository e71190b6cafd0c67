"""Parquet input (the `parquet` extra, pyarrow), streamed in batches row group by row group.

Columns are mapped by the same input settings as JSONL fields: `url_field`, `html_field`,
`text_field`, `id_field` (a caller-supplied id, kept as `metadata.source_id`); a `title` column
becomes the title; every other column is kept in `metadata`. Documents are what the JSONL reader
makes of the same record (same text, metadata), located by row: `source = {"file", "row"}`, and
named by that place (`record_id`).

Problems are located, counted and never stop the run: a file that is not Parquet, or lacks both
content columns, or has a content column of the wrong type, is one `Malformed` for the file (no row
of it can be read); a row whose URL or content is null is a `Malformed` for that row.

A partition with a byte range (`start`, `end`) reads the row groups [start, end): a planner may split a
large file by row group.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
from collections.abc import Iterator
from typing import Any

from thresher.core.document import Document, Malformed
from thresher.read.base import Event, Partition, ReadItem, make_ordinal
from thresher.read.config import InputConfig
from thresher.read.fields import document_from_fields
from thresher.read.paths import is_url, open_input

BATCH_ROWS = 1024


def _import_pyarrow() -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("Parquet input needs the parquet extra: pip install 'thresher[parquet]'") from exc
    return pq


def _json_value(value: Any) -> Any:
    """A metadata value in JSON form (what the JSONL reader would have held)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(x, tuple) and len(x) == 2 for x in value):  # an Arrow map
            return {str(k): _json_value(v) for k, v in value}
        return [_json_value(v) for v in value]
    return str(value)


def _kind(arrow_type: Any) -> str:
    import pyarrow as pa

    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return "string"
    if pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type):
        return "binary"
    if pa.types.is_null(arrow_type):
        return "null"
    if pa.types.is_dictionary(arrow_type):
        return _kind(arrow_type.value_type)
    return str(arrow_type)


def _check_schema(schema: Any, path: str, config: InputConfig) -> Malformed | None:
    """Whether the file's columns can give documents at all (one Malformed for the file if not)."""
    names = list(schema.names)
    kinds = {name: _kind(schema.field(name).type) for name in names}
    html_col, text_col, url_col = config.html_field, config.text_field, config.url_field
    if html_col not in kinds and text_col not in kinds:
        return Malformed(
            "missing_column", path, f"neither {html_col!r} nor {text_col!r} column (columns: {', '.join(names[:20])})"
        )
    if url_col not in kinds and config.require_url:
        return Malformed("missing_column", path, f"no {url_col!r} column (columns: {', '.join(names[:20])})")
    expected = {url_col: ("string", "null"), text_col: ("string", "null"), html_col: ("string", "binary", "null")}
    for col, ok in expected.items():
        if col in kinds and kinds[col] not in ok:
            return Malformed("wrong_type", path, f"column {col!r} is {kinds[col]}, expected string")
    return None


def read_parquet(partition: Partition, config: InputConfig) -> Iterator[ReadItem]:
    """Every row of a Parquet partition as a Document, or a located Malformed."""
    pq = _import_pyarrow()
    path = partition.path
    try:
        pf = pq.ParquetFile(path if not is_url(path) else open_input(path))
    except FileNotFoundError as exc:
        yield Malformed("unreadable_file", path, exc.strerror or "no such file")
        return
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a file that is not Parquet
        yield Malformed("unreadable_file", path, f"not a readable Parquet file: {exc}")
        return
    schema = pf.schema_arrow
    problem = _check_schema(schema, path, config)
    if problem is not None:
        yield problem
        return
    if pf.metadata.num_rows == 0:
        yield Event("empty_file", path, "no rows")
        return
    groups = list(range(pf.num_row_groups))
    if partition.end is not None or partition.start:
        groups = groups[partition.start:partition.end]
    if not groups:
        return
    row = sum(pf.metadata.row_group(i).num_rows for i in range(groups[0]))
    try:
        for batch in pf.iter_batches(batch_size=BATCH_ROWS, row_groups=groups, use_threads=False):
            columns = batch.schema.names
            values = {name: batch.column(i).to_pylist() for i, name in enumerate(columns)}
            for j in range(batch.num_rows):
                yield _row_document({name: values[name][j] for name in columns}, path, row, partition.index, config)
                row += 1
    except Exception as exc:  # noqa: BLE001 - a damaged row group: report it, keep what was read
        yield Malformed("unreadable_row_group", f"{path}#row{row}", str(exc)[:200])


def _row_document(record: dict[str, Any], path: str, row: int, partition_index: int, config: InputConfig) -> ReadItem:
    item = document_from_fields(
        record, f"{path}#row{row}", config, source={"file": path, "row": row}, metadata_value=_json_value
    )
    if isinstance(item, Document):
        item.ordinal = make_ordinal(partition_index, row)
    return item
