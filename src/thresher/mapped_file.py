"""Files compiled once and memory-mapped read-only by every process of a build: the large URL lists
(`thresher.quality.list_store`) and the benchmark n-gram index (`thresher.decontam.index_store`).

Their pages come from the page cache, so every worker that maps the same file shares them instead of
holding a private copy. What the two kinds share is written here: the exclusive lock two compiling
processes take (the second waits, then maps the first one's file), the write to a temporary file
renamed into place (a reader never sees a partial file) and the read-only map.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import sys
from array import array
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO


@contextlib.contextmanager
def exclusive_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` (where `fcntl` exists; elsewhere the atomic rename alone keeps
    readers safe and two compiles only duplicate work)."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    with open(path, "a+b") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def write_atomically(path: Path, parts: Iterable[bytes | memoryview]) -> None:
    """Write `parts` one after the other to `path`: a temporary file beside it, synced, renamed."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            for part in parts:
                f.write(part)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def map_read_only(f: BinaryIO) -> memoryview | None:
    """A read-only map of the open file `f` as a memoryview (None for an empty file)."""
    fileno = f.fileno()
    if not os.fstat(fileno).st_size:
        return None
    return memoryview(mmap.mmap(fileno, 0, access=mmap.ACCESS_READ))


def read_chunks(f: BinaryIO, total: int, chunk: int = 1 << 20) -> Iterator[bytes]:
    """The next `total` bytes of `f` in chunks (read, not mapped: a checksum pass maps no pages)."""
    while total > 0:
        part = f.read(min(total, chunk))
        if not part:
            return
        total -= len(part)
        yield part


def little_endian(values: Any) -> memoryview:
    """The bytes of an array of numbers as stored in these files: little-endian."""
    if sys.byteorder != "little":
        values = array(values.typecode if hasattr(values, "typecode") else values.format, values)
        values.byteswap()
    return memoryview(values).cast("B")


def numbers(view: memoryview, typecode: str) -> Any:
    """The little-endian numbers in `view` (a slice of a map) as a sequence: the mapped pages
    themselves, or on a big-endian machine a private byte-swapped copy."""
    mapped: Any = view  # typeshed's cast() takes literal formats only
    values: Any = mapped.cast(typecode)
    if sys.byteorder != "little":
        values = array(typecode, values)
        values.byteswap()
    return values
