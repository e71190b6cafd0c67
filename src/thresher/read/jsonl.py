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


def _record_start(buf: bytes, window: int) -> int:
    """The start of the first line in `buf[:window]` (which starts at a line start) that can be a
    record, a JSON object after JSON whitespace; -1 if none. Searched by the object's `{` (memchr
    speed: a line without one costs nothing), then checked for what precedes it on its line."""
    pos = 0
    while True:
        brace = buf.find(b"{", pos, window)
        if brace < 0:
            return -1
        line_start = buf.rfind(b"\n", 0, brace) + 1
        if not buf[line_start:brace].strip(b" \t\r"):
            return line_start
        pos = buf.find(b"\n", brace, window) + 1
        if not pos:
            return -1


def _skip_to_record(stream: BinaryIO, offset: int, end: int | None, max_record_bytes: int) -> tuple[int, int]:
    """Consume the lines from `offset` (a line start) up to the next that starts like a JSON object,
    the end of the stream or of the range [.., end); (bytes, lines) consumed. A line is skipped by
    a search over the buffered bytes, so a billion blank or junk lines cost memory-speed reading."""
    consumed = lines = 0
    while end is None or offset + consumed < end:
        buf = stream.peek(_CHUNK)  # type: ignore[attr-defined]
        if not buf:
            break
        window = len(buf) if end is None else min(len(buf), end - offset - consumed)
        found = _record_start(buf, window)
        if found >= 0:
            if found:
                stream.read(found)
                consumed += found
                lines += buf.count(b"\n", 0, found)
            break
        cut = buf.rfind(b"\n", 0, window) + 1
        if cut:
            stream.read(cut)
            consumed += cut
            lines += buf.count(b"\n", 0, cut)
        else:  # one line longer than the buffer: consumed to its end without being kept
            _, size, _ = _read_line(stream, max_record_bytes)
            consumed += size
            lines += 1
    return consumed, lines


def _skip_partial_first_line(stream: BinaryIO, start: int) -> int:
    """Position a byte-range reader on the first line that starts inside the range."""
    if start == 0:
        return 0
    stream.seek(start - 1)
    if stream.read(1) == b"\n":
        return start
    skipped = stream.readline()
    return start + len(skipped)


def _broken_stream(exc: Exception, location: str) -> Malformed:
    """What a stream that failed mid-read gets: `truncated_input` for a stream that ended early
    (EOFError, OSError: a cut gzip or zstd file), `corrupt_input` for a codec's own error
    (zstandard.ZstdError: a corrupt frame)."""
    if isinstance(exc, (EOFError, OSError)):
        return Malformed("truncated_input", location, str(exc) or type(exc).__name__)
    return Malformed("corrupt_input", location, f"{type(exc).__name__}: {exc}")


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
        # past the cap, bad lines are not reported one by one: each run of them (a burst) is skipped
        # and reported once, located at its first line, and reading resumes at the next record
        burst_lines = 0
        burst_at = ""
        notes: set[str] = set()
        index = 0
        line_no = 0
        any_line = False
        while end is None or offset < end:
            if cap is not None and bad_lines >= cap:
                try:
                    skipped_bytes, skipped_lines = _skip_to_record(stream, offset, end, config.max_record_bytes)
                except Exception as exc:  # noqa: BLE001 - a broken stream ends this input (_broken_stream)
                    yield from _burst(burst_at, burst_lines, cap)
                    yield _broken_stream(exc, locate(offset, line_no + 1))
                    return
                if skipped_lines:
                    if not burst_lines:
                        burst_at = locate(offset, line_no + 1)
                    any_line = True
                    burst_lines += skipped_lines
                    bad_lines += skipped_lines
                    offset += skipped_bytes
                    line_no += skipped_lines
                    if end is not None and offset >= end:
                        break
            line_start = offset
            try:
                line, size, too_large = _read_line(stream, config.max_record_bytes)
            except Exception as exc:  # noqa: BLE001 - keep what was read, report where the stream broke
                yield from _burst(burst_at, burst_lines, cap)
                yield _broken_stream(exc, locate(line_start, line_no + 1))
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
            over_cap = cap is not None and bad_lines >= cap
            if too_large or not line.strip():
                bad_lines += 1
                if over_cap:
                    if not burst_lines:
                        burst_at = locate(line_start, line_no)
                    burst_lines += 1
                    index += too_large
                elif too_large:
                    yield Malformed(
                        "too_large", locate(line_start, line_no),
                        f"line of {size} bytes exceeds {config.max_record_bytes}",
                    )
                    index += 1
                else:
                    yield Event("empty_line", locate(line_start, line_no))
                continue
            notes.clear()
            item, invalid_utf8 = parse_record(line, "", config, notes)
            if isinstance(item, Malformed):
                bad_lines += 1
                if over_cap:
                    if not burst_lines:
                        burst_at = locate(line_start, line_no)
                    burst_lines += 1
                    index += 1
                    continue
            yield from _burst(burst_at, burst_lines, cap)
            burst_lines = 0
            if invalid_utf8:
                yield Event("invalid_utf8", locate(line_start, line_no), "undecodable bytes replaced")
            for note in sorted(notes):
                yield Event(
                    note, locate(line_start, line_no), "written as null" if note == NON_FINITE else "replaced by U+FFFD"
                )
            if isinstance(item, Document):
                item.ordinal = make_ordinal(partition.index, index)
                # the byte offset, not the line number: it is the same however the file is split
                item.source = {"file": path, "offset": line_start}
                item.id = record_id(item.source)
            else:
                item = replace(item, location=locate(line_start, line_no))
            index += 1
            yield item
        yield from _burst(burst_at, burst_lines, cap)
        if not any_line and partition.start == 0:
            yield Event("empty_file", path, "no records")


def _burst(location: str, lines: int, cap: int | None) -> Iterator[Malformed]:
    """One `too_many_bad_lines` for a run of `lines` bad lines skipped past the cap (none if empty)."""
    if lines:
        yield Malformed(
            "too_many_bad_lines", location,
            f"skipped {lines} malformed records and empty lines from here, past "
            f"input.max_bad_lines_per_input = {cap} (a line bomb, or not JSON Lines); reading resumed at the "
            "next record",
        )


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
