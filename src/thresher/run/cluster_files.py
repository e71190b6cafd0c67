"""The files of the partitioned cluster phase (`run/cluster_rounds.py`): where each task's files lie
in the work dir, the per-partition outputs a task commits only when it succeeds, and the NumPy reads
and routed writes of edge and label records."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from thresher.run.workdir import WorkDir


class Layout:
    """Where the partitioned cluster phase keeps its files in the work dir."""

    def __init__(self, work: WorkDir, partitions: int) -> None:
        self.root = work.path("cluster", f"n{partitions}")
        self.n = partitions

    def split_adj(self, s: int, q: int) -> Path:
        return self.root / "split" / f"s{s:05d}-q{q:04d}.adj"

    def split_half(self, s: int, q: int) -> Path:
        return self.root / "split" / f"s{s:05d}-q{q:04d}.half"

    def round_dir(self, r: int) -> Path:
        return self.root / f"r{r:03d}"

    def round_adj(self, r: int, src: int, dst: int) -> Path:
        return self.round_dir(r) / f"q{src:04d}-{dst:04d}.adj"

    def round_labels(self, r: int, src: int, dst: int) -> Path:
        return self.round_dir(r) / f"q{src:04d}-{dst:04d}.labels"

    def nodes(self, q: int) -> Path:
        return self.root / "rank" / f"q{q:04d}.nodes"

    def candidates(self, src: int, dst: int) -> Path:
        return self.root / "rank" / f"q{src:04d}-{dst:04d}.cand"

    def keepers(self, src: int, dst: int) -> Path:
        return self.root / "keepers" / f"q{src:04d}-{dst:04d}.keep"


class Outputs:
    """One file per destination partition, written through temp files renamed into place when the
    task succeeds (a killed task leaves none of them)."""

    def __init__(self, paths: Sequence[Path]) -> None:
        self.paths = list(paths)
        self.files: list[Any] = []

    def __enter__(self) -> Outputs:
        for path in self.paths:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.files.append(open(path.with_name(f".{path.name}.tmp-{os.getpid()}"), "wb"))
        return self

    def write(self, q: int, data: Any) -> None:
        if len(data):
            self.files[q].write(data.tobytes())

    def __exit__(self, exc_type: object, *exc: object) -> None:
        for f, path in zip(self.files, self.paths, strict=True):
            f.close()
            if exc_type is None:
                os.replace(f.name, path)
            else:
                Path(f.name).unlink(missing_ok=True)


def read_array(paths: Sequence[Path], dtype: Any) -> Any:
    import numpy as np

    parts = [np.fromfile(p, dtype=dtype) for p in paths]
    return np.concatenate(parts) if parts else np.empty(0, dtype=dtype)


def read_pairs(paths: Sequence[Path]) -> tuple[Any, Any]:
    pairs = read_array(paths, "<u8").reshape(-1, 2)
    return pairs[:, 0], pairs[:, 1]


def write_routed(out: Outputs, partitions: int, keys: Any, rows: Any) -> None:
    """Each row into the file of its key's partition (`thresher.stars.partition_of`)."""
    from thresher.stars import partition_of

    write_by(out, partitions, partition_of(keys, partitions), rows)


def write_by(out: Outputs, partitions: int, where: Any, rows: Any) -> None:
    """Each row into the file of its partition `where`, in order within a partition."""
    import numpy as np

    order = np.argsort(where, kind="stable")
    bounds = np.searchsorted(where[order], np.arange(partitions + 1))
    rows = rows[order]
    for q in range(partitions):
        out.write(q, rows[bounds[q] : bounds[q + 1]])


def pairs_array(keys: Any, nbrs: Any) -> Any:
    import numpy as np

    return np.stack((keys.astype("<u8"), nbrs.astype("<u8")), axis=1)
