"""The signals phase (`build --signals`): one task per input partition, after the write phase, that
turns the scan's signal rows (`run.signal_rows`) and the corpus decisions into the partition's
Parquet file `signals/part-NNNNNN.parquet` (schema: `thresher.write.signals`, docs/signals.md).

A task merges two streams in ordinal order, as the write task does: the partition's rows (every
document the chain judged, dropped or not) and the decisions of the cluster phase and the phased
stages (only for documents that passed the chain). A kept document's shard and row follow from the
partition's first global index, the same arithmetic as the write task's. Memory: one row group.
The file's bytes depend only on the partition's documents and decisions and the build's layout
(the union of every partition's columns, sorted), never on the engine, worker count or a resume.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, cast

from thresher.clusters import Decision
from thresher.run.cluster import iter_decisions
from thresher.run.integrity import require_work_files
from thresher.run.observe import utf8_length, whitespace_tokens
from thresher.run.results import ShardFile
from thresher.run.signal_rows import columns_path, iter_rows, rows_path, unpack_signals
from thresher.run.task import TaskContext
from thresher.write.digest import digested_file
from thresher.write.signals import SignalsWriter, drop_columns, part_path, table_layout


def signals_task(ctx: TaskContext, p: int, global_start: int, stages: Sequence[str],
                 layout: dict[str, Any]) -> ShardFile:
    """Write partition p's signals file in the stage folder (see the module doc)."""
    work = ctx.work
    per_shard = ctx.config.output.shard_max_records
    rel = part_path(p)
    dest = Path(ctx.workdir).parent / rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    for stale in dest.parent.glob(f".{dest.name}.tmp-*"):  # an attempt killed mid-write
        stale.unlink(missing_ok=True)
    decisions = iter_decisions(work, p, stages)
    pending: Decision | None = next(decisions, None)
    g = global_start
    with digested_file(dest) as out:
        writer = SignalsWriter(layout, cast(IO[bytes], out))
        for ordinal, extra_json, measured, marks, signals, record_json in iter_rows(rows_path(work, p)):
            extra = json.loads(extra_json)
            row = _row(ordinal, json.loads(record_json), extra)
            # JSON as the table stores it, and raw signals: copied, not decoded (`run.signal_rows`)
            row["measured"] = measured.decode("utf-8") if measured else None
            row["marks"] = marks.decode("utf-8") if marks else None
            row["signals"] = unpack_signals(signals) if signals else {}
            if "drop" not in extra:  # passed the chain: the corpus stages decided it
                if pending is not None and pending.ordinal < ordinal:
                    raise RuntimeError(f"partition {p}: decision for ordinal {pending.ordinal}, "
                                       "which no scanned document has")
                decision = None
                if pending is not None and pending.ordinal == ordinal:
                    decision, pending = pending, next(decisions, None)
                if decision is not None and decision.drop is not None:
                    row["status"] = "dropped"
                    row.update(drop_columns(decision.drop.to_record(), None, "corpus"))
                else:
                    row["shard"], row["row"] = divmod(g, per_shard)
                    g += 1
                    if decision is not None:
                        row["edited"] = decision.edit is not None
                        if decision.cluster:
                            row["dedup_cluster"] = decision.cluster
                            row["dedup_duplicates"] = decision.duplicates
            writer.add(row)
        if pending is not None:
            raise RuntimeError(f"partition {p}: decision for ordinal {pending.ordinal}, which no scanned document has")
        rows_written = writer.close()
    return ShardFile(path=rel, records=rows_written, bytes=out.bytes, sha256=out.sha256)


def _row(ordinal: int, record: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    text = record.get("text") or ""
    source = record.get("source") or {}
    offset = source.get("offset", source.get("row"))
    row: dict[str, Any] = {
        "ordinal": ordinal,
        "id": record["id"],
        "url": record.get("url"),
        "source_file": source.get("file"),
        "source_offset": offset if type(offset) is int else None,
        "status": "kept",
        "edited": False,
        "text_chars": len(text),
        "text_bytes": utf8_length(text),
        "words": whitespace_tokens(text),
        "title": record.get("title"),
        "fetched_at": record.get("fetched_at"),
        "annotations": record.get("annotations") or {},
        "source": source,
        "metadata": record.get("metadata"),
        "text": text,
    }
    drop = extra.get("drop")
    if drop is not None:
        row["status"] = "dropped"
        row["edited"] = None
        row.update(drop_columns(drop, extra.get("failures"), "chain"))
    return row


def build_layout(work: Any, partitions: Sequence[int]) -> dict[str, Any]:
    """The one layout of every part file: the union of the partitions' column files."""
    paths = [columns_path(work, p) for p in partitions]
    require_work_files(paths + [rows_path(work, p) for p in partitions], "signals")
    return table_layout(json.loads(path.read_text(encoding="utf-8")) for path in paths)


def signals_section(layout: dict[str, Any], files: Sequence[ShardFile], partitions: Sequence[int]) -> dict[str, Any]:
    """The manifest's `signals` section: the layout, and each part file with its partition, rows,
    bytes and sha256 (`thresher verify` checks them)."""
    return {
        "schema_version": layout["schema_version"],
        "format": "parquet",
        "rows": sum(f.records for f in files),
        "bytes": sum(f.bytes for f in files),
        "annotations": layout["annotations"],
        "signals": layout["signals"],
        "settings": layout.get("settings") or {},
        "files": [{"partition": p, **f.to_json()} for p, f in zip(partitions, files, strict=True)],
    }
