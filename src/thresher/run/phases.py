"""A build's phases in order, run on an engine: scan → group → verify → cluster → write → assemble
(→ publish). Each phase is a list of tasks (`thresher.run.task`) planned from the previous phase's
typed results (`thresher.run.results`).

`TaskTable` names the function each phase runs; the default is the real tasks, and tests inject
faults by handing `build(..., tasks=DEFAULT_TASKS.replace(scan=...))` another table rather than
patching module names. `cluster_duplicates` runs the phases up to clustering: it is what
`thresher dedup` and library callers use to find duplicate clusters without writing a dataset.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from thresher import stage_cache
from thresher.config import RunConfig
from thresher.core.errors import InputError
from thresher.core.stats import Stats
from thresher.embed.phase import embed_task, embeddings_section, shard_ranges, vectors_task
from thresher.embed.results import (
    AssignResult,
    BoundaryResult,
    CentroidsResult,
    DecideResult,
    EmbedResult,
    SemanticResult,
    VectorFile,
)
from thresher.embed.semantic_phase import (
    assign_task,
    boundary_task,
    centroids_task,
    decide_task,
    plan_cluster_ranges,
    semantic_task,
)
from thresher.pipeline import build_corpus_stages, fork_server_preloads
from thresher.read.base import Partition
from thresher.run import progress
from thresher.run.calls import TaskResources
from thresher.run.candidates import group_task, verify_task
from thresher.run.cluster import cluster_task, later_decisions
from thresher.run.engines import TaskCall, make_engine
from thresher.run.integrity import require_work_files
from thresher.run.output import publish_task
from thresher.run.plan import plan_group_ranges, prepare_workdir
from thresher.run.records import KEY_BUCKETS, PAIR_BUCKETS
from thresher.run.results import (
    ClusterResult,
    GroupResult,
    Published,
    ScanResult,
    ShardFile,
    TaskResult,
    VerifyResult,
    WriteResult,
)
from thresher.run.scan import partition_size, scan_task
from thresher.run.shards import assemble_task, write_task
from thresher.run.task import TaskContext, describe_task, run_task
from thresher.run.workdir import WorkDir

ProgressSink = Callable[[progress.Snapshot], None]


# What a task of each phase declares to a scheduler that places tasks by resources (Ray): one CPU,
# and its expected peak memory with headroom, from the measured peaks (docs/benchmarks.md, the scale
# contract and memory sections): a scan worker holds the language models (~100 MiB, shared in a
# pool) and one partition's working set (<= 64 MiB partitions: ~170 MiB at most seen); group,
# verify, write and assemble tasks stream with 8 MiB caps; a cluster task holds ~80 B per
# colliding document; an embed task holds its encoder (MiniLM ~90 MB, ONNX runtime) and a batch.
PHASE_MEMORY_MIB = {
    "scan": 512, "group": 256, "verify": 256, "cluster": 1024, "write": 256, "assemble": 256, "publish": 128,
    "embed": 2048, "centroids": 512, "assign": 512, "semantic": 1024, "boundary": 512, "decide": 512,
    "vectors": 256,
}


def task_resources(phase: str, config: RunConfig) -> TaskResources:
    """One CPU, the phase's memory, and a GPU for an embedding task when the encoder is to run on one
    (`--device cuda`; `auto` decides in the worker, so it asks for none)."""
    gpus = 1.0 if phase == "embed" and config.embed.device == "cuda" else 0.0
    return TaskResources(cpus=1.0, gpus=gpus, memory_bytes=PHASE_MEMORY_MIB.get(phase, 512) << 20)


@dataclass(frozen=True, slots=True)
class TaskTable:
    """The function each phase's tasks run. Functions must be importable by name (pool and Ray
    workers receive them by reference)."""

    scan: Callable[..., ScanResult] = scan_task
    group: Callable[..., GroupResult] = group_task
    verify: Callable[..., VerifyResult] = verify_task
    cluster: Callable[..., ClusterResult] = cluster_task
    write: Callable[..., WriteResult] = write_task
    assemble: Callable[..., ShardFile] = assemble_task
    publish: Callable[..., Published] = publish_task
    embed: Callable[..., EmbedResult] = embed_task
    centroids: Callable[..., CentroidsResult] = centroids_task
    assign: Callable[..., AssignResult] = assign_task
    semantic: Callable[..., SemanticResult] = semantic_task
    boundary: Callable[..., BoundaryResult] = boundary_task
    decide: Callable[..., DecideResult] = decide_task
    vectors: Callable[..., VectorFile] = vectors_task

    def replace(self, **tasks: Callable[..., Any]) -> TaskTable:
        return replace(self, **tasks)


DEFAULT_TASKS = TaskTable()

# What each phase's completion markers decode to.
RESULT_TYPES: dict[str, type[TaskResult]] = {
    "scan": ScanResult,
    "group": GroupResult,
    "verify": VerifyResult,
    "cluster": ClusterResult,
    "write": WriteResult,
    "assemble": ShardFile,
    "publish": Published,
    "embed": EmbedResult,
    "centroids": CentroidsResult,
    "assign": AssignResult,
    "semantic": SemanticResult,
    "boundary": BoundaryResult,
    "decide": DecideResult,
    "vectors": VectorFile,
}


class PhaseRunner:
    """Runs a build's tasks on the configured engine, with progress and phase timing."""

    def __init__(
        self, work: WorkDir, ctx: TaskContext, on_progress: ProgressSink | None, tasks: TaskTable = DEFAULT_TASKS
    ) -> None:
        config = ctx.config
        self.work = work
        self.ctx = ctx
        self.tasks = tasks
        self.aggregator = progress.Aggregator(on_progress)
        self.engine = make_engine(
            config.exec.engine,
            config.exec.workers,
            self.aggregator.tick,
            config.exec.retries,
            config.exec.ray_address,
            warmup=stage_cache.worker_warmup,
            preload=fork_server_preloads(config),
        )

    def call(self, phase: str, task_id: str, *args: Any, weight: float | None = None) -> TaskCall:
        """A task of `phase` for the engine; `weight` (its expected cost, e.g. the bytes it reads)
        lets the engine start the heaviest tasks first so that a phase does not end on a long one."""
        log_path = str(self.work.path("logs", f"{task_id}.log"))
        fn = getattr(self.tasks, phase)
        return TaskCall(
            run_task,
            (fn, RESULT_TYPES[phase], self.ctx, task_id, *args),
            describe_task(task_id, args),
            log_path,
            weight=weight,
            resources=task_resources(phase, self.ctx.config),
        )

    def phase(self, name: str, calls: list[TaskCall], task_bytes: list[int] | None = None, total_bytes: int = 0,
              fold: Callable[[Any], Any] | None = None) -> list[Any]:
        """Run a phase's tasks; `fold(result)`, when given, adds a finished task's result into the
        caller's running totals as it arrives and returns the slim form the phase keeps of it."""
        self.aggregator.start_phase(name, len(calls), total_bytes)
        sizes = task_bytes or [0] * len(calls)
        ids = [c.args[3] for c in calls]  # run_task's (fn, result type, ctx, task id, ...): what its ticks name

        def done(i: int, result: Any) -> Any:
            self.aggregator.task_done(sizes[i], result, ids[i])
            return None if fold is None else fold(result)

        return self.engine.run(calls, on_done=done)

    def close(self) -> None:
        self.engine.close()


