"""A build's phases in order, run on an engine: scan → group → verify → cluster → the phased corpus
stages' own phases → write → assemble (→ publish). Each phase is a list of tasks (`thresher.run.task`)
planned from the previous phase's typed results (`thresher.run.results`).

`phase_table` names every phase of a build: the build's own (`BUILD_PHASES`) and those its phased
stages declare (`thresher.core.phased.StagePhase`), with the function its tasks run, the result type
its completion markers decode to and the resources a task declares. The phased stages plan and run
their phases through `PhaseRunner` (`phased_stages`, `after_write`) and are known here only through
the stage table (`thresher.pipeline`). Tests inject faults by handing `build(..., tasks=
DEFAULT_TASKS.replace(scan=...))` replacement functions by phase name rather than patching module
names. `cluster_duplicates` runs the phases up to clustering: it is what `thresher dedup` and library
callers use to find duplicate clusters without writing a dataset.
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
from thresher.core.phased import AddedFile, KeptCorpus, PhasedStage, StageOutcome, StagePhase
from thresher.core.stats import Stats
from thresher.pipeline import build_corpus_stages, build_phased_stages, fork_server_preloads
from thresher.read.base import Partition
from thresher.run import progress
from thresher.run.calls import TaskResources
from thresher.run.candidates import group_task, verify_task
from thresher.run.cluster import cluster_task
from thresher.run.cluster_rounds import (
    cluster_partitions,
    decide_task,
    keepers_task,
    rank_task,
    round_task,
    run_rounds,
    split_task,
)
from thresher.run.engines import TaskCall, make_engine
from thresher.run.integrity import require_work_files
from thresher.run.output import publish_task
from thresher.run.plan import plan_group_ranges, prepare_workdir
from thresher.run.records import KEY_BUCKETS, PAIR_BUCKETS
from thresher.run.results import (
    ClusterResult,
    GroupResult,
    KeepersResult,
    Piece,
    Published,
    RankResult,
    RoundResult,
    ScanResult,
    ShardFile,
    SplitResult,
    VerifyResult,
    WriteResult,
)
from thresher.run.scan import partition_size, scan_task
from thresher.run.shards import assemble_task, write_task
from thresher.run.signals import build_layout, signals_section, signals_task
from thresher.run.task import TaskContext, describe_task, run_task
from thresher.run.workdir import WorkDir
from thresher.write.formats import get_format, member_codec

ProgressSink = Callable[[progress.Snapshot], None]


# The build's own phases: the function each one's tasks run, what their completion markers decode
# to, and what a task declares to a scheduler that places tasks by resources (Ray): one CPU and its
# expected peak memory with headroom, from the measured peaks (docs/benchmarks.md, the scale
# contract and memory sections): a scan worker holds the language models (~100 MiB, shared in a
# pool) and one partition's working set (<= 64 MiB partitions: ~170 MiB at most seen); group,
# verify, write and assemble tasks stream with 8 MiB caps; a cluster task holds ~80 B per colliding
# document; over N partitions (`--dedup-cluster-partitions`), a cluster-* task holds its partition's
# share of the edges (`thresher.run.cluster_rounds`). Phased corpus stages add their own
# (`thresher.core.phased.StagePhase`).
BUILD_PHASES = (
    StagePhase("scan", scan_task, ScanResult, memory_mib=512),
    StagePhase("group", group_task, GroupResult, memory_mib=256),
    StagePhase("verify", verify_task, VerifyResult, memory_mib=256),
    StagePhase("cluster", cluster_task, ClusterResult, memory_mib=1024),
    StagePhase("cluster-split", split_task, SplitResult, memory_mib=512),
    StagePhase("cluster-round", round_task, RoundResult, memory_mib=1024),
    StagePhase("cluster-rank", rank_task, RankResult, memory_mib=1024),
    StagePhase("cluster-keepers", keepers_task, KeepersResult, memory_mib=512),
    StagePhase("cluster-decide", decide_task, ClusterResult, memory_mib=1024),
    StagePhase("write", write_task, WriteResult, memory_mib=256),
    StagePhase("assemble", assemble_task, ShardFile, memory_mib=256),
    StagePhase("publish", publish_task, Published, memory_mib=128),
    StagePhase("signals", signals_task, ShardFile, memory_mib=256),
)


def phase_table(config: RunConfig) -> dict[str, StagePhase]:
    """Every phase a build of `config` may run, by name: the build's own, then its phased stages'."""
    table = {phase.name: phase for phase in BUILD_PHASES}
    for stage in build_phased_stages(config):
        for phase in stage.phases:
            if phase.name in table:
                raise ValueError(f"corpus stage {stage.name!r} declares a phase {phase.name!r} that already exists")
            table[phase.name] = phase
    return table


def task_resources(phase: StagePhase, config: RunConfig) -> TaskResources:
    """One CPU, the phase's memory, and a GPU when the phase asks for one for this config."""
    gpus = 1.0 if phase.gpu is not None and phase.gpu(config) else 0.0
    return TaskResources(cpus=1.0, gpus=gpus, memory_bytes=phase.memory_mib << 20)


