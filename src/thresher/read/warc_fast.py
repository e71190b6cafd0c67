"""The archive reader on FastWARC (the `fast` extra): same documents, same provenance, as the pure
reader in `warc`.

FastWARC only frames records here (decompression, WARC header parsing, reading the block); every
payload decision goes through the shared `warc_payload.to_items`, so a record framed alike gives
identical items. Framing is trusted only where it can be checked to agree with the pure reader:

- each record must end exactly where the next begins (or the file ends): for an uncompressed file
  the next record sits at `start + header + block + 4`; for gzip, every record starts a member whose
  trailer (ISIZE, the uncompressed size) equals `header + block + 4`;
- the header length is recomputed from the fields as `Name: value\\r\\n` lines, so any unusual
  spacing, folding or damage fails the check;
- the block must have its declared length.

At the first record that fails a check (or when FastWARC raises or stops early) the pure reader takes
over from that record's offset, with the same record numbering, and reports whatever is wrong there.
Files FastWARC does not frame (ARC, one gzip member for the whole file, other compressions) are read
by the pure reader from the start.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Iterator
from typing import Any

from thresher.core.document import Malformed
from thresher.read.base import Partition, ReadItem
from thresher.read.config import InputConfig
from thresher.read.paths import local_path
from thresher.read.warc import iter_records, read_records_as_items
from thresher.read.warc_config import WarcConfig
from thresher.read.warc_payload import RawRecord, is_number
from thresher.read.warc_stream import GZIP_MAGIC

_BREAKS = re.compile(rb"[\r\n]")
_VERSION = re.compile(rb"WARC/\d+\.\d+")
_SEPARATOR = b"\r\n\r\n"


def fast_available() -> bool:
    try:
        import fastwarc.warc  # noqa: F401
    except ImportError:
        return False
    return True


def _archive_iterator(cls: Any, fh: Any) -> Any:
    try:
        return cls(fh, parse_http=False, fsspec_args=False)  # FastWARC 2: never route through fsspec
    except TypeError:
        return cls(fh, parse_http=False)  # FastWARC before 2.0 has no fsspec_args


def _pread(fd: int, n: int, offset: int) -> bytes:
    return os.pread(fd, n, offset) if offset >= 0 else b""


def _canonical_header(headers: Any) -> bytes | None:
    """The WARC header as `WARC/x.y`, `Name: value` lines and a blank line, all CRLF: the bytes the
    record must start with for the pure reader to parse it as FastWARC did (None: not a version line)."""
    status = headers.status_line_bytes
    if not _VERSION.fullmatch(status):
        return None
    parts = [status, b"\r\n"]
    for key, value in headers.items_bytes():
        parts += [key, b": ", value, b"\r\n"]
    parts.append(b"\r\n")
    return b"".join(parts)


def _headers_dict(headers: Any) -> dict[str, str] | None:
    """The fields as the pure reader keeps them, or None when a field is not one plain line (a line
    break or control character in it, a folded or empty name): the pure reader must frame it."""
    out: dict[str, str] = {}
    for key, value in headers.items_bytes():
        if not key or key[:1] in b" \t" or _BREAKS.search(key) or _BREAKS.search(value):
            return None
        name = key.strip().lower().decode("latin-1")
        if name not in out:
            out[name] = value.strip().decode("utf-8", "replace")
    return out


class _GapTooLong(Exception):
    """FastWARC was about to read further past the last record than any record explains."""


class _ReadBudget:
    """The archive file as FastWARC reads it, refused past `limit`: FastWARC scans a gap between
    records (garbage, a gzip member of a billion newlines) in C++, with no bound and no way to stop
    it from here. The framer moves the limit to the end of each record it accepts plus `slack`, so a
    gap longer than that raises, FastWARC stops, and the pure reader takes over at the last record;
    it counts the gap's lines (input.max_bad_lines_per_input) and stops the input at the cap."""

    def __init__(self, fh: Any, slack: int) -> None:
        self.fh = fh
        self.slack = slack
        self.limit = slack

    def read(self, n: int = -1) -> bytes:
        if self.fh.tell() >= self.limit:
            raise _GapTooLong()
        data: bytes = self.fh.read(n)
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self.fh, name)


# Compressed bytes FastWARC may read past the end of the last record it framed (and past the start
# of a record before its length is known): a real record's header and separator are far smaller.
GAP_SLACK_BYTES = 256 << 10  # FastWARC reads 64 KiB at a time