@dataclass(frozen=True, slots=True)
class GroupedRun:
    """A run after its scan, group and verify phases: what the cluster phase reads."""

    work: WorkDir
    partitions: list[Partition]
    scan_results: list[ScanResult]
    stats: Stats
    edge_files: list[Path]  # every edge file the group and verify tasks wrote


def check_malformed(config: RunConfig, stats: Stats) -> None:
    n = stats.malformed
    if config.exec.strict and n:
        raise InputError(f"{n} malformed input record(s) and --strict is set (see the warnings above)")
    limit = config.exec.max_malformed
    if limit is not None and n > limit:
        raise InputError(f"{n} malformed input records, more than --max-malformed {limit}")


def scan_and_group(runner: PhaseRunner, partitions: list[Partition]) -> GroupedRun:
    """The scan phase, then the group and verify phases of every corpus stage."""
    config = runner.ctx.config
    part_bytes = [partition_size(p) for p in partitions]
    stages = build_corpus_stages(config)
    # Each scan result is folded into these totals as it arrives and kept without its counters and
    # key bytes (~110 KB a task): the driver's memory grows with the number of tasks by what the
    # later phases plan from, not by every task's statistics (a crawl of 90k WARC files is 90k tasks).
    stats = Stats()
    key_bytes = [[0] * KEY_BUCKETS for _ in stages]

    def fold_scan(r: ScanResult) -> ScanResult:
        nonlocal stats
        stats += r.stats
        for si, row in enumerate(r.key_bytes):
            totals = key_bytes[si]
            for b, n in enumerate(row):
                totals[b] += n
        return replace(r, stats=Stats(), key_bytes=())

    scan_results: list[ScanResult] = runner.phase(
        "scan",
        [runner.call("scan", f"scan-{p.index:06d}", p, weight=n) for p, n in zip(partitions, part_bytes, strict=True)],
        part_bytes,
        sum(part_bytes),
        fold=fold_scan,
    )
    stats = Stats() + stats  # as a sum of the tasks' stats: counters that came to zero left out
    check_malformed(config, stats)
    calls = []
    call_stage: list[int] = []
    group_ranges: list[list[int]] = []
    edge_files: list[Path] = []
    for si, stage in enumerate(stages):
        bucket_bytes = key_bytes[si]
        ranges = plan_group_ranges(bucket_bytes, config.exec.key_partitions)
        group_ranges.append([lo for lo, _ in ranges])
        for lo, hi in ranges:
            weight = sum(bucket_bytes[lo:hi])
            calls.append(
                runner.call(
                    "group", f"group-{stage.name}-{lo:04d}", si, lo, hi, [p.index for p in partitions], weight=weight
                )
            )
            call_stage.append(si)
            edge_files.append(runner.work.edges(stage.name, lo))
    group_results: list[GroupResult] = runner.phase("group", calls)
    pair_bytes = [[0] * PAIR_BUCKETS for _ in stages]
    for si, g in zip(call_stage, group_results, strict=True):
        stats += g.stats
        for b, n in enumerate(g.pair_bytes):
            pair_bytes[si][b] += n
    # verify: each distinct candidate pair once, in tasks planned from the pair bytes spilled
    calls = []
    for si, stage in enumerate(stages):
        if not sum(pair_bytes[si]):
            continue
        for lo, hi in plan_group_ranges(pair_bytes[si], config.exec.key_partitions):
            weight = sum(pair_bytes[si][lo:hi])
            calls.append(
                runner.call("verify", f"verify-{stage.name}-{lo:04d}", si, lo, hi, group_ranges[si], weight=weight)
            )
            edge_files.append(runner.work.edges(stage.name, lo, "v"))
    for v in runner.phase("verify", calls):
        stats += v.stats
    return GroupedRun(runner.work, partitions, scan_results, stats, edge_files)


