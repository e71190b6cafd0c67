"""Execution settings: where tasks run and how the run reports. None of them changes the output,
so none of them enters the config hash."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from thresher.core.config import setting


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecConfig:
    # a name in the engine registry (thresher.run.engine_registry): the built-ins or a plugin's
    engine: str = setting(
        "pool", "where tasks run: in-process (local), a local process pool (pool), or Ray tasks (ray, the ray extra)",
        flag="--engine",
    )
    workers: int | None = setting(None, "worker processes for the pool engine (default: CPU count)", flag="--workers")
    ray_address: str | None = setting(
        None, "Ray cluster to join ('auto': the running one; none: start a local Ray instance)", flag="--ray-address"
    )
    retries: int = setting(2, "times a failed task is retried before the run stops", flag="--retries")
    key_partitions: int | None = setting(
        None,
        "group tasks per dedup stage (default: from the key volume the scan found; 16 from ~4 MiB of keys, fewer "
        "below)",
        flag="--key-partitions",
    )
    cluster_partitions: int | None = setting(
        None,
        "partitions the near-duplicate cluster phase splits its edges into, reduced in rounds of tasks that "
        "each hold one partition (same decisions as one task; needs NumPy above 1; default: 1 up to 16M edges, "
        "then one per 2M edges)",
        flag="--dedup-cluster-partitions",
    )
    progress_every: int = setting(
        10_000, "when stderr is not a terminal, print progress every N records (0: never)", flag="--progress-every"
    )
    strict: bool = setting(False, "any malformed input record fails the run (exit 1)", flag="--strict")
    max_malformed: int | None = setting(
        None, "more malformed records than this fail the run (exit 1)", flag="--max-malformed"
    )
    doc_deadline_s: float | None = setting(
        30.0,
        "hard per-document time limit in CPU seconds, enforced by a timer even inside one long regex or C call; a "
        "page that passes it is dropped as extract: timeout and counted as event/deadline_exceeded (CPU time, so a "
        "busy machine does not change it; machine speed does, so it is far above any normal page; 0 or none: off)",
        flag="--doc-deadline",
    )
    keep_work: bool = setting(False, "keep the work directory after a successful build", flag="--keep-work")
    work_dir: str | None = setting(
        None,
        "where a build keeps its work: a local or mounted folder (task files in DIR/.work, shards assembled in "
        "DIR, then moved or uploaded to the output; every worker must see it), or an object store URL "
        "(s3://bucket/prefix: no shared filesystem needed) (default: the output folder itself; for a URL output, "
        "a cache folder named after the URL)",
        flag="--work-dir",
    )

    def __post_init__(self) -> None:
        from thresher.run.engine_registry import ENGINES

        if self.engine not in ENGINES:
            raise ValueError(f"unknown engine {self.engine!r} (known: {', '.join(ENGINES.names())})")
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers must be at least 1 (or none: the CPU count), got {self.workers}")
        if self.cluster_partitions is not None and self.cluster_partitions < 1:
            raise ValueError(f"cluster_partitions must be at least 1 (or none: from the edge count), "
                             f"got {self.cluster_partitions}")
        if (self.cluster_partitions or 1) > 1 and importlib.util.find_spec("numpy") is None:
            raise ValueError("--dedup-cluster-partitions above 1 needs NumPy (the fast extra)")
        if self.retries < 0:
            raise ValueError(f"retries must be 0 or more, got {self.retries}")
