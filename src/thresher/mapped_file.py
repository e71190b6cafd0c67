"""Files compiled once and read by every process of a build: the large URL lists
(`thresher.quality.list_store`) and the benchmark n-gram index (`thresher.decontam.index_store`).

Their pages come from the page cache, so every worker that reads the same file shares them instead of
holding a private copy. What the two kinds share is written here: the exclusive lock two compiling
processes take (the second waits, then reads the first one's file), the write to a temporary file
renamed into place (a reader never sees a partial file), the read-only map, and `PagedDigests`.

A map suits a file whose pages a build reads densely (the n-gram index: every document looks up
hundreds of n-grams). It does not suit a large sorted array looked up a few times per document at
scattered places (the FineWeb block list's 4.56 M domain digests, 36 MB): each lookup's bisection
faults ~22 pages across the file, the kernel maps whole page-cache folios around each fault, and
after a few hundred lookups a worker has the whole file mapped. Those pages are shared and clean,
but they are in every worker's resident set and in the build's PSS. `PagedDigests` reads instead:
one `pread` of one 4 KiB block per lookup, found through a small fence of every block's first
digest held in memory, so the file stays in the page cache (shared, reclaimable) and out of every
process.
"""

from __future__ import annotations

import bisect
import contextlib
import mmap
import os
import sys
import weakref
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


class PagedDigests:
    """Sorted distinct unsigned 64-bit numbers stored little-endian in a section of an open file,
    tested for membership by reading one block per lookup (see the module docstring). The file
    descriptor is this object's own (closed with it); `pread` takes no file position, so processes
    forked after it was opened may share it."""

    BLOCK = 512  # numbers per block: 4 KiB, one page, per lookup
    # blocks read per step while building the fence: 64 KiB, under glibc's mmap threshold, so the
    # buffer is reused from the heap; 1 MiB reads left ~2 MiB of freed heap in every worker
    _FENCE_CHUNK = 16

    def __init__(self, fd: int, offset: int, count: int) -> None:
        self._fd = os.dup(fd)
        weakref.finalize(self, os.close, self._fd)
        self._offset = offset
        self._count = count
        # the first number of every block: 8 bytes per 512 numbers (71 KB for 4.56 M)
        self._fence = array("Q")
        for chunk in self._chunks():
            self._fence.extend(chunk[::self.BLOCK])

    def _read(self, start: int, n: int) -> Any:
        data = os.pread(self._fd, 8 * n, self._offset + 8 * start)
        if len(data) != 8 * n:
            raise OSError(f"compiled file ended early: {len(data)} of {8 * n} bytes at {self._offset + 8 * start}")
        return numbers(memoryview(data), "Q")

    def __len__(self) -> int:
        return self._count

    def __contains__(self, value: object) -> bool:
        if not isinstance(value, int):
            return False
        i = bisect.bisect_right(self._fence, value) - 1
        if i < 0:
            return False
        start = i * self.BLOCK
        n = min(self.BLOCK, self._count - start)
        block = self._read(start, n)  # ~3 µs: a syscall and 4 KiB (a map's bisection: ~1.3 µs)
        j = bisect.bisect_left(block, value)
        return j < n and block[j] == value

    def _chunks(self) -> Iterator[Any]:
        """The numbers in order, `_FENCE_CHUNK` blocks at a time (each chunk starts a block)."""
        step = self.BLOCK * self._FENCE_CHUNK
        for start in range(0, self._count, step):
            yield self._read(start, min(step, self._count - start))

    def __iter__(self) -> Iterator[int]:
        for chunk in self._chunks():
            yield from chunk
