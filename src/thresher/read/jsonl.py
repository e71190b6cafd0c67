"""JSONL input: one JSON object per line with a URL and `html` or `text`; other fields are kept
as metadata. Lines are read as bytes so that a byte range of a large file can be a partition and
every problem can be located by line (or byte offset) in the file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import BinaryIO

from thresher.core.document import Document, Malformed
from thresher.core.errors import InputError
from thresher.read.base import Event, Partition, ReadItem, make_ordinal
from thresher.read.config import InputConfig
from thresher.read.fields import document_from_fields
from thresher.read.paths import open_input
from thresher.read.sniff import open_binary

_CHUNK = 1 << 20


def _read_line(stream: BinaryIO, limit: int) -> tuple[bytes, int, bool]:
    """One line (with its newline), its length in bytes, and whether it exceeded `limit`.

    An oversized line is consumed to its end without being kept in memory."""
    line = stream.readline(limit + 1)
    if len(line) <= limit or line.endswith(b"\n"):
        return line, len(line), False
    consumed = len(line)
    while True:
        chunk = stream.readline(_CHUNK)
        consumed += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            return b"", consumed, True


def _skip_partial_first_line(stream: BinaryIO, start: int) -> int:
    """Position a byte-range reader on the first line that starts inside the range."""
    if start == 0:
        return 0
    stream.seek(start - 1)
    if stream.read(1) == b"\n":
        return start
    skipped = stream.readline()
    return start + len(skipped)


def read_jsonl(partition: Partition, config: InputConfig) -> Iterator[ReadItem]:
    path = partition.path
    ranged = partition.start > 0 or partition.end is not None
    try:
        if ranged:
            stream: BinaryIO = open_input(path)
        else:
            stream = open_binary(path)
    except (InputError, OSError) as exc:
        yield Malformed("unreadable_file", path, str(exc))
        return
    with stream:
        offset = _skip_partial_first_line(stream, partition.start) if ranged else 0
        end = partition.end
        index = 0
        line_no = 0
        any_line = False
        while end is None or offset < end:
            line_start = offset
            try:
                line, size, too_large = _read_line(stream, config.max_record_bytes)
            except (EOFError, OSError) as exc:
                # truncated gzip/zstd: keep what was read, report where the stream broke
                yield Malformed("truncated_input", f"{path}:{line_no + 1}", str(exc) or type(exc).__name__)
                return
            if size == 0:
                break
            any_line = True
            offset += size
            line_no += 1
            where = f"{path}@{line_start}" if ranged else f"{path}:{line_no}"
            if too_large:
                yield Malformed("too_large", where, f"line of {size} bytes exceeds {config.max_record_bytes}")
                index += 1
                continue
            if not line.strip():
                yield Event("empty_line", where)
                continue
            item, invalid_utf8 = parse_record(line, where, config)
            if invalid_utf8:
                yield Event("invalid_utf8", where, "undecodable bytes replaced")
            if isinstance(item, Document):
                item.ordinal = make_ordinal(partition.index, index)
                # the byte offset, not the line number: it is the same however the file is split
                item.source = {"file": path, "offset": line_start}
            index += 1
            yield item
        if not any_line and partition.start == 0:
            yield Event("empty_file", path, "no records")


def parse_record(line: bytes, where: str, config: InputConfig) -> tuple[Document | Malformed, bool]:
    """One JSON line to a Document, or a Malformed naming what is wrong; and whether the line held
    invalid UTF-8 (replaced, not fatal)."""
    invalid_utf8 = False
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        text = line.decode("utf-8", "replace")
        invalid_utf8 = True
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        return Malformed("invalid_json", where, exc.msg + f" at column {exc.colno}"), invalid_utf8
    except RecursionError:
        return Malformed("invalid_json", where, "nested too deeply"), invalid_utf8
    if not isinstance(record, dict):
        return Malformed("not_an_object", where, f"a JSON {type(record).__name__}, expected an object"), invalid_utf8
    return document_from_fields(record, where, config), invalid_utf8
