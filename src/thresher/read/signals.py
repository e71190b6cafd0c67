"""The signals table as input (`thresher replay`, input kind `signals`): each row of a part file
`signals/part-NNNNNN.parquet` back as the `Document` the first build's per-document chain left
(docs/signals.md), with what that chain recorded of it in `Document.derived[RECORDED]`: the drop
and failures of a document stage (a corpus stage's drop is left out: the document passed the
chain), each rule set's exact measurements and each stage's annotation mark. The replayed chain
(`thresher.replay_chain`) decides again from these.

The id, ordinal, URL, title, text, fetch date, provenance, metadata and annotations (key order
kept) are the row's, so everything after the chain (dedup's "first", the output order, the shards)
is what a build of the original input makes of the same documents. Read a row group at a time,
only the columns the Document needs (never the typed annotation columns). A row that passed the
first build's chain also carries the corpus stages' signals, with the settings they were computed
under, in `Document.derived[RECORDED_SIGNALS]`: a replayed scan whose stage has the same settings
rebuilds its keys from them instead of the text (`run.scan.corpus_scans`).

pyarrow (the `parquet` extra) is imported when a file is read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from thresher.core.document import Document, Malformed
from thresher.core.stages import RECORDED, RECORDED_SIGNALS, RECORDED_TEXT_SIZES
from thresher.read.base import Partition, ReadItem
from thresher.read.config import InputConfig
from thresher.read.paths import open_input

BATCH_ROWS = 1024
COLUMNS = ("ordinal", "id", "url", "title", "fetched_at", "drop", "failures", "dropped_by", "measured", "marks",
           "annotations", "source", "metadata", "text")
SIZE_COLUMNS = ("text_bytes", "words")  # the text's sizes (`Document.derived[RECORDED_TEXT_SIZES]`)


def _loads(value: str | None) -> Any:
    return None if value is None else json.loads(value)


class _Memo:
    """JSON values that repeat from row to row (the marks: most rows passed the same stages), each
    decoded once. Bounded: cleared when full. The decoded values are only read, never changed."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self.values: dict[str, Any] = {}

    def loads(self, text: str | None) -> Any:
        if text is None:
            return None
        value = self.values.get(text)
        if value is None:
            if len(self.values) >= self.size:
                self.values.clear()
            value = self.values[text] = json.loads(text)
        return value


def read_signals(partition: Partition, config: InputConfig) -> Iterator[ReadItem]:
    """Every row of one signals part file, in order (see the module doc)."""
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:  # pragma: no cover - the preflight names the extra first
        raise ImportError("the signals table needs the parquet extra: pip install 'thresher[parquet]'") from exc
    with open_input(partition.path) as raw:
        try:
            parquet = pq.ParquetFile(raw)
            missing = [c for c in COLUMNS if c not in parquet.schema_arrow.names]
        except Exception as exc:  # noqa: BLE001 - not Parquet at all: one located problem
            yield Malformed("not_a_signals_table", partition.path, f"{type(exc).__name__}: {exc}"[:300])
            return
        if missing:
            yield Malformed("not_a_signals_table", partition.path,
                            f"no column {', '.join(missing)}: a table written before schema version 2? "
                            "build again with --signals")
            return
        settings, signal_columns = _recorded_signals(parquet.schema_arrow)
        decided = _decided_with(parquet.schema_arrow)
        sized = all(c in parquet.schema_arrow.names for c in SIZE_COLUMNS)
        names = list(COLUMNS) + list(signal_columns) + (list(SIZE_COLUMNS) if sized else [])
        marks = _Memo()
        # one thread: a row group of these columns decodes in a few ms, less than pyarrow's pool
        # costs in hand-offs and wake-ups (a replay spent ~0.1-0.3 CPU s of system time on them at
        # 10,000 rows), and a build already runs one task per core
        for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=names, use_threads=False):
            columns = [batch.column(name).to_pylist() for name in COLUMNS]
            signals = [(signal_columns[c], batch.column(c).to_pylist()) for c in signal_columns]
            sizes = [batch.column(c).to_pylist() for c in SIZE_COLUMNS] if sized else None
            for i, row in enumerate(zip(*columns, strict=True)):
                doc = _document(row, decided, marks)
                if settings and row[DROPPED_BY] != "chain":  # it passed the chain: its scans were recorded
                    values = {name: column[i] for name, column in signals if column[i] is not None}
                    doc.derived[RECORDED_SIGNALS] = (settings, values)
                if sizes is not None:
                    doc.derived[RECORDED_TEXT_SIZES] = (doc.text, sizes[0][i], sizes[1][i])
                yield doc


def _recorded_signals(schema: Any) -> tuple[dict[str, str], dict[str, str]]:
    """The settings each corpus stage's signals were recorded under, and the signal columns by
    name ({} and {} for a table that does not say: its scans are made again from the text)."""
    metadata = schema.metadata or {}
    raw_settings = metadata.get(b"thresher.signal_settings")
    raw_keys = metadata.get(b"thresher.signal_keys")
    if not raw_settings or not raw_keys:
        return {}, {}
    keys: dict[str, str] = json.loads(raw_keys)
    return json.loads(raw_settings), {column: name for column, name in keys.items() if column in schema.names}


def _decided_with(schema: Any) -> dict[str, str]:
    """Per rule set, what its recorded decisions depended on besides the measurements ({} for a
    table that does not say: every rule set decides again)."""
    raw = (schema.metadata or {}).get(b"thresher.decided_with")
    return json.loads(raw) if raw else {}


(ORDINAL, ID, URL, TITLE, FETCHED_AT, DROP, FAILURES, DROPPED_BY, MEASURED, MARKS, ANNOTATIONS, SOURCE, METADATA,
 TEXT) = range(len(COLUMNS))


def _document(row: tuple[Any, ...], decided: dict[str, str], marks: _Memo) -> Document:
    doc = Document(
        id=row[ID],
        text=row[TEXT] or "",
        url=row[URL],
        title=row[TITLE],
        source=_loads(row[SOURCE]) or {},
        fetched_at=row[FETCHED_AT],
        metadata=_loads(row[METADATA]) or {},
        annotations=_loads(row[ANNOTATIONS]) or {},
        ordinal=row[ORDINAL],
    )
    chain_drop = row[DROPPED_BY] == "chain"
    # `measured` stays JSON text: the replay decodes it only for a rule set it decides again
    doc.derived[RECORDED] = {
        "drop": _loads(row[DROP]) if chain_drop else None,
        "failures": _loads(row[FAILURES]) if chain_drop else None,
        "measured": row[MEASURED],
        "marks": marks.loads(row[MARKS]) or [],
        "decided": decided,
    }
    return doc
