"""The byte stream under the archive reader: undoes gzip or zstd and remembers where every byte came from.

An archive is read as one logical stream of uncompressed bytes. For a gzip file that stream is the
concatenation of its members, and every logical position maps back to (file offset of the member
that holds it, offset inside the decompressed member). With one member per record (the usual
layout) the record starts at inner offset 0, and the member offset alone locates it; with one
member for the whole file the inner offset does. A zstd file (`.warc.zst`) is read the same way with
frames for members: one frame per record or one for the whole file. Skippable frames are passed
over; one at the start of the file with magic 0x184D2A5D holds the dictionary the frames were
compressed with (zstd-compressed itself or not), as the IIPC's `.warc.zst` proposal lays it out.

Damage never stops the stream: bytes between members that are not gzip are skipped to the next
member header, a member that fails to decompress is abandoned at the failure and reading goes on at
the next member header. Each such region is recorded in `problems` (reason, file offset, detail),
and a failure inside a member also leaves a *gap*: reads stop there as at the end of the file until
`resume()` is called, so the record that straddles the damage is seen to be truncated rather than
silently spliced onto the bytes of the next member.
"""

from __future__ import annotations

import bisect
import re
import zlib
from typing import Any, BinaryIO

GZIP_MAGIC = b"\x1f\x8b\x08"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_ZSTD_DICT_MAGIC = b"\x5d\x2a\x4d\x18"
# compressed bytes fed to zstd at a time: its output is not capped per call, and a block of 4 bytes
# can stand for 128 KiB (RLE), so the window bounds one call's output to 64 MiB
_ZSTD_WINDOW = 1 << 11
_CHUNK = 1 << 16
_OUT_CHUNK = 1 << 20
_IN_WINDOW = 1 << 14
_OTHER_COMPRESSION = {
    b"\x28\xb5\x2f\xfd": "zstd",
    b"\x04\x22\x4d\x18": "lz4",
    b"BZh": "bzip2",
    b"\xfd7zXZ": "xz",
}


def other_compression(head: bytes) -> str | None:
    """The name of a compression this reader does not undo, found by magic bytes, else None."""
    for magic, name in _OTHER_COMPRESSION.items():
        if head.startswith(magic):
            return name
    return None


def _is_zstd_skippable(data: bytes, at: int) -> bool:
    """A skippable zstd frame starts at `at` (magic 0x184D2A50 to 0x184D2A5F, little-endian)."""
    return len(data) - at >= 4 and data[at] & 0xF0 == 0x50 and data[at + 1:at + 4] == b"\x2a\x4d\x18"


def _zstandard() -> Any:
    try:
        import zstandard
    except ImportError:
        return None
    return zstandard


_BLANK_RUN = re.compile(rb"[\r\n]*")  # a character class: matched at C speed (a group is ~200x slower)


