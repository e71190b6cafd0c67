"""Shard formats.

Write tasks emit *pieces*: each partition's share of each shard as plain JSONL lines. One assemble
task per shard then turns its pieces, in partition order, into the final file. So a shard's bytes
depend only on the kept documents and their order — never on how the input was partitioned or how
many workers wrote it — and shards are compressed in parallel.

A format implements `ShardFormat`: `suffix` and `assemble(pieces, dest) -> records`. For
`jsonl.gz` the gzip header carries mtime 0 and no file name, for byte-identical output.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from thresher.write.atomic import atomic_open


class ShardFormat(Protocol):
    suffix: str

    def shard_name(self, index: int, total: int) -> str:
        """The shard's path relative to the dataset folder."""
        ...

    def assemble(self, pieces: Sequence[Path], dest: Path) -> int:
        """Write the shard `dest` atomically from JSONL pieces, in order; return its record count."""
        ...


def iter_piece_lines(pieces: Sequence[Path]) -> Iterator[bytes]:
    for piece in pieces:
        with open(piece, "rb") as f:
            yield from f


def iter_piece_records(pieces: Sequence[Path]) -> Iterator[dict[str, Any]]:
    for line in iter_piece_lines(pieces):
        yield json.loads(line)


class JsonlGzFormat:
    suffix = ".jsonl.gz"

    def __init__(self, compression_level: int = 6) -> None:
        self.level = compression_level

    def shard_name(self, index: int, total: int) -> str:
        return f"shard-{index:05d}{self.suffix}"

    def assemble(self, pieces: Sequence[Path], dest: Path) -> int:
        n = 0
        with atomic_open(dest, "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=self.level, mtime=0) as gz:
                buffer: list[bytes] = []
                for line in iter_piece_lines(pieces):
                    buffer.append(line)
                    n += 1
                    if len(buffer) >= 512:
                        gz.write(b"".join(buffer))
                        buffer.clear()
                gz.write(b"".join(buffer))
        return n


class JsonlZstFormat:
    """JSONL in one zstd frame (the zstd extra). Same level, same bytes: zstd is deterministic."""

    suffix = ".jsonl.zst"

    def __init__(self, compression_level: int = 6) -> None:
        self.level = compression_level

    def shard_name(self, index: int, total: int) -> str:
        return f"shard-{index:05d}{self.suffix}"

    def assemble(self, pieces: Sequence[Path], dest: Path) -> int:
        try:
            import zstandard  # type: ignore[import-not-found]
        except ImportError as exc:
            from thresher.core.errors import ConfigError

            raise ConfigError("--format jsonl.zst needs the zstd extra: pip install 'thresher[zstd]'") from exc
        n = 0
        compressor = zstandard.ZstdCompressor(level=self.level, write_checksum=True)
        with atomic_open(dest, "wb") as raw, compressor.stream_writer(raw, closefd=False) as out:
            for line in iter_piece_lines(pieces):
                out.write(line)
                n += 1
        return n


class ParquetShards:
    """Parquet shards (the parquet extra) in the Hugging Face layout: `data/train-00000-of-000NN.parquet`."""

    suffix = ".parquet"

    def __init__(self) -> None:
        from thresher.write.parquet import ParquetFormat

        self.inner = ParquetFormat()

    def shard_name(self, index: int, total: int) -> str:
        from thresher.write.parquet import hf_shard_path

        return hf_shard_path(index, total)

    def assemble(self, pieces: Sequence[Path], dest: Path) -> int:
        return self.inner.assemble(pieces, dest)


def get_format(name: str, compression_level: int = 6) -> ShardFormat:
    if name == "jsonl.gz":
        return JsonlGzFormat(compression_level)
    if name == "jsonl.zst":
        return JsonlZstFormat(compression_level)
    if name == "parquet":
        return ParquetShards()
    raise ValueError(f"unknown shard format {name!r}")
