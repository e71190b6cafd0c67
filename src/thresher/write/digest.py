"""A shard's size and sha256 taken from the bytes as they are written, so nothing reads a finished
shard back to hash it for the manifest (`thresher.write.manifest`)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from thresher.write.atomic import atomic_open


class DigestWriter:
    """A binary write-only stream over `raw` that counts and hashes every byte on its way through.

    Enough of a file for `gzip.GzipFile(fileobj=)`, zstandard's `stream_writer` and pyarrow's
    `ParquetWriter` (which asks `tell()` for offsets). `close()` leaves `raw` open: its owner
    (`atomic_open`) syncs and renames it."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self._sha256 = hashlib.sha256()
        self.bytes = 0
        self.closed = False

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")  # bytes, bytearray, or a buffer from a compressor
        self._sha256.update(view)
        self.raw.write(view)
        self.bytes += len(view)
        return len(view)

    def tell(self) -> int:
        return self.bytes

    def flush(self) -> None:
        self.raw.flush()

    def close(self) -> None:
        self.closed = True

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False

    def seekable(self) -> bool:
        return False

    @property
    def sha256(self) -> str:
        return self._sha256.hexdigest()


@contextmanager
def digested_file(dest: str | Path) -> Iterator[DigestWriter]:
    """Write `dest` atomically through a `DigestWriter`; its `bytes` and `sha256` are the file's
    once the block ends."""
    with atomic_open(dest, "wb") as raw:
        writer = DigestWriter(raw)
        yield writer