@dataclass(frozen=True, slots=True)
class ClusteredRun:
    """A run after its cluster phase: the decisions are in the work dir (`iter_decisions`);
    `later` counts, per partition, the documents dropped after it (semantic dedup)."""

    grouped: GroupedRun
    cluster: ClusterResult
    later: dict[int, int] = field(default_factory=dict)

    def kept(self) -> list[int]:
        """Per partition (in order), the documents the write task keeps."""
        dropped = self.cluster.dropped
        return [r.survivors - dropped.get(p.index, 0) - self.later.get(p.index, 0)
                for p, r in zip(self.grouped.partitions, self.grouped.scan_results, strict=True)]


def cluster_phase(runner: PhaseRunner, grouped: GroupedRun) -> ClusteredRun:
    require_work_files(grouped.edge_files, "cluster")  # a lost edge file would keep its duplicates
    (result,) = runner.phase("cluster", [runner.call("cluster", "cluster")])
    return ClusteredRun(grouped, result)


def cluster_duplicates(
    inputs: Sequence[str],
    config: RunConfig,
    workdir: str | Path,
    *,
    on_progress: ProgressSink | None = None,
    tasks: TaskTable = DEFAULT_TASKS,
) -> ClusteredRun:
    """Run the scan, group, verify and cluster phases of a build into `workdir` (any previous plan
    there is discarded) and stop: the duplicate clusters and the keep policy's decisions are then in
    the work dir, exactly as a build would apply them. Writes no dataset."""
    work = WorkDir(workdir)
    work.root.mkdir(parents=True, exist_ok=True)
    _, partitions = prepare_workdir(work, list(inputs), config, write_rejects=False, overwrite=True)
    runner = PhaseRunner(work, TaskContext(config, str(work.root), False), on_progress, tasks)
    try:
        return cluster_phase(runner, scan_and_group(runner, partitions))
    finally:
        runner.close()