class TaskTable:
    """Functions that replace what some phases run, by phase name (fault injection in tests:
    `build(..., tasks=DEFAULT_TASKS.replace(scan=...))`, rather than patching module names);
    `DEFAULT_TASKS.scan` is the build's own. Functions must be importable by name (pool and Ray
    workers receive them by reference)."""

    def __init__(self, **tasks: Callable[..., Any]) -> None:
        self.tasks = tasks

    def __getattr__(self, phase: str) -> Callable[..., Any]:
        for spec in BUILD_PHASES:
            if spec.name == phase:
                return self.tasks.get(phase, spec.task)
        raise AttributeError(phase)

    def replace(self, **tasks: Callable[..., Any]) -> TaskTable:
        return TaskTable(**{**self.tasks, **tasks})


DEFAULT_TASKS = TaskTable()


class PhaseRunner:
    """Runs a build's tasks on the configured engine, with progress and phase timing."""

    def __init__(
        self, work: WorkDir, ctx: TaskContext, on_progress: ProgressSink | None, tasks: TaskTable = DEFAULT_TASKS
    ) -> None:
        config = ctx.config
        self.work = work
        self.ctx = ctx
        self.tasks = tasks
        self.phases = phase_table(config)
        unknown = sorted(set(tasks.tasks) - set(self.phases))
        if unknown:
            raise ValueError(f"tasks replaced for phases this build does not have: {', '.join(unknown)}")
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
        spec = self.phases[phase]
        fn = self.tasks.tasks.get(phase, spec.task)
        return TaskCall(
            run_task,
            (fn, spec.result, self.ctx, task_id, *args),
            describe_task(task_id, args),
            log_path,
            weight=weight,
            resources=task_resources(spec, self.ctx.config),
        )

    @property
    def config(self) -> RunConfig:  # what a phased stage reads (`thresher.core.phased.PhaseDriver`)
        return self.ctx.config

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

        results = self.engine.run(calls, on_done=done)
        if self.ctx.store_url is not None:  # an object work store: what the driver reads next, mirrored
            from thresher.run.store_build import sync_driver

            sync_driver(self.ctx.store_url, self.work.root.parent)
        return results

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
    `later` counts, per partition, the documents the phased stages dropped after it, and `outcomes`
    holds what each of those stages decided (in the order they ran)."""

    grouped: GroupedRun
    cluster: ClusterResult
    later: dict[int, int] = field(default_factory=dict)
    outcomes: tuple[tuple[PhasedStage, StageOutcome], ...] = ()

    def kept(self) -> list[int]:
        """Per partition (in order), the documents the write task keeps."""
        dropped = self.cluster.dropped
        return [r.survivors - dropped.get(p.index, 0) - self.later.get(p.index, 0)
                for p, r in zip(self.grouped.partitions, self.grouped.scan_results, strict=True)]


def cluster_phase(runner: PhaseRunner, grouped: GroupedRun) -> ClusteredRun:
    """One cluster task, or over partitions in rounds of tasks (`thresher.run.cluster_rounds`) when
    `--dedup-cluster-partitions` (or the edge count) asks for more than one: the same decisions."""
    require_work_files(grouped.edge_files, "cluster")  # a lost edge file would keep its duplicates
    partitions = cluster_partitions(runner.config.exec.cluster_partitions, grouped.edge_files)
    if partitions == 1:
        (result,) = runner.phase("cluster", [runner.call("cluster", "cluster")])
        return ClusteredRun(grouped, result)
    index = {stage.name: si for si, stage in enumerate(build_corpus_stages(runner.config))}
    edge_files = sorted((index[path.parent.name], path) for path in grouped.edge_files)
    return ClusteredRun(grouped, run_rounds(runner, runner.work, edge_files, partitions).result)


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
    needed += [work.stage_decisions(stage.name, p)
               for stage, outcome in clustered.outcomes for p, n in outcome.dropped.items() if n]
    if ctx.write_rejects:
        needed += [work.scan_rejects(p.index) for p in grouped.partitions]
    require_work_files(needed, "write")
    stages = [stage.name for stage, _ in clustered.outcomes]  # whose decisions files apply, in order
    # each partition knows its first global index from the cluster's drop counts
    kept_counts = clustered.kept()
    starts = []
    g = 0
    for kept in kept_counts:
        starts.append(g)
        g += kept
    following = following_partitions([p.index for p in grouped.partitions], kept_counts, ctx.config)
    stats = Stats()

    def fold_write(r: WriteResult) -> WriteResult:  # as the scan's: the counters into one total
        nonlocal stats
        stats += r.stats
        return replace(r, stats=Stats())

    write_results: list[WriteResult] = runner.phase(
        "write",
        [runner.call("write", f"write-{p.index:06d}", p.index, starts[i], stages, following[i])
         for i, p in enumerate(grouped.partitions)],
        fold=fold_write,
    )
    stats = Stats() + stats
    # assemble: one task per shard, pieces in partition order
    pieces: dict[int, list[Piece]] = defaultdict(list)
    for w in write_results:
        for piece in w.pieces:
            pieces[piece.shard].append(piece)
    shards: list[ShardFile] = runner.phase(
        "assemble", [runner.call("assemble", f"assemble-{k:05d}", k, len(pieces), pieces[k]) for k in sorted(pieces)]
    )
    return shards, stats


def following_partitions(partitions: list[int], kept: list[int], config: RunConfig) -> list[tuple[int, ...]]:
    """Per partition, the partitions after it that its write task may read to complete its last
    member (a format of compressed members, `thresher.write.members`): the next ones until they
    keep a member's records between them, or all the rest."""
    codec = member_codec(get_format(config.output.format, config.output.compression_level))
    if codec is None:
        return [()] * len(partitions)
    out = []
    for i in range(len(partitions)):
        reach: list[int] = []
        records = 0
        for j in range(i + 1, len(partitions)):
            if records >= codec.records:
                break
            reach.append(partitions[j])
            records += kept[j]
        out.append(tuple(reach))
    return out


