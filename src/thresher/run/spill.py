"""The bucketed work files that scan, group and verify hand on: key and pair records spilled by
bucket in bounded memory (`BucketSpill`, `thresher.write.buckets`), read back a range of buckets at a
time (`read_bucket_range`), and random access to the scan's payload files (`Payloads`).
"""

from __future__ import annotations

import os
from typing import Any

from thresher.read.base import ordinal_partition
from thresher.run.workdir import WorkDir
from thresher.write.buckets import SPILL_BYTES, BucketSpill, read_bucket_range

__all__ = ["SPILL_BYTES", "BucketSpill", "Payloads", "read_bucket_range"]

class Payloads:
    """Random access to scan payloads by (partition, offset, length); files opened on demand."""

    def __init__(self, work: WorkDir, stage: str) -> None:
        self.work = work
        self.stage = stage
        self.files: dict[int, Any] = {}

    def read(self, ordinal: int, offset: int, length: int) -> bytes:
        if length == 0:
            return b""
        p = ordinal_partition(ordinal)
        f = self.files.get(p)
        if f is None:
            f = self.files[p] = open(self.work.payload(self.stage, p), "rb")
        return os.pread(f.fileno(), length, offset)

    def close(self) -> None:
        for f in self.files.values():
            f.close()