class _FastFramer:
    """Yields the records FastWARC frames and the checks confirm; `resume_at` and `resume_index`
    say where the pure reader must take over (None: the whole file was read)."""

    def __init__(self, path: str, cap: int) -> None:
        self.path = path
        self.cap = cap
        self.resume_at: int | None = 0
        self.resume_index = 0

    def records(self) -> Iterator[RawRecord]:
        from fastwarc.warc import ArchiveIterator

        with open(local_path(self.path), "rb") as fh:  # a file:// input is a local file here too
            fd = fh.fileno()
            size = os.fstat(fd).st_size
            head = _pread(fd, 16, 0)
            gzip = head.startswith(GZIP_MAGIC)
            if not (gzip or head.startswith(b"WARC/")):
                return  # ARC, other compressions, leading garbage: the pure reader's job
            pending: RawRecord | None = None
            check: tuple[bytes, int, int] = (b"", 0, 0)  # pending's canonical header, size, CRC-32
            index = 0
            budget = _ReadBudget(fh, GAP_SLACK_BYTES)
            try:
                for rec in _archive_iterator(ArchiveIterator, budget):
                    pos = rec.stream_pos
                    if pending is None:
                        if pos != 0:
                            return
                    elif not self._follows(fd, pending, check, pos, gzip):
                        return
                    else:
                        yield pending
                        self.resume_at, self.resume_index = pos, index
                    headers = _headers_dict(rec.headers)
                    header = _canonical_header(rec.headers)
                    if headers is None or header is None:
                        return
                    length_text = headers.get("content-length", "")
                    if not is_number(length_text) or int(length_text) != rec.content_length:
                        return
                    length = int(length_text)
                    budget.limit = pos + len(header) + length + GAP_SLACK_BYTES  # compressed <= stored, plus slack
                    crc = zlib.crc32(header)
                    if length > self.cap:
                        got = 0
                        while chunk := rec.reader.read(1 << 20):  # checked, never held whole
                            crc = zlib.crc32(chunk, crc)
                            got += len(chunk)
                        block = None
                    else:
                        block = rec.reader.read()
                        got = len(block)
                        crc = zlib.crc32(block, crc)
                    if got != length:
                        return
                    rtype = headers.get("warc-type", "").lower()
                    pending = RawRecord("warc", rtype, headers, block, length, pos, 0, index)
                    check = (header, len(header) + length + 4, zlib.crc32(_SEPARATOR, crc))
                    index += 1
            except Exception:  # noqa: BLE001 - whatever FastWARC cannot read, the pure reader reports
                return
            if pending is not None and self._follows(fd, pending, check, size, gzip):
                yield pending
                self.resume_at = None
            elif pending is None and size == 0:
                self.resume_at = None

    @staticmethod
    def _follows(fd: int, prev: RawRecord, check: tuple[bytes, int, int], pos: int, gzip: bool) -> bool:
        """Whether `prev` is exactly its canonical header, block and separator, ending where the next
        record starts at `pos` (or the file ends): uncompressed, by comparing the header bytes in the
        file; gzip, by the member trailer (CRC-32 and size of the uncompressed member)."""
        header, size, crc = check
        if not gzip:
            return (
                pos == prev.offset + size
                and _pread(fd, len(header), prev.offset) == header
                and _pread(fd, 4, pos - 4) == _SEPARATOR
            )
        if pos - 8 <= prev.offset:
            return False
        tail = _pread(fd, 11, pos - 8)
        return (
            int.from_bytes(tail[0:4], "little") == crc
            and int.from_bytes(tail[4:8], "little") == size % (1 << 32)
            and (len(tail) == 8 or tail[8:11] == GZIP_MAGIC)
        )


def iter_records_fast(
    path: str, max_record_bytes: int, wcfg: WarcConfig, first_index: int = 0, max_bad_lines: int | None = None
) -> Iterator[RawRecord | ReadItem]:
    """Framed records of one file: FastWARC for the checked prefix, the pure reader for the rest."""
    framer = _FastFramer(path, max_record_bytes)
    try:
        for rec in framer.records():
            rec.index += first_index
            yield rec
    except OSError as exc:
        yield Malformed("unreadable_file", path, exc.strerror or str(exc))
        return
    if framer.resume_at is not None:
        yield from iter_records(
            path, max_record_bytes, wcfg, start=framer.resume_at, first_index=first_index + framer.resume_index,
            max_bad_lines=max_bad_lines,
        )


def read_warc_fast(partition: Partition, config: InputConfig, wcfg: WarcConfig) -> Iterator[ReadItem]:
    from thresher.read.warc import _Counter

    first = 0
    for path in partition.paths:
        counter = _Counter(
            iter_records_fast(path, config.max_record_bytes, wcfg, first, config.max_bad_lines_per_input)
        )
        yield from read_records_as_items(counter, path, partition.index, config, wcfg)
        first = counter.next_index
