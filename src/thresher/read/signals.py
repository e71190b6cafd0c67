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
from thresher.core.stages import RECORDED, RECORDED_SIGNALS
from thresher.read.base import Partition, ReadItem
from thresher.read.config import InputConfig
from thresher.read.paths import open_input

BATCH_ROWS = 1024
COLUMNS = ("ordinal", "id", "url", "title", "fetched_at", "drop", "failures", "dropped_by", "measured", "marks",
           "annotations", "source", "metadata", "text")


def _loads(value: str | None) -> Any:
    return None if value is None else json.loads(value)


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
        names = list(COLUMNS) + list(signal_columns)
        for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=names):
            columns = {name: batch.column(name).to_pylist() for name in COLUMNS}
            signals = [(signal_columns[c], batch.column(c).to_pylist()) for c in signal_columns]
            for i in range(batch.num_rows):
                doc = _document({name: values[i] for name, values in columns.items()})
                if settings and columns["dropped_by"][i] != "chain":  # it passed the chain: its scans were recorded
                    values = {name: column[i] for name, column in signals if column[i] is not None}
                    doc.derived[RECORDED_SIGNALS] = (settings, values)
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


def _document(row: dict[str, Any]) -> Document:
    doc = Document(
        id=row["id"],
        text=row["text"] or "",
        url=row["url"],
        title=row["title"],
        source=_loads(row["source"]) or {},
        fetched_at=row["fetched_at"],
        metadata=_loads(row["metadata"]) or {},
        annotations=_loads(row["annotations"]) or {},
        ordinal=row["ordinal"],
    )
    chain_drop = row["dropped_by"] == "chain"
    doc.derived[RECORDED] = {
        "drop": _loads(row["drop"]) if chain_drop else None,
        "failures": _loads(row["failures"]) if chain_drop else None,
        "measured": _loads(row["measured"]) or {},
        "marks": _loads(row["marks"]) or [],
    }
    return doc
