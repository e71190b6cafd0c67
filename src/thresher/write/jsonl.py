"""JSONL shard formats: `jsonl.gz` (gzip members of `MEMBER_RECORDS` records each, headers with mtime
0 and no file name, for byte-identical output; see `thresher.write.members`) and `jsonl.zst` (one
zstd frame, the zstd extra; zstd is deterministic at a given level)."""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from thresher.core.errors import ConfigError
from thresher.write.atomic import atomic_open
from thresher.write.hub import RECORD_FEATURES
from thresher.write.members import gzip_member
from thresher.write.pieces import iter_piece_lines

# Records per gzip member of a `jsonl.gz` shard: each write task compresses the members it begins,
# reading up to this many records ahead into the next partitions. Measured on recombined real
# paragraphs (~3.5 KB a record, level 6): members of 256 records make the shard 0.25% larger than
# one stream (128: 0.5%, 1,024: 0.06%).
MEMBER_RECORDS = 256


def _zstandard() -> Any:
    try:
        import zstandard
    except ImportError as exc:
        raise ConfigError("--format jsonl.zst needs the zstd extra: pip install 'thresher[zstd]'") from exc
    return zstandard


class JsonlGzFormat:
    name = "jsonl.gz"
    suffix = ".jsonl.gz"
    hub_features = RECORD_FEATURES  # the card's `dataset_info` (`thresher.write.hub`)
    member_records = MEMBER_RECORDS

    def __init__(self, compression_level: int = 6) -> None:
        self.level = compression_level

    def compress_member(self, data: bytes) -> bytes:
        return gzip_member(data, self.level)

    def shard_name(self, index: int, total: int) -> str:
        return f"shard-{index:05d}{self.suffix}"

    def assemble(self, pieces: Sequence[Path], dest: Path) -> int:
        with atomic_open(dest, "wb") as raw:
            return self.write_shard(pieces, raw)

    def write_shard(self, pieces: Sequence[Path], out: IO[bytes]) -> int:
        """The shard from plain JSONL pieces: one member per `member_records` lines (an empty shard is
        one empty member), the bytes a build writes from its write tasks' members."""
        n = 0
        member: list[bytes] = []
        for line in iter_piece_lines(pieces):
            member.append(line)
            n += 1
            if len(member) == self.member_records:
                out.write(self.compress_member(b"".join(member)))
                member.clear()
        if member or n == 0:
            out.write(self.compress_member(b"".join(member)))
        return n

    def read(self, raw: IO[bytes]) -> Iterator[dict[str, Any]]:
        with gzip.open(raw, "rb") as f:
            for line in f:
                yield json.loads(line)

    def card(self, text: str) -> str:
        return text


class JsonlZstFormat:
    name = "jsonl.zst"
    suffix = ".jsonl.zst"
    hub_features = RECORD_FEATURES

    def __init__(self, compression_level: int = 6) -> None:
        self.level = compression_level

    def shard_name(self, index: int, total: int) -> str:
        return f"shard-{index:05d}{self.suffix}"

    def assemble(self, pieces: Sequence[Path], dest: Path) -> int:
        with atomic_open(dest, "wb") as raw:
            return self.write_shard(pieces, raw)

    def write_shard(self, pieces: Sequence[Path], out: IO[bytes]) -> int:
        n = 0
        compressor = _zstandard().ZstdCompressor(level=self.level, write_checksum=True)
        with compressor.stream_writer(out, closefd=False) as zst:
            for line in iter_piece_lines(pieces):
                zst.write(line)
                n += 1
        return n

    def read(self, raw: IO[bytes]) -> Iterator[dict[str, Any]]:
        reader = io.BufferedReader(_zstandard().ZstdDecompressor().stream_reader(raw))
        for line in reader:
            yield json.loads(line)

    def card(self, text: str) -> str:
        return text