def write_phase(runner: PhaseRunner, clustered: ClusteredRun) -> tuple[list[ShardFile], Stats]:
    """Write each partition's kept documents into its pieces of the shards, then assemble the shards
    in the stage folder; returns the shards and the write phase's counts."""
    grouped = clustered.grouped
    dropped = clustered.cluster.dropped
    work, ctx = runner.work, runner.ctx
    needed = [work.scan_docs(p.index) for p in grouped.partitions] + [work.decisions(p) for p in dropped]
    needed += [later_decisions(work, p) for p, n in clustered.later.items() if n]
    if ctx.write_rejects:
        needed += [work.scan_rejects(p.index) for p in grouped.partitions]
    require_work_files(needed, "write")
    # each partition knows its first global index from the cluster's drop counts
    starts = []
    g = 0
    for kept in clustered.kept():
        starts.append(g)
        g += kept
    stats = Stats()

    def fold_write(r: WriteResult) -> WriteResult:  # as the scan's: the counters into one total
        nonlocal stats
        stats += r.stats
        return replace(r, stats=Stats())

    write_results: list[WriteResult] = runner.phase(
        "write",
        [runner.call("write", f"write-{p.index:06d}", p.index, starts[i]) for i, p in enumerate(grouped.partitions)],
        fold=fold_write,
    )
    stats = Stats() + stats
    # assemble: one task per shard, pieces in partition order
    pieces: dict[int, list[str]] = defaultdict(list)
    for w in write_results:
        for piece in w.pieces:
            pieces[piece.shard].append(piece.path)
    shards: list[ShardFile] = runner.phase(
        "assemble", [runner.call("assemble", f"assemble-{k:05d}", k, len(pieces), pieces[k]) for k in sorted(pieces)]
    )
    return shards, stats


def publish_phase(runner: PhaseRunner, shards: list[ShardFile], stage: Path, location: str) -> None:
    """Copy or upload the shards assembled in the stage folder to the output (each one marked)."""
    sizes = [s.bytes for s in shards]
    calls = [
        runner.call("publish", f"publish-{k:05d}", str(stage / s.path), location, s.path) for k, s in enumerate(shards)
    ]
    runner.phase("publish", calls, sizes, sum(sizes))


@dataclass(frozen=True, slots=True)
class EmbeddedRun:
    """A run after its embed (and semantic dedup) phases."""

    embedded: list[EmbedResult]
    semantic: dict[str, Any] | None  # what semantic dedup did, for the manifest; None when off


