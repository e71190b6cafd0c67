"""JSONL input: one JSON object per line with a URL and `html` or `text`; other fields are kept
as metadata. Lines are read as bytes so that a byte range of a large file can be a partition and
every problem can be located by line (or byte offset) in the file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import BinaryIO

from thresher.core.document import Document, Malformed, record_id
from thresher.core.errors import InputError
from thresher.read.base import Event, Partition, ReadItem, make_ordinal
from thresher.read.config import InputConfig
from thresher.read.fields import document_from_fields
from thresher.read.paths import is_url, local_path, open_input
from thresher.read.sniff import open_binary
from thresher.read.strict_json import NON_FINITE, NonFiniteNumber, loads_strict

_CHUNK = 1 << 20
# A byte range locates its problems by line when the lines before it can be counted by reading at
# most this many bytes of a local file; beyond it (or for a URL) by byte offset, `file@offset`.
LINE_COUNT_LIMIT = 1 << 30


_BOM_UTF8 = b"\xef\xbb\xbf"


def looks_utf16(line: bytes) -> bool:
    """A first line that is UTF-16: a UTF-16 byte order mark, or ASCII with every other byte NUL."""
    if line.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True
    head = line[:64]
    return len(head) >= 4 and (head[1::2].count(0) >= len(head) // 2 - 1 or head[0::2].count(0) >= len(head) // 2 - 1)


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


def _lines_before(path: str, end: int) -> int | None:
    """The number of lines that end before byte `end` of a local file (None for a URL or when
    `end` is beyond LINE_COUNT_LIMIT: then problems are located by byte offset)."""
    if is_url(path) or end > LINE_COUNT_LIMIT:
        return None
    count = 0
    try:
        with open(local_path(path), "rb") as f:
            remaining = end
            while remaining > 0:
                chunk = f.read(min(8 * _CHUNK, remaining))
                if not chunk:
                    break
                count += chunk.count(b"\n")
                remaining -= len(chunk)
    except OSError:
        return None
    return count


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
        # Problems are located as file:line, whatever the partitioning: a range that starts inside
        # the file counts the lines before it the first time it needs one (problems are rare).
        first_line = offset
        line_base: int | None = 0
        base_known = first_line == 0

        def locate(line_start: int, line_no: int) -> str:
            nonlocal line_base, base_known
            if not base_known:
                line_base = _lines_before(path, first_line)
                base_known = True
            if line_base is None:
                return f"{path}@{line_start}"
            return f"{path}:{line_base + line_no}"

        end = partition.end
        cap = config.max_bad_lines_per_input
        bad_lines = 0
        notes: set[str] = set()
        index = 0
        line_no = 0
        any_line = False
        while end is None or offset < end:
            line_start = offset
            try:
                line, size, too_large = _read_line(stream, config.max_record_bytes)
            except (EOFError, OSError) as exc:
                # truncated gzip/zstd: keep what was read, report where the stream broke
                yield Malformed("truncated_input", locate(line_start, line_no + 1), str(exc) or type(exc).__name__)
                return
            except Exception as exc:  # noqa: BLE001 - a codec's own error (zstandard.ZstdError: corrupt frame)
                yield Malformed("corrupt_input", locate(line_start, line_no + 1), f"{type(exc).__name__}: {exc}")
                return
            if size == 0:
                break
            if line_no == 0 and offset == 0:
                if line.startswith(_BOM_UTF8):
                    line, size_bom = line[len(_BOM_UTF8):], len(_BOM_UTF8)
                    offset += size_bom
                    size -= size_bom
                    line_start = offset
                    yield Event("utf8_bom", path, "a UTF-8 byte order mark before the first record, skipped")
                elif looks_utf16(line):
                    yield Malformed(
                        "utf16_input",
                        path,
                        "the file is UTF-16 (JSON Lines is UTF-8): convert it, e.g. iconv -f UTF-16 -t UTF-8; nothing "
                        "read",
                    )
                    return
            any_line = True
            offset += size
            line_no += 1
            if cap is not None and bad_lines >= cap:
                yield Malformed(
                    "too_many_bad_lines", locate(line_start, line_no),
                    f"stopped reading this input after {bad_lines} malformed records and empty lines "
                    f"(input.max_bad_lines_per_input = {cap}): a line bomb, or not JSON Lines",
                )
                return
            if too_large:
                bad_lines += 1
                yield Malformed(
                    "too_large", locate(line_start, line_no), f"line of {size} bytes exceeds {config.max_record_bytes}"
                )
                index += 1
                continue
            if not line.strip():
                bad_lines += 1
                yield Event("empty_line", locate(line_start, line_no))
                continue
            notes.clear()
            item, invalid_utf8 = parse_record(line, "", config, notes)
            if invalid_utf8:
                yield Event("invalid_utf8", locate(line_start, line_no), "undecodable bytes replaced")
            for note in sorted(notes):
                yield Event(
                    note, locate(line_start, line_no), "written as null" if note == NON_FINITE else "replaced by U+FFFD"
                )
            if isinstance(item, Malformed):
                bad_lines += 1
            if isinstance(item, Document):
                item.ordinal = make_ordinal(partition.index, index)
                # the byte offset, not the line number: it is the same however the file is split
                item.source = {"file": path, "offset": line_start}
                item.id = record_id(item.source)
            else:
                item = replace(item, location=locate(line_start, line_no))
            index += 1
            yield item
        if not any_line and partition.start == 0:
            yield Event("empty_file", path, "no records")


def parse_record(
    line: bytes, where: str, config: InputConfig, notes: set[str] | None = None
) -> tuple[Document | Malformed, bool]:
    """One JSON line to a Document, or a Malformed naming what is wrong; and whether the line held
    invalid UTF-8 (replaced, not fatal). What strict JSON changed (`strict_json`: non-finite
    numbers, lone surrogates) is added to `notes`."""
    invalid_utf8 = False
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        text = line.decode("utf-8", "replace")
        invalid_utf8 = True
    try:
        record, changed = loads_strict(text, config.non_finite)
    except json.JSONDecodeError as exc:
        return Malformed(
            "invalid_json", where, exc.msg + (" column " if exc.msg.endswith(" at") else " at column ") + str(exc.colno)
        ), invalid_utf8
    except NonFiniteNumber as exc:
        return Malformed(NON_FINITE, where, str(exc)), invalid_utf8
    except RecursionError:
        return Malformed("invalid_json", where, "nested too deeply"), invalid_utf8
    if notes is not None:
        notes.update(changed)
    if not isinstance(record, dict):
        return Malformed("not_an_object", where, f"a JSON {type(record).__name__}, expected an object"), invalid_utf8
    return document_from_fields(record, where, config), invalid_utf8
