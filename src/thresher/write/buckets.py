"""Bucketed work files: fixed-size records spilled by bucket in bounded memory (`BucketSpill`) and
read back a range of buckets at a time (`read_bucket_range`). The build's scan and group tasks hand
on their keys and pairs this way (`thresher.run.spill`), and so can a corpus stage's own tasks.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from thresher.write.atomic import atomic_open, write_work_json

SPILL_BYTES = 8 * 1024 * 1024  # per BucketSpill: records buffered before a run is written


class BucketSpill:
    """Fixed-size records written to one file by bucket, with bounded memory: records are buffered
    per bucket and spilled in *runs* of at most `spill_bytes` (each run holds every bucket's records
    since the last one, contiguously in bucket order). The `.idx` beside the file lists each run's
    bucket offsets, so a reader takes only its buckets (`read_bucket_range`). A scan task spills its
    dedup keys this way and a group task its candidate pairs, so neither grows with its input."""

    def __init__(self, path: Path, buckets: int, spill_bytes: int | None = None) -> None:
        self.path = path
        self.spill_bytes = spill_bytes or SPILL_BYTES
        self.buffers = [bytearray() for _ in range(buckets)]
        self.buffered = 0
        self.count = 0
        self.runs: list[list[int]] = []
        self.bucket_bytes = [0] * buckets
        self.position = 0
        self.cm: Any = None
        self.out: Any = None

    def __enter__(self) -> BucketSpill:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.cm = atomic_open(self.path, "wb", durable=False)
        self.out = self.cm.__enter__()
        return self

    def add(self, bucket: int, record: bytes) -> None:
        self.buffers[bucket] += record
        self.added(1, len(record))

    def added(self, count: int, nbytes: int) -> None:
        """Account for records the caller appended to `buffers` itself (the scan's hot loop)."""
        self.buffered += nbytes
        self.count += count
        if self.buffered >= self.spill_bytes:
            self._spill()

    def _spill(self) -> None:
        offsets = [self.position]
        for bucket, buf in enumerate(self.buffers):
            self.out.write(buf)
            self.position += len(buf)
            self.bucket_bytes[bucket] += len(buf)
            offsets.append(self.position)
            buf.clear()
        self.runs.append(offsets)
        self.buffered = 0

    def __exit__(self, *exc: Any) -> None:
        if exc[0] is None and self.buffered:
            self._spill()
        self.cm.__exit__(*exc)
        if exc[0] is None:
            write_work_json(self.path.with_suffix(".idx"), self.runs)


def read_bucket_range(path: Path, runs: list[list[int]], lo: int, hi: int, size: int) -> Iterator[bytes]:
    """The fixed-size records of buckets [lo, hi) of a bucketed file: each run lists its buckets'
    start offsets (plus its end), buckets stored contiguously in bucket order within a run."""
    if not any(offsets[hi] > offsets[lo] for offsets in runs):
        return
    with open(path, "rb") as f:
        for offsets in runs:
            start, end = offsets[lo], offsets[hi]
            if end > start:
                blob = os.pread(f.fileno(), end - start, start)
                yield from (blob[i : i + size] for i in range(0, len(blob), size))
