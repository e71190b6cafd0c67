"""Web archives (WARC 1.0/1.1, the 0.17/0.18 dialects, ARC v1/v2, WET; gzip per record or per file,
or uncompressed) to documents, on the standard library alone.

Framing: a record is a header (the `WARC/x.y` line and `Name: value` fields up to a blank line, or
one ARC header line) and a block of exactly `Content-Length` (ARC: the header's length) bytes, then
blank lines. The reader checks that what follows a block is blank lines and the next header; when it
is not, it looks for a header that the block swallowed (a `Content-Length` that runs too long: the
record is malformed and reading restarts at that header), otherwise the stray bytes are reported as
`garbage` up to the next header line. A header line is found by scanning line starts, so reading
always resynchronises after garbage, truncation or a damaged gzip member. Every region that cannot
be read becomes a `Malformed` with the file and byte offset; nothing is skipped silently and the
reader never raises on bad input.

Provenance: `source.offset` is the file offset of the record or, with gzip, of the member that
holds it; with one gzip member for the whole file `source.inner_offset` is the record's offset in
the decompressed member. `read_record_at` reads a record back from that place.

Payload decisions (HTTP, media types, charsets) live in `warc_payload`, shared with the FastWARC
reader in `warc_fast`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from thresher.core.document import Document, Malformed
from thresher.core.errors import InputError
from thresher.read.base import Event, Partition, ReadItem, Skip
from thresher.read.config import InputConfig
from thresher.read.warc_config import WarcConfig
from thresher.read.warc_payload import RawRecord, arc_date, is_number, to_items
from thresher.read.warc_stream import ArchiveStream, other_compression

_WARC_LINE = re.compile(rb"WARC/\d+\.\d+\r?\n")
_NEXT_WARC = re.compile(rb"\r\n\r\nWARC/\d+\.\d+\r?\n")
_WARC_IN_BLOCK = re.compile(rb"\nWARC/\d+\.\d+\r?\n")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_ARC_CANDIDATE = re.compile(rb"\n[A-Za-z][A-Za-z0-9+.\-]*:[^\n]* \d{8,18} [^\n]* -?\w+\r?\n")
_BLANK = (b"\r\n", b"\n")
_BLANK_LINES = re.compile(rb"(?:\r?\n)*")
_TAIL_PEEK = 4096
_LINE_ENDS = (b"\r", b"\n")
_MAX_LINE = 1 << 16

WAT_MESSAGE = "WAT files hold link and header metadata, not page content: read the matching WARC or WET file"


def parse_arc_header(line: bytes) -> tuple[dict[str, str], int] | str | None:
    """(fields under WARC names, length) of an ARC header line; an error text when the line looks like
    an ARC header with a bad length; None when it is no ARC header at all. Version 1 lines have five
    fields (URL IP date type length), version 2 ten; a URL may contain spaces, so fields are taken
    from the right."""
    text = line.decode("latin-1").rstrip("\r\n")
    fields = text.split(" ")
    if len(fields) < 5 or not _SCHEME.match(fields[0]):
        return None
    if is_number(fields[-3]) and 8 <= len(fields[-3]) <= 18:
        url, ip, date, ctype = " ".join(fields[:-4]), fields[-4], fields[-3], fields[-2]
    elif len(fields) >= 10 and is_number(fields[-8]) and 8 <= len(fields[-8]) <= 18:
        url, ip, date, ctype = " ".join(fields[:-9]), fields[-9], fields[-8], fields[-7]
    else:
        return None
    if not is_number(fields[-1]):
        return f"ARC record length is not a number: {fields[-1][:20]!r}"
    headers = {"warc-target-uri": url, "warc-date": arc_date(date), "content-type": ctype, "arc-ip": ip}
    return headers, int(fields[-1])


class RecordReader:
    """Frames the records of one archive stream; yields RawRecord, Malformed and Event items."""

    def __init__(
        self, stream: ArchiveStream, path: str, max_record_bytes: int, wcfg: WarcConfig, first_index: int = 0,
        max_bad_lines: int | None = None,
    ):
        self.s = stream
        self.path = path
        self.cap = max_record_bytes
        self.wcfg = wcfg
        self.index = first_index
        self.format: str | None = None  # "warc" or "arc", from the first record
        # line-bomb bound (input.max_bad_lines_per_input): blank lines beyond the two a record may end
        # with, and lines of garbage, counted over the input. Past the cap, each run of them in a WARC
        # file is skipped a buffer at a time and reported once (`_burst`), and reading resumes at the
        # next record; in an ARC file, or before the first record, reading stops there
        self.max_bad_lines = max_bad_lines
        self.bad_lines = 0

    def _over_bad_lines(self) -> bool:
        return self.max_bad_lines is not None and self.bad_lines >= self.max_bad_lines

    def _resumes(self) -> bool:
        """Past the cap, whether the next record can be found by its `WARC/` line at memory speed."""
        return self.format == "warc"

    def _bad_lines_stop(self, logical: int) -> Malformed:
        return Malformed(
            "too_many_bad_lines", self.where(logical),
            f"stopped reading this input after {self.bad_lines} blank or garbage lines between records "
            f"(input.max_bad_lines_per_input = {self.max_bad_lines}): a line bomb, or not an archive",
        )

    def _burst(self, logical: int, lines: int) -> Malformed:
        return Malformed(
            "too_many_bad_lines", self.where(logical),
            f"skipped {lines} blank or garbage lines between records from here, past "
            f"input.max_bad_lines_per_input = {self.max_bad_lines} (a line bomb, or not an archive); reading "
            "resumed at the next record",
        )

    def where(self, logical: int) -> str:
        offset, inner = self.s.locate(logical)
        return f"{self.path}@{offset}" + (f"+{inner}" if inner else "")

    def _problems(self) -> Iterator[ReadItem]:
        for reason, offset, detail in self.s.problems:
            yield Malformed(reason, f"{self.path}@{offset}", detail)
        self.s.problems.clear()

    def _is_header(self, line: bytes) -> bool:
        if _WARC_LINE.fullmatch(line):
            return True
        return self.format != "warc" and parse_arc_header(line) is not None

    def _scan(self, start: int) -> Iterator[ReadItem]:
        """Skip bytes that are no record, up to the next header line (left unread)."""
        at_line_start = True
        ended = False
        while not self._over_bad_lines():
            line = self.s.readline(_MAX_LINE)
            if not line:
                ended = True
                break
            if at_line_start and line not in _BLANK and self._is_header(line):
                self.s.unread(line)
                ended = True
                break
            at_line_start = line.endswith(b"\n")
            self.bad_lines += 1
        end = self.s.tell()
        if end > start:
            yield Malformed("garbage", self.where(start), f"{end - start} bytes that are not an archive record")
        if not ended and self._resumes():
            skipped = self.s.skip_to_line_starting(b"WARC/")
            self.bad_lines += skipped
            if skipped:
                yield self._burst(end, skipped)

    def records(self) -> Iterator[RawRecord | ReadItem]:
        s = self.s
        truncated_reported = False
        while True:
            # blank lines between records are normal; more than a record's two are counted as bad
            if s.peek(1) in _LINE_ENDS:  # the usual case is a header right away: nothing to count
                gap = s.tell()
                was_over = self._over_bad_lines()
                if self.max_bad_lines is None or (was_over and self._resumes()):
                    allowed = None
                else:
                    allowed = max(0, self.max_bad_lines - self.bad_lines) + 2
                extra = max(0, s.skip_blank_lines(allowed) - 2)
                self.bad_lines += extra
                if self._over_bad_lines():
                    yield from self._problems()
                    if not self._resumes():
                        yield self._bad_lines_stop(gap)
                        return
                    if not was_over:  # the cap was reached inside this run: the rest of it is the burst
                        more = s.skip_blank_lines(None)
                        extra += more
                        self.bad_lines += more
                    if extra:
                        yield self._burst(gap, extra)
            yield from self._problems()
            start = s.tell()
            s.forget_before(start)
            line = s.readline(_MAX_LINE)
            if not line:
                if s.at_gap:
                    s.resume()
                    continue
                break
            if _WARC_LINE.fullmatch(line):
                self.format = self.format or "warc"
                item = self._warc_record(start)
            else:
                arc = parse_arc_header(line) if self.format != "warc" else None
                if arc is None:
                    s.unread(line)
                    yield from self._scan(start)
                    if self._over_bad_lines() and not self._resumes():
                        yield self._bad_lines_stop(s.tell())
                        return
                    continue
                self.format = self.format or "arc"
                if isinstance(arc, str):
                    yield Malformed("bad_header", self.where(start), arc)
                    self.index += 1
                    continue
                item = self._arc_record(start, *arc)
            if item is None:
                continue
            if isinstance(item, Malformed) and item.reason == "truncated_record":
                truncated_reported = not s.at_gap
            yield item
        yield from self._problems()
        if s.truncated_member is not None and not truncated_reported:
            if s.zstd:
                yield Event("truncated_zstd", f"{self.path}@{s.truncated_member}", "the file ends inside a zstd frame")
            else:
                yield Event("truncated_gzip", f"{self.path}@{s.truncated_member}", "the file ends inside a gzip member")

    def _read_block(self, start: int, length: int) -> tuple[bytes | None, Malformed | None]:
        """The block of `length` bytes, or None when over the cap (skipped unread)."""
        if length > self.cap:
            got = self.s.skip(length)
            if got < length:
                return None, Malformed("truncated_record", self.where(start), f"block has {got} of {length} bytes")
            return None, None
        block = self.s.read(length)
        if len(block) < length:
            return block, Malformed("truncated_record", self.where(start), f"block has {len(block)} of {length} bytes")
        return block, None

    def _swallowed(self, start: int, block: bytes | None, header_pattern: re.Pattern[bytes]) -> Malformed | None:
        """A block cut short by the end of the file that holds a record header: the Content-Length ran
        past the end and swallowed the records after it. They are put back to be read; None when the
        block holds no header (a truly truncated record)."""
        m = header_pattern.search(block) if block else None
        if m is None or block is None:
            return None
        self.s.unread(block[m.start() + 1 :])
        return Malformed(
            "bad_content_length",
            self.where(start),
            f"Content-Length runs past the end of the file; the next record starts {m.start() + 1} bytes into the "
            f"block",
        )

    def _check_end(self, start: int, block: bytes | None, header_pattern: re.Pattern[bytes]) -> Malformed | None:
        """After a block: blank lines then a header or the end. When a header hides inside the block
        the length ran too long: put the bytes back from there and report the record."""
        s = self.s
        if _NEXT_WARC.match(s.peek(24)):
            s.skip(4)  # the usual case: the separator and the next WARC record
            return None
        # the blank lines after the block, up to 4 KiB of them in one read (a longer run is the main
        # loop's, which counts it: taking it here a byte at a time was quadratic in a line bomb)
        run = _BLANK_LINES.match(s.peek(_TAIL_PEEK))
        tail = s.read(run.end()) if run is not None else b""
        nxt = s.peek(4096)
        if not nxt:
            return None
        nl = nxt.find(b"\n")
        if nl >= 0 and self._is_header(nxt[:nl + 1]):
            return None
        if block:
            # the swallowed header may continue past the block: search the bytes after it too
            m = header_pattern.search(block + nxt)
            if m is not None and m.start() + 1 < len(block):
                s.unread(block[m.start() + 1:] + tail)
                return Malformed(
                    "bad_content_length",
                    self.where(start),
                    f"Content-Length runs {len(block) - m.start() - 1} bytes into the next record",
                )
        return None  # stray bytes after a good record: reported as garbage by the next scan

    def _fast_headers(self) -> dict[str, str] | None:
        """The header fields when the block is plain (CRLF lines, `Name: value`, within the size
        limit), read in one piece; None with nothing consumed otherwise (the line reader decides)."""
        s = self.s
        block = s.take_until(b"\r\n\r\n", self.wcfg.max_header_bytes + 2)
        if block is None:
            return None
        if block.count(b"\n") != block.count(b"\r\n") or len(block) - 2 > self.wcfg.max_header_bytes:
            s.unread(block)
            return None
        headers: dict[str, str] = {}
        last: str | None = None
        for line in block[:-4].split(b"\r\n"):
            if line[:1] in (b" ", b"\t") and last is not None:
                headers[last] += " " + line.strip().decode("utf-8", "replace")
                continue
            name, sep, value = line.partition(b":")
            if not sep or line.startswith(b"WARC/"):
                s.unread(block)
                return None
            key = name.strip().lower().decode("latin-1")
            last = key if key not in headers else None
            if last is not None:
                headers[key] = value.strip().decode("utf-8", "replace")
        return headers

    def _warc_record(self, start: int) -> RawRecord | Malformed | None:
        s = self.s
        fast = self._fast_headers()
        if fast is not None:
            return self._warc_block(start, fast)
        headers: dict[str, str] = {}
        size = 0
        last: str | None = None
        while True:
            line = s.readline(_MAX_LINE)
            size += len(line)
            if not line or (not line.endswith(b"\n") and not s.peek(1)):
                return Malformed("truncated_record", self.where(start), "file ends inside the WARC header")
            if line in _BLANK:
                break
            if size > self.wcfg.max_header_bytes:
                s.unread(line)
                return Malformed(
                    "bad_header", self.where(start), f"WARC header longer than {self.wcfg.max_header_bytes} bytes"
                )
            if line[:1] in (b" ", b"\t") and last is not None:
                headers[last] += " " + line.strip().decode("utf-8", "replace")
                continue
            name, sep, value = line.partition(b":")
            if not sep or _WARC_LINE.fullmatch(line):
                s.unread(line)
                return Malformed("bad_header", self.where(start), f"not a header field: {line[:60]!r}")
            key = name.strip().lower().decode("latin-1")
            last = key if key not in headers else None
            if last is not None:
                headers[key] = value.strip().decode("utf-8", "replace")
        return self._warc_block(start, headers)

    def _warc_block(self, start: int, headers: dict[str, str]) -> RawRecord | Malformed | None:
        s = self.s
        length_text = headers.get("content-length", "")
        if not is_number(length_text):
            return Malformed(
                "bad_header", self.where(start), f"Content-Length missing or not a number: {length_text[:20]!r}"
            )
        length = int(length_text)
        index = self.index
        self.index += 1
        block, problem = self._read_block(start, length)
        if problem is not None:
            return self._swallowed(start, block, _WARC_IN_BLOCK) or problem
        offset, inner = s.locate(start)
        bad = self._check_end(start, block, _WARC_IN_BLOCK)
        if bad is not None:
            return bad
        rtype = headers.get("warc-type", "").lower()
        return RawRecord("warc", rtype, headers, block, length, offset, inner, index)

    def _arc_record(self, start: int, headers: dict[str, str], length: int) -> RawRecord | Malformed | None:
        index = self.index
        self.index += 1
        block, problem = self._read_block(start, length)
        if problem is not None:
            return self._swallowed(start, block, _ARC_CANDIDATE) or problem
        offset, inner = self.s.locate(start)
        bad = self._check_end(start, block, _ARC_CANDIDATE)
        if bad is not None:
            return bad
        rtype = "warcinfo" if headers["warc-target-uri"].startswith("filedesc:") else "response"
        return RawRecord("arc", rtype, headers, block, length, offset, inner, index)


def _open(path: str) -> BinaryIO:
    from thresher.read.paths import open_input

    return open_input(path)


def iter_records(
    path: str, max_record_bytes: int, wcfg: WarcConfig, *, start: int = 0, first_index: int = 0,
    max_bad_lines: int | None = None,
) -> Iterator[RawRecord | ReadItem]:
    """Every framed record of one archive file from file offset `start`, with the Malformed regions
    and Events found on the way, in file order."""
    try:
        raw = _open(path)
    except (OSError, InputError) as exc:
        yield Malformed("unreadable_file", path, getattr(exc, "strerror", None) or str(exc))
        return
    with raw:
        try:
            if start == 0 and raw.seek(0, os.SEEK_END) == 0:
                yield Event("empty_file", path, "no records")
                return
            raw.seek(start)
            stream = ArchiveStream(raw, start)
        except OSError as exc:
            yield Malformed("unreadable_file", path, exc.strerror or str(exc))
            return
        if stream.zstd_missing:
            yield Malformed(
                "unsupported_compression", path, "reading a .warc.zst archive needs the zstd extra: pip install "
                "'thresher[zstd]'",
            )
            return
        if not (stream.gzip or stream.zstd):
            kind = other_compression(stream.peek(8))
            if kind is not None:
                yield Malformed(
                    "unsupported_compression", path, f"{kind}-compressed archives are not read; decompress first"
                )
                return
        reader = RecordReader(stream, path, max_record_bytes, wcfg, first_index, max_bad_lines)
        try:
            yield from reader.records()
        except OSError as exc:
            yield Malformed("unreadable_file", reader.where(stream.tell()), exc.strerror or str(exc))


def warc_settings(config: InputConfig) -> WarcConfig:
    """The archive settings carried by the input config (its `warc` section), else the defaults."""
    wcfg = getattr(config, "warc", None)
    return wcfg if isinstance(wcfg, WarcConfig) else WarcConfig()


def read_records_as_items(
    records: Iterable[RawRecord | ReadItem], path: str, partition_index: int, config: InputConfig, wcfg: WarcConfig
) -> Iterator[ReadItem]:
    """Framed records to reader items; stops at the first WAT metadata record with one Event."""
    for rec in records:
        if not isinstance(rec, RawRecord):
            yield rec
            continue
        if rec.type == "metadata" and rec.headers.get("content-type", "").lower().startswith("application/json"):
            yield Event("wat_ignored", rec.where(path), WAT_MESSAGE)
            return
        yield from to_items(rec, path, partition_index, config.max_record_bytes, wcfg)


def read_warc_pure(partition: Partition, config: InputConfig, wcfg: WarcConfig | None = None) -> Iterator[ReadItem]:
    wcfg = wcfg or warc_settings(config)
    first = 0
    for path in partition.paths:
        counter = _Counter(
            iter_records(
                path, config.max_record_bytes, wcfg, first_index=first, max_bad_lines=config.max_bad_lines_per_input
            )
        )
        yield from read_records_as_items(counter, path, partition.index, config, wcfg)
        first = counter.next_index


class _Counter:
    """Passes records through and remembers the index after the last one (for multi-file partitions)."""

    def __init__(self, records: Iterator[RawRecord | ReadItem]) -> None:
        self.records = records
        self.next_index = 0

    def __iter__(self) -> Iterator[RawRecord | ReadItem]:
        for rec in self.records:
            if isinstance(rec, RawRecord):
                self.next_index = rec.index + 1
            yield rec


def read_record_at(
    path: str, offset: int, inner_offset: int = 0, config: InputConfig | None = None
) -> Document | Skip | Malformed | None:
    """The document (or skip, or malformed) of the record at a recorded provenance place."""
    config = config or InputConfig()
    wcfg = warc_settings(config)
    records = iter_records(path, config.max_record_bytes, wcfg, start=offset)
    for item in read_records_as_items(_skip_to(records, inner_offset), path, 0, config, wcfg):
        if isinstance(item, Document | Skip | Malformed):
            return item
    return None


def _skip_to(records: Iterator[RawRecord | ReadItem], inner_offset: int) -> Iterator[RawRecord | ReadItem]:
    for rec in records:
        if isinstance(rec, RawRecord):
            if rec.inner_offset < inner_offset:
                continue
            yield rec
            return
        yield rec
