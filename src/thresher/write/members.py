"""Shards made of independently compressed members, so that write tasks compress in parallel and the
assemble task only joins.

A member is a fixed run of `member_records` records counted from the shard's first record: member
`m` of a shard holds its records `m * R .. (m + 1) * R - 1` (the last one fewer). Its boundaries
follow from a record's index in the shard alone, never from how the input was partitioned or how
many workers wrote it, so a shard's bytes are the same whoever wrote which member. A format whose
file may be a concatenation of compressed members (a gzip file of several members reads as one
stream in Python's `gzip`, `zcat` and `datasets`) implements `member_records` and
`compress_member` (see `thresher.write.formats`).

A write task writes each piece of a shard as *segments*, in order, into one file: a member that
starts and ends inside the task's records is compressed there (consecutive ones form one compressed
segment); the records of a member cut by a partition boundary are written raw, tagged with the
member. The assemble task copies compressed segments and compresses each cut member from its raw
segments (at most one per partition boundary), so it compresses at most `R` records per partition
instead of the whole shard.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

COPY_CHUNK = 1 << 20


def gzip_member(data: bytes, level: int) -> bytes:
    """One gzip member of `data`: the bytes `gzip.GzipFile(filename="", mtime=0)` writes at this
    level (header with mtime 0, no file name, OS 255), so a one-member shard is what a single
    stream would have been."""
    deflate = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS, zlib.DEF_MEM_LEVEL, 0)
    xfl = 2 if level == 9 else 4 if level == 1 else 0
    header = struct.pack("<BBBBIBB", 0x1F, 0x8B, 8, 0, 0, xfl, 255)
    trailer = struct.pack("<II", zlib.crc32(data) & 0xFFFFFFFF, len(data) & 0xFFFFFFFF)
    return b"".join((header, deflate.compress(data), deflate.flush(), trailer))


@dataclass(frozen=True, slots=True, kw_only=True)
class Segment:
    """A run of bytes in a piece file: `records` records of the shard from member `member` on,
    compressed (whole members) or raw JSONL lines (part of member `member`, cut by a partition
    boundary)."""

    member: int
    records: int
    bytes: int
    compressed: bool


Compress = Callable[[bytes], bytes]


class PieceWriter:
    """Writes one write task's share of one shard as segments: `add(line, index)` with the record's
    index in the shard, in increasing order; `close()` writes what is left and returns the segments."""

    def __init__(self, out: IO[bytes], member_records: int, shard_records: int, compress: Compress) -> None:
        if member_records < 1:
            raise ValueError("member_records must be at least 1")
        self.out = out
        self.per_member = member_records
        self.per_shard = shard_records
        self.compress = compress
        self.segments: list[Segment] = []
        self.lines: list[bytes] = []
        self.member = -1
        self.started_here = False

    def add(self, line: bytes, index: int) -> None:
        member = index // self.per_member
        if member != self.member:
            if self.lines:
                raise ValueError(f"record {index} starts member {member} before member {self.member} ended")
            self.member, self.started_here = member, index % self.per_member == 0
        self.lines.append(line)
        if (index + 1) % self.per_member == 0 or index + 1 == self.per_shard:
            self._flush(complete=True)

    def close(self) -> list[Segment]:
        self._flush(complete=False)
        return self.segments

    def _flush(self, *, complete: bool) -> None:
        if not self.lines:
            return
        data = b"".join(self.lines)
        records = len(self.lines)
        self.lines = []
        if complete and self.started_here:
            data = self.compress(data)
            last = self.segments[-1] if self.segments else None
            if last is not None and last.compressed:  # one segment for a run of whole members
                self.segments[-1] = Segment(member=last.member, records=last.records + records,
                                            bytes=last.bytes + len(data), compressed=True)
                self.out.write(data)
                return
        self.out.write(data)
        self.segments.append(Segment(member=self.member, records=records, bytes=len(data), compressed=complete
                                     and self.started_here))


def _read_exactly(f: IO[bytes], n: int, path: Path) -> Iterator[bytes]:
    while n > 0:
        chunk = f.read(min(n, COPY_CHUNK))
        if not chunk:
            raise ValueError(f"{path}: a segment runs past the end of the file")
        n -= len(chunk)
        yield chunk


def join_pieces(pieces: Iterable[tuple[Path, Sequence[Segment]]], out: IO[bytes], member_records: int,
                compress: Compress) -> int:
    """Write a shard from its pieces' segments (in partition order) into `out`: compressed segments
    are copied, each cut member is compressed from its raw segments. Returns the shard's record
    count; `ValueError` when the segments do not tile the shard's members in order."""
    pieces = list(pieces)
    total = sum(s.records for _, segments in pieces for s in segments)
    next_member = 0
    pending: list[bytes] = []
    pending_records = 0

    def flush() -> None:
        nonlocal pending, pending_records, next_member
        if not pending:
            return
        expected = min(member_records, total - next_member * member_records)
        if pending_records != expected:
            raise ValueError(f"member {next_member}: {pending_records} raw records, expected {expected}")
        out.write(compress(b"".join(pending)))
        pending, pending_records = [], 0
        next_member += 1

    for path, segments in pieces:
        with open(path, "rb") as f:
            for seg in segments:
                if seg.compressed or (pending and seg.member != next_member):
                    flush()
                if seg.member != next_member:
                    raise ValueError(f"{path}: segment of member {seg.member} where member {next_member} comes next")
                if seg.compressed:
                    first = seg.member * member_records
                    if seg.records % member_records and first + seg.records != total:
                        raise ValueError(f"{path}: a compressed segment of {seg.records} records is not whole members")
                    for chunk in _read_exactly(f, seg.bytes, path):
                        out.write(chunk)
                    next_member += -(-seg.records // member_records)
                else:
                    pending.append(b"".join(_read_exactly(f, seg.bytes, path)))
                    pending_records += seg.records
    flush()
    return total
