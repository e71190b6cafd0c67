"""CSV input for thresher: one document per row of a `.csv` file (gzip or zstd compressed too).

The first row names the columns. The URL, HTML and text are taken from the columns the input
settings name (`--url-column`, `--html-column`, `--text-column`: `url`, `html` and `text` by
default), exactly as for JSONL and Parquet input; a page with HTML goes through the configured
extractor, one with only text keeps it. Every other column is kept in the document's metadata. An
empty cell counts as absent. A row is located as `file:line` in problem reports, and its document id
comes from its place (the file and the row number), so ids are stable across runs.
"""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Iterator

from thresher.core.document import Malformed
from thresher.read.base import Partition, ReadItem, make_ordinal
from thresher.read.config import InputConfig
from thresher.read.fields import document_from_fields
from thresher.read.readers import ReaderSpec
from thresher.read.sniff import open_binary

# What thresher needs to know to plan and sniff: files ending `.csv` (after .gz/.zst) are this kind;
# `--input-format csv` chooses it for any file.
CSV = ReaderSpec(kind="csv", read="thresher_csv_reader:read_csv", suffixes=(".csv",))

# a page of HTML easily passes csv's default cell limit (128 KiB)
csv.field_size_limit(min(sys.maxsize, 1 << 31))


def read_csv(partition: Partition, config: InputConfig) -> Iterator[ReadItem]:
    path = partition.path
    try:
        raw = open_binary(path)
    except OSError as exc:
        yield Malformed("unreadable_file", path, str(exc))
        return
    with raw, io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace", newline="") as text:
        rows = csv.reader(text)
        try:
            header = next(rows, None)
        except csv.Error as exc:
            yield Malformed("corrupt_input", f"{path}:1", str(exc))
            return
        if not header:
            return
        row = 0
        while True:
            first_line = rows.line_num + 1  # a quoted cell may span lines: a row is located by its first
            try:
                cells = next(rows)
            except StopIteration:
                return
            except csv.Error as exc:  # e.g. a NUL byte or an unclosed quote at the end of the file
                yield Malformed("corrupt_input", f"{path}:{rows.line_num}", str(exc))
                return
            where = f"{path}:{first_line}"
            if len(cells) != len(header):
                yield Malformed("wrong_columns", where, f"{len(cells)} cells, the header has {len(header)}")
            else:
                record: dict[str, object] = {name: cell for name, cell in zip(header, cells, strict=True) if cell}
                item = document_from_fields(record, where, config, source={"file": path, "row": row})
                if not isinstance(item, Malformed):
                    item.ordinal = make_ordinal(partition.index, row)
                yield item
            row += 1