def semantic_phases(runner: PhaseRunner, clustered: ClusteredRun) -> tuple[ClusteredRun, EmbeddedRun]:
    """Embed the documents the cluster phase kept and, with `--semantic-dedup`, drop the semantic
    duplicates among them (`thresher.embed.phase`, `thresher.embed.semantic_phase`): the later drops go
    into the work dir beside the cluster phase's decisions, and the returned run counts them for the
    write phase."""
    config = runner.ctx.config
    partitions = [p.index for p in clustered.grouped.partitions]
    embedded: list[EmbedResult] = runner.phase("embed", [runner.call("embed", f"embed-{p:06d}", p) for p in partitions])
    semantic = None
    threshold = config.embed.semantic_threshold
    total = sum(r.rows for r in embedded)
    if threshold is not None and total:
        dimension = embedded[0].dimension
        rows = [[p, r.rows] for p, r in zip(partitions, embedded, strict=True)]
        (centroids,) = runner.phase("centroids", [runner.call("centroids", "centroids", rows, dimension)])
        assigned: list[AssignResult] = runner.phase(
            "assign", [runner.call("assign", f"assign-{p:06d}", p, dimension) for p in partitions]
        )
        # a task's rows: each cluster's own rows and its visitors (boundary rows compared there too)
        totals = [
            sum(a.counts[j] + (a.visitors[j] if a.visitors else 0) for a in assigned) for j in range(centroids.clusters)
        ]
        ranges = plan_cluster_ranges(totals, config.embed.semantic_cluster_rows)
        found: list[SemanticResult] = runner.phase(
            "semantic",
            [runner.call("semantic", f"semantic-{lo:06d}", lo, hi, partitions, dimension) for lo, hi in ranges],
        )
        (across,) = runner.phase("boundary", [runner.call("boundary", "boundary", [lo for lo, _ in ranges])])
        semantic = {"threshold": threshold, "clusters": centroids.clusters, "sample": centroids.sample,
                    "clusters_split": centroids.split, "margin": config.embed.semantic_margin,
                    "boundary_rows": sum(sum(a.visitors) for a in assigned),
                    "largest_cluster": max((r.largest for r in found), default=0),
                    "duplicates": sum(r.duplicates for r in found) + across.duplicates,
                    "boundary_duplicates": across.duplicates, "reattributed": across.reattributed}
    elif threshold is not None:
        semantic = {"threshold": threshold, "clusters": 0, "sample": 0, "largest_cluster": 0, "duplicates": 0}
    decided: list[DecideResult] = runner.phase(
        "decide", [runner.call("decide", f"decide-{p:06d}", p) for p in partitions]
    )
    later = {p: d.dropped for p, d in zip(partitions, decided, strict=True)}
    return replace(clustered, later=later), EmbeddedRun(embedded, semantic)


def vectors_phase(
    runner: PhaseRunner, clustered: ClusteredRun, embedded: EmbeddedRun, shards: list[ShardFile]
) -> tuple[list[VectorFile], dict[str, Any] | None]:
    """A vector file beside every shard, and the manifest's `embeddings` section (None: nothing embedded)."""
    if not embedded.embedded:
        return [], None
    per_shard = runner.ctx.config.output.shard_max_records
    pieces: list[list[Any]] = []
    g = 0
    for p, kept in zip(clustered.grouped.partitions, clustered.kept(), strict=True):
        end = g + kept
        while g < end:  # the partition's kept documents, cut where the shards are cut
            stop = min(end, (g // per_shard + 1) * per_shard)
            pieces.append([p.index, g // per_shard, stop - g])
            g = stop
    ranges = shard_ranges(pieces)
    dimension = embedded.embedded[0].dimension
    calls = [runner.call("vectors", f"vectors-{k:05d}", s.path, ranges[k], dimension) for k, s in enumerate(shards)]
    files: list[VectorFile] = runner.phase("vectors", calls)
    return files, embeddings_section(runner.ctx.config.embed, embedded.embedded, files, embedded.semantic)