class ArchiveStream:
    """Buffered, line-oriented reads over the uncompressed bytes of `raw`, opened at file offset
    `start` (the stream must be positioned there)."""

    def __init__(self, raw: BinaryIO, start: int = 0) -> None:
        self.raw = raw
        self.start = start
        head = self._raw_read_peek()
        self.gzip = head.startswith(GZIP_MAGIC[:2])
        zstd_head = head.startswith(ZSTD_MAGIC) or _is_zstd_skippable(head, 0)
        self._zstandard: Any = _zstandard() if zstd_head else None
        self.zstd = self._zstandard is not None
        # a zstd archive and no zstandard to read it: the reader says which extra to install
        self.zstd_missing = zstd_head and not self.zstd
        self._zdctx: Any = None
        self._zdec: Any = None
        if self._zstandard is not None:
            self._zdctx = self._zstandard.ZstdDecompressor(dict_data=self._zstd_dictionary(head))
        self.problems: list[tuple[str, int, str]] = []
        self.truncated_member: int | None = None  # file offset of a gzip member cut off by the end of file
        self.at_gap = False
        self._buf = b""
        self._pos = 0
        self._base = 0  # logical offset of _buf[0]
        self._eof = False
        # gzip state
        self._cbuf = head
        self._ci = 0  # next unread byte of _cbuf
        self._cpos = start  # file offset of _cbuf[_ci]
        self._view: memoryview = memoryview(b"")
        self._view_of: bytes | None = None
        self._dec: zlib._Decompress | None = None
        self._member_off = start
        self._logical_end = 0  # logical offset just past everything decompressed so far
        self._member_starts: list[int] = []  # logical start of each member seen
        self._member_offsets: list[int] = []  # its file offset
        self._raw_eof = False

    # -- raw input --------------------------------------------------------------------------------

    def _raw_read_peek(self) -> bytes:
        return self.raw.read(_CHUNK)

    def _fill_cbuf(self) -> bool:
        if self._raw_eof:
            return False
        data = self.raw.read(_CHUNK)
        if not data:
            self._raw_eof = True
            return False
        self._cbuf = self._cbuf[self._ci:] + data if self._ci < len(self._cbuf) else data
        self._ci = 0
        return True

    def _cavail(self) -> int:
        return len(self._cbuf) - self._ci

    def _advance_c(self, n: int) -> None:
        self._ci += n
        self._cpos += n

    def _zstd_dictionary(self, head: bytes) -> Any:
        """The dictionary in the skippable frame (magic 0x184D2A5D) that opens the file, read from
        the file's start whatever offset this stream was opened at; None when there is none."""
        if self.start:
            position = self.raw.tell()
            self.raw.seek(0)
            first = self.raw.read(8)
        else:
            first = head[:8]
        if len(first) < 8 or not first.startswith(_ZSTD_DICT_MAGIC):
            return None
        size = int.from_bytes(first[4:8], "little")
        if self.start:
            data = self.raw.read(size)
            self.raw.seek(position)
        else:
            data = head[8:8 + size]
            if len(data) < size:
                self.raw.seek(8)
                data = self.raw.read(size)
                self.raw.seek(self.start + len(head))
        if data.startswith(ZSTD_MAGIC):  # a compressed dictionary
            try:
                data = self._zstandard.ZstdDecompressor().decompressobj().decompress(data)
            except self._zstandard.ZstdError:
                return None  # a damaged dictionary: the frames that need it are reported as bad_zstd
        return self._zstandard.ZstdCompressionDict(data)

    def _skip_to_member(self, reason: str, region_start: int, detail: str) -> None:
        """Drop compressed bytes up to the next gzip member (or zstd frame) header, recording the
        region skipped."""
        magic = ZSTD_MAGIC if self.zstd else GZIP_MAGIC
        while True:
            i = self._cbuf.find(magic, self._ci)
            if i >= 0:
                self._advance_c(i - self._ci)
                break
            keep = min(self._cavail(), len(magic) - 1)
            self._advance_c(self._cavail() - keep)
            if not self._fill_cbuf():
                self._advance_c(self._cavail())
                break
        self.problems.append((reason, region_start, f"{detail}; {self._cpos - region_start} bytes skipped"))

    # -- decompression ----------------------------------------------------------------------------

    def _next_chunk(self) -> bytes | None:
        """The next piece of uncompressed data; None at the end of the file or at a new gap."""
        if self.zstd:
            return self._next_zstd_chunk()
        if not self.gzip:
            if self._cavail():
                data, self._cbuf, self._ci = self._cbuf[self._ci:], b"", 0
            else:
                data = self.raw.read(_CHUNK)
            if not data:
                return None
            self._logical_end += len(data)
            return data
        while True:
            if self._dec is None:
                if self._cavail() < 18:
                    self._fill_cbuf()
                if not self._cavail():
                    return None
                if not self._cbuf.startswith(GZIP_MAGIC, self._ci):
                    self._skip_to_member("not_gzip", self._cpos, "bytes that are not a gzip member")
                    continue
                self._dec = zlib.decompressobj(31)
                self._member_off = self._cpos
                self._member_starts.append(self._logical_end)
                self._member_offsets.append(self._cpos)
            if not self._cavail() and not self._fill_cbuf():
                # the file ends inside this member
                self.truncated_member = self._member_off
                self._dec = None
                return None
            # a small input window: what follows the end of a member is copied into unused_data
            window = self._cview()[self._ci:self._ci + _IN_WINDOW]
            try:
                out = self._dec.decompress(window, _OUT_CHUNK)
            except zlib.error as exc:
                self._dec = None
                if self._cpos == self._member_off:
                    self._advance_c(1)  # do not find this member's own header again
                self._skip_to_member("bad_gzip", self._member_off, f"gzip member does not decompress ({exc})")
                self.at_gap = True
                return None
            if self._dec.eof:
                rest = len(self._dec.unused_data)
                self._dec = None
            else:
                rest = len(self._dec.unconsumed_tail)
            self._advance_c(len(window) - rest)
            if out:
                self._logical_end += len(out)
                return out

    def _next_zstd_chunk(self) -> bytes | None:
        """`_next_chunk` for zstd: frames for gzip members, the same bookkeeping and recovery."""
        while True:
            if self._zdec is None:
                if self._cavail() < 8:
                    self._fill_cbuf()
                if not self._cavail():
                    return None
                if _is_zstd_skippable(self._cbuf, self._ci):
                    if self._cavail() < 8:
                        self._advance_c(self._cavail())
                        continue
                    size = int.from_bytes(self._cbuf[self._ci + 4:self._ci + 8], "little")
                    self._skip_c(8 + size)  # a dictionary (already loaded) or the writer's own data
                    continue
                if not self._cbuf.startswith(ZSTD_MAGIC, self._ci):
                    self._skip_to_member("not_zstd", self._cpos, "bytes that are not a zstd frame")
                    continue
                self._zdec = self._zdctx.decompressobj()
                self._member_off = self._cpos
                self._member_starts.append(self._logical_end)
                self._member_offsets.append(self._cpos)
            if not self._cavail() and not self._fill_cbuf():
                # the file ends inside this frame
                self.truncated_member = self._member_off
                self._zdec = None
                return None
            window = self._cbuf[self._ci:self._ci + _ZSTD_WINDOW]
            try:
                out: bytes = self._zdec.decompress(window)
            except self._zstandard.ZstdError as exc:
                self._zdec = None
                if self._cpos == self._member_off:
                    self._advance_c(1)  # do not find this frame's own header again
                self._skip_to_member("bad_zstd", self._member_off, f"zstd frame does not decompress ({exc})")
                self.at_gap = True
                return None
            rest = 0
            if self._zdec.eof:
                rest = len(self._zdec.unused_data)
                self._zdec = None
            self._advance_c(len(window) - rest)
            if out:
                self._logical_end += len(out)
                return out

    def _skip_c(self, n: int) -> None:
        """Pass over `n` compressed bytes (fewer at the end of the file)."""
        while n > 0:
            if not self._cavail() and not self._fill_cbuf():
                return
            take = min(n, self._cavail())
            self._advance_c(take)
            n -= take

    def _cview(self) -> memoryview:
        if self._view_of is not self._cbuf:
            self._view, self._view_of = memoryview(self._cbuf), self._cbuf
        return self._view

    # -- logical reads ----------------------------------------------------------------------------

    def _more(self) -> bool:
        """Append the next chunk to the buffer; False at the end of the file or at a gap."""
        if self._eof or self.at_gap:
            return False
        data = self._next_chunk()
        if data is None:
            if not self.at_gap:
                self._eof = True
            return False
        if self._pos:
            self._base += self._pos
            self._buf = self._buf[self._pos:] + data
            self._pos = 0
        else:
            self._buf = self._buf + data if self._buf else data
        return True

    def resume(self) -> None:
        """Read on past a gap left by a damaged gzip member."""
        self.at_gap = False

    def tell(self) -> int:
        """The logical position of the next byte."""
        return self._base + self._pos

    def locate(self, logical: int) -> tuple[int, int]:
        """(file offset, inner offset) of a logical position: the member that holds it and the offset
        inside it, or the file offset and 0 for an uncompressed file."""
        if not (self.gzip or self.zstd):
            return self.start + logical, 0
        i = bisect.bisect_right(self._member_starts, logical) - 1
        if i < 0:
            return self.start, logical
        return self._member_offsets[i], logical - self._member_starts[i]

    def forget_before(self, logical: int) -> None:
        """Drop member bookkeeping no later `locate` will ask about."""
        i = bisect.bisect_right(self._member_starts, logical) - 1
        if i > 64:
            del self._member_starts[:i]
            del self._member_offsets[:i]

    def peek(self, n: int) -> bytes:
        while len(self._buf) - self._pos < n and self._more():
            pass
        return self._buf[self._pos:self._pos + n]

    def skip_blank_lines(self, limit: int | None = None) -> int:
        """Skip a run of blank lines (line ends, CR or LF) a buffer at a time, stopping once more
        than `limit` are skipped; returns how many. A run of a billion newlines (a gzip line bomb)
        costs its decompression up to the limit, not a Python step per byte."""
        skipped = 0
        while limit is None or skipped <= limit:
            if len(self._buf) - self._pos < 2:
                self.peek(2)
            end = _BLANK_RUN.match(self._buf, self._pos).end()  # type: ignore[union-attr]  # `*`: always matches
            if end == self._pos:
                return skipped
            skipped += self._buf.count(b"\n", self._pos, end)
            self._pos = end
            if end < len(self._buf) or not self._more():  # the run ends here, or with the file
                return skipped
        return skipped

    def skip_to_line_starting(self, prefix: bytes) -> int:
        """Skip to the next line after the current one that starts with `prefix` (left unread), or
        to the end of the file or a gap; returns the line ends skipped. A buffer at a time (a
        substring search): a billion lines of garbage cost their decompression, not a step each."""
        needle = b"\n" + prefix
        lines = 0
        while True:
            i = self._buf.find(needle, self._pos)
            if i >= 0:
                lines += self._buf.count(b"\n", self._pos, i + 1)
                self._pos = i + 1
                return lines
            keep = max(self._pos, len(self._buf) - len(needle) + 1)  # a needle cut by the buffer's end
            lines += self._buf.count(b"\n", self._pos, keep)
            self._pos = keep
            if not self._more():
                lines += self._buf.count(b"\n", self._pos)
                self._pos = len(self._buf)
                return lines

    def readline(self, limit: int) -> bytes:
        """Bytes up to and including the next newline, at most `limit` of them; b"" at the end."""
        while True:
            i = self._buf.find(b"\n", self._pos, self._pos + limit)
            if i >= 0:
                line = self._buf[self._pos:i + 1]
                self._pos = i + 1
                return line
            if len(self._buf) - self._pos >= limit or not self._more():
                n = min(limit, len(self._buf) - self._pos)
                line = self._buf[self._pos:self._pos + n]
                self._pos += n
                return line

    def take_until(self, sep: bytes, limit: int) -> bytes | None:
        """The bytes up to and including the first `sep` within `limit` bytes, consumed; None (and
        nothing consumed) when there is none before the limit, the end of the file or a gap."""
        start = self._pos
        while True:
            i = self._buf.find(sep, start, self._pos + limit)
            if i >= 0:
                out = self._buf[self._pos:i + len(sep)]
                self._pos = i + len(sep)
                return out
            have = len(self._buf) - self._pos
            if have >= limit:
                return None
            start = max(self._pos, len(self._buf) - len(sep) + 1)
            before = self._pos
            if not self._more():
                return None
            start -= before - self._pos  # the buffer was compacted: positions moved

    def read(self, n: int) -> bytes:
        """Up to `n` bytes; fewer only at the end of the file or at a gap."""
        avail = len(self._buf) - self._pos
        if avail >= n:
            out = self._buf[self._pos:self._pos + n]
            self._pos += n
            return out
        parts = [self._buf[self._pos:]]
        got = avail
        self._base += len(self._buf)
        self._buf, self._pos = b"", 0
        while got < n and self._more():
            take = self._buf[: n - got]
            parts.append(take)
            got += len(take)
            self._pos = len(take)
        return b"".join(parts)

    def skip(self, n: int) -> int:
        """Skip up to `n` bytes without holding them; returns how many were skipped."""
        done = 0
        while done < n:
            avail = len(self._buf) - self._pos
            if avail == 0 and not self._more():
                break
            take = min(n - done, len(self._buf) - self._pos)
            self._pos += take
            done += take
        return done

    def unread(self, data: bytes) -> None:
        """Put back bytes just read (they must be exactly the bytes before the current position)."""
        if not data:
            return
        if self._pos >= len(data):
            self._pos -= len(data)
            return
        self._buf = data + self._buf[self._pos:]
        self._base -= len(data)
        self._pos = 0