def signals_phase(runner: PhaseRunner, clustered: ClusteredRun) -> tuple[list[ShardFile], dict[str, Any]]:
    """The signals table (`build --signals`): one part file per input partition in the stage
    folder, and the manifest's `signals` section (`thresher.run.signals`)."""
    partitions = [p.index for p in clustered.grouped.partitions]
    layout = build_layout(runner.work, partitions)
    stages = [stage.name for stage, _ in clustered.outcomes]
    starts, g = [], 0
    for kept in clustered.kept():
        starts.append(g)
        g += kept
    calls = [runner.call("signals", f"signals-{p:06d}", p, starts[i], stages, layout)
             for i, p in enumerate(partitions)]
    files: list[ShardFile] = runner.phase("signals", calls)
    return files, signals_section(layout, files, partitions)


def publish_phase(runner: PhaseRunner, shards: list[ShardFile], stage: Path, location: str) -> None:
    """Copy or upload the shards assembled in the stage folder to the output (each one marked)."""
    sizes = [s.bytes for s in shards]
    calls = [
        runner.call("publish", f"publish-{k:05d}", str(stage / s.path), location, s.path) for k, s in enumerate(shards)
    ]
    runner.phase("publish", calls, sizes, sum(sizes))


def kept_corpus(clustered: ClusteredRun) -> KeptCorpus:
    return KeptCorpus(tuple(p.index for p in clustered.grouped.partitions), tuple(clustered.kept()),
                      tuple(stage.name for stage, _ in clustered.outcomes))


def phased_stages(runner: PhaseRunner, clustered: ClusteredRun) -> ClusteredRun:
    """Run the phased corpus stages of the stage table (`thresher.pipeline.build_phased_stages`), in
    order, each over the documents kept so far; their drops are in the work dir and counted in the
    returned run for the write phase."""
    for stage in build_phased_stages(runner.ctx.config):
        outcome = stage.run(runner, kept_corpus(clustered))
        later = dict(clustered.later)
        for p, n in outcome.dropped.items():
            later[p] = later.get(p, 0) + n
        clustered = replace(clustered, later=later, outcomes=(*clustered.outcomes, (stage, outcome)))
    return clustered


def after_write(
    runner: PhaseRunner, clustered: ClusteredRun, shards: list[ShardFile]
) -> tuple[list[ShardFile], dict[str, Any]]:
    """What the phased stages add once the shards are assembled: files beside the shards (as shard
    entries: listed, published and cleaned like them) and manifest sections by key."""
    files: list[ShardFile] = []
    sections: dict[str, Any] = {}
    corpus = kept_corpus(clustered)
    for stage, outcome in clustered.outcomes:
        added = stage.after_write(runner, corpus, shards, outcome)
        files += [_as_shard_file(f) for f in added.files]
        if added.section is not None:
            sections[stage.section] = added.section
    return files, sections


def _as_shard_file(f: AddedFile) -> ShardFile:
    return ShardFile(path=f.path, records=f.records, bytes=f.bytes, sha256=f.sha256)
