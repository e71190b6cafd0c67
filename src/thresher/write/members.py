"""Shards made of independently compressed members, so that write tasks compress in parallel and the
assemble task only joins.

A member is a fixed run of `member_records` records counted from the shard's first record: member
`m` of a shard holds its records `m * R .. (m + 1) * R - 1` (the last one fewer). Its boundaries
follow from a record's index in the shard alone, never from how the input was partitioned or how
many workers wrote it, so a shard's bytes are the same whoever compressed which member. A format
whose file may be a concatenation of compressed members (a gzip file of several members reads as
one stream in Python's `gzip`, `zcat`, `datasets`) implements `member_records` and
`compress_member` (see `thresher.write.formats`).

Each member is compressed by the write task that holds its first record: a task skips the records
of a member begun in an earlier partition, and when its last member runs past its partition it
reads ahead, through the next partitions' documents with their decisions applied (the same lines
their own tasks write), until the member is complete or the data ends. A piece is then whole
members, and the assemble task copies the pieces, in partition order, into the shard.
"""

from __future__ import annotations

import shutil
import struct
import zlib
from collections.abc import Callable, Iterable
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


Compress = Callable[[bytes], bytes]


def owns(index: int, first_index: int, member_records: int) -> bool:
    """Whether a task whose records in a shard start at `first_index` compresses the record at
    `index`: it does unless the record's member began before `first_index`."""
    return index - index % member_records >= first_index


class MemberWriter:
    """Writes the members one write task compresses in one shard: `add(line, index)` with each
    record's index in the shard, in increasing order, from a member's first record on; a member is
    compressed and written when its last record arrives (`add` returns True)."""

    def __init__(self, out: IO[bytes], member_records: int, shard_records: int, compress: Compress) -> None:
        if member_records < 1:
            raise ValueError("member_records must be at least 1")
        self.out = out
        self.per_member = member_records
        self.per_shard = shard_records
        self.compress = compress
        self.first_member: int | None = None
        self.members = 0
        self.records = 0
        self.lines: list[bytes] = []
        self.next_index: int | None = None

    @property
    def open(self) -> bool:
        """A member is begun and not complete: its next records are in the following partitions."""
        return bool(self.lines)

    def add(self, line: bytes, index: int) -> bool:
        if self.next_index is not None and index != self.next_index:
            raise ValueError(f"record {index} where record {self.next_index} comes next")
        if not self.lines and index % self.per_member:
            raise ValueError(f"record {index} is inside a member: a writer starts at a member's first record")
        if self.first_member is None:
            self.first_member = index // self.per_member
        self.lines.append(line)
        self.next_index = index + 1
        if (index + 1) % self.per_member == 0 or index + 1 == self.per_shard:
            self._write()
            return True
        return False

    def finish(self) -> None:
        """The data ended inside the open member: it is the shard's last, written as it is."""
        self._write()

    def _write(self) -> None:
        if not self.lines:
            return
        self.out.write(self.compress(b"".join(self.lines)))
        self.members += 1
        self.records += len(self.lines)
        self.lines = []


def join_members(pieces: Iterable[tuple[Path, int, int]], out: IO[bytes]) -> None:
    """Copy pieces of whole members, `(path, first member, members)` in partition order, into `out`;
    `ValueError` when they do not follow each other from member 0."""
    expected = 0
    for path, first, members in pieces:
        if first != expected:
            raise ValueError(f"{path}: holds members from {first} on where member {expected} comes next")
        with open(path, "rb") as f:
            shutil.copyfileobj(f, out, COPY_CHUNK)
        expected += members
