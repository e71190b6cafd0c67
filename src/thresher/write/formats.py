"""Shard formats: the `ShardFormat` protocol and the registry of formats by name (`--format`).

Write tasks emit *pieces*: each partition's share of each shard as plain JSONL lines
(`thresher.write.pieces`). One assemble task per shard then turns its pieces, in partition order,
into the final file. So a shard's bytes depend only on the kept documents and their order — never
on how the input was partitioned or how many workers wrote it — and shards are compressed in parallel.

A format is one module with a class implementing `ShardFormat`, plus one line in `FORMATS` (or an
entry point in the `thresher.formats` group for a third-party package): the registered object is
called with the configured compression level and returns the format.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

from thresher.registry import Registry


class ShardFormat(Protocol):
    name: str
    suffix: str

    def shard_name(self, index: int, total: int) -> str:
        """The shard's path relative to the dataset folder."""
        ...

    def assemble(self, pieces: Sequence[Path], dest: Path) -> int:
        """Write the shard `dest` atomically from JSONL pieces, in order; return its record count."""
        ...

    # Optional, and what a build uses when a format has it (`shard_writer`):
    # `write_shard(pieces, out: IO[bytes]) -> int` writes the same bytes as `assemble` into an open
    # binary stream (write-only, `tell()` answered, left open), so the build takes the shard's size
    # and sha256 from the bytes as they go out instead of reading the file back.

    def read(self, raw: IO[bytes]) -> Iterator[dict[str, Any]]:
        """The records of one shard, from its bytes (a seekable binary stream)."""
        ...

    # Optional, together: `member_records: int` and `compress_member(data: bytes) -> bytes`, for a format
    # whose file may be a concatenation of compressed members (`thresher.write.members`): its shard is
    # one member per `member_records` records, each `compress_member` of their lines, and write tasks
    # then compress the members inside their records in parallel. `write_shard` must write the same
    # bytes from plain pieces.

    # Optional: `hub_features`, the records' `(column, datasets dtype)` pairs the card declares (for a
    # format whose files carry no schema, such as JSON Lines).

    def card(self, text: str) -> str:
        """The dataset card (README.md) for this format, given the rendered card (e.g. a section on the
        shard format). The `configs` front matter naming the manifest's shards is added before it
        (`thresher.write.hub`), unless the returned card starts with a front matter of its own."""
        ...


FormatFactory = Callable[[int], ShardFormat]

FORMATS: Registry[FormatFactory] = Registry(
    "output format",
    "thresher.formats",
    {
        "jsonl.gz": "thresher.write.jsonl:JsonlGzFormat",
        "jsonl.zst": "thresher.write.jsonl:JsonlZstFormat",
        "parquet": "thresher.write.parquet:ParquetShards",
    },
)


def get_format(name: str, compression_level: int = 6) -> ShardFormat:
    return FORMATS.get(name)(compression_level)


ShardWriter = Callable[[Sequence[Path], IO[bytes]], int]


def hub_features(fmt: ShardFormat) -> tuple[tuple[str, str], ...]:
    """The format's `hub_features`, or none (see `ShardFormat`)."""
    features = getattr(fmt, "hub_features", ())
    return tuple(features) if isinstance(features, tuple) else ()


@dataclass(frozen=True, slots=True)
class MemberCodec:
    """How a format's shard splits into members: records per member and the compressor of one."""

    records: int
    compress: Callable[[bytes], bytes]


def member_codec(fmt: ShardFormat) -> MemberCodec | None:
    """The format's members (see `ShardFormat`), or None for a format written as one stream."""
    records = getattr(fmt, "member_records", None)
    compress = getattr(fmt, "compress_member", None)
    if not isinstance(records, int) or compress is None:
        return None
    return MemberCodec(records, compress)


def shard_writer(fmt: ShardFormat) -> ShardWriter | None:
    """The format's `write_shard`, or None for a format that only writes files (`assemble`)."""
    write: ShardWriter | None = getattr(fmt, "write_shard", None)
    return write
