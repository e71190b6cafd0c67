"""Shard formats. Each write task writes *pieces* (its partition's share of each shard it touches);
the finalize step assembles the pieces of a shard, in partition order, into the final shard. So
shard boundaries and bytes depend only on the kept documents and their order, never on how many
workers wrote them.

A format implements `ShardFormat`: `suffix`, `write_piece(records, path)` and
`assemble(pieces, dest)`. For `jsonl.gz` a piece is one gzip member (header with mtime 0 and no
file name, for byte-identical output) and assembling is concatenation: a multi-member gzip file is
one valid gzip stream for every reader.
"""

from __future__ import annotations

import gzip
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from thresher.write.atomic import atomic_open, dumps_line


class ShardFormat(Protocol):
    suffix: str

    def write_piece(self, records: Iterable[dict[str, Any]], path: Path) -> int:
        """Write records to a piece file; return how many."""
        ...

    def assemble(self, pieces: Sequence[Path], dest: Path) -> None:
        """Write the shard `dest` atomically from its pieces, in order."""
        ...


class JsonlGzFormat:
    suffix = ".jsonl.gz"

    def __init__(self, compression_level: int = 6) -> None:
        self.level = compression_level

    def write_piece(self, records: Iterable[dict[str, Any]], path: Path) -> int:
        n = 0
        with atomic_open(path, "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=self.level, mtime=0) as gz:
                buffer: list[bytes] = []
                for record in records:
                    buffer.append(dumps_line(record))
                    n += 1
                    if len(buffer) >= 256:
                        gz.write(b"".join(buffer))
                        buffer.clear()
                if buffer:
                    gz.write(b"".join(buffer))
        return n

    def assemble(self, pieces: Sequence[Path], dest: Path) -> None:
        with atomic_open(dest, "wb") as out:
            for piece in pieces:
                with open(piece, "rb") as f:
                    shutil.copyfileobj(f, out, 1 << 20)

    @staticmethod
    def read(path: Path) -> Iterable[dict[str, Any]]:
        import json

        with gzip.open(path, "rb") as f:
            for line in f:
                yield json.loads(line)


def get_format(name: str, compression_level: int = 6) -> ShardFormat:
    if name == "jsonl.gz":
        return JsonlGzFormat(compression_level)
    if name == "parquet":
        from thresher.write.parquet import ParquetFormat  # type: ignore[import-not-found]

        return ParquetFormat()  # type: ignore[no-any-return]
    raise ValueError(f"unknown shard format {name!r}")
