"""The embed phases' work files: each partition's float32 rows and their meta records, the files a
semantic task leaves for the boundary task, and how they are named and mapped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from thresher.run.workdir import WorkDir

# the phased stage's name (`thresher.embed.stage`, `dedup.stages`): its decisions files are
# `decisions/pXXXXXX.semantic.jsonl`
PHASED_STAGE = "semantic"

CHUNK_ROWS = 8192  # rows read, assigned or written at a time

# the per-row record beside each vector: what the keep policy and a drop's detail need
META_FIELDS = [("ordinal", "<u8"), ("id", "S8"), ("length", "<u4"), ("quality", "<f4")]


def id_hex(raw: bytes) -> str:
    """The 16 hex digits of an 8-byte id read from a meta array: NumPy's `S8` drops trailing zero
    bytes, so an id ending in 00 would otherwise name no document."""
    return bytes(raw).ljust(8, b"\0").hex()


def meta_record_dtype() -> Any:
    import numpy as np

    return np.dtype(META_FIELDS)


def work_files(work: WorkDir, p: int) -> dict[str, Path]:
    """Partition p's files: its rows and meta (embed), sorted by cluster (assign), its drops (semantic)."""
    stem = f"p{p:06d}"
    return {
        "vectors": work.path("embed", f"{stem}.f32"),
        "meta": work.path("embed", f"{stem}.meta"),
        "failed": work.path("embed", f"{stem}.failed.jsonl"),
        "sorted_vectors": work.path("semantic", f"{stem}.f32"),
        "sorted_meta": work.path("semantic", f"{stem}.meta"),
        "counts": work.path("semantic", f"{stem}.counts"),
        "drops": work.path("semantic", "drops", stem),
    }


def range_files(work: WorkDir, lo: int) -> dict[str, Path]:
    """What the semantic task of the cluster range starting at `lo` leaves for the boundary task."""
    return {
        "edges": work.path("semantic", "edges", f"c{lo:06d}.edges"),  # boundary pairs, `_edge_dtype`
        "dropped": work.path("semantic", "edges", f"c{lo:06d}.dropped"),  # (ordinal, kept ordinal) of its drops
    }


def via_file(work: WorkDir) -> Path:
    """The boundary task's re-attributions, which every decide task reads."""
    return work.path("semantic", "via.bin")


class MappedRows:
    """A partition's float32 rows, mapped read-only (nothing read until used). `release()` drops
    the pages read so far from this process's resident set (they stay in the page cache, and are
    read back on the next touch): a task walking a partition's rows in chunks then holds about one
    chunk resident, not the whole file it mapped (a 64 MiB partition of short texts is ~200 MiB
    of 256-dimension rows)."""

    def __init__(self, path: Path, dimension: int) -> None:
        import mmap

        import numpy as np

        self._map: Any = None
        if path.stat().st_size == 0:
            self.rows = np.zeros((0, dimension), dtype="<f4")
            return
        with open(path, "rb") as f:
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        self.rows = np.frombuffer(self._map, dtype="<f4").reshape(-1, dimension)

    def release(self) -> None:
        import mmap

        if self._map is not None and hasattr(mmap, "MADV_DONTNEED"):
            self._map.madvise(mmap.MADV_DONTNEED)


def map_vectors(path: Path, dimension: int) -> MappedRows:
    """A partition's rows file, mapped (`MappedRows`)."""
    return MappedRows(path, dimension)


def read_meta(path: Path) -> Any:
    """A partition's meta records (`META_FIELDS`), one per row."""
    import numpy as np

    return np.fromfile(path, dtype=meta_record_dtype())
