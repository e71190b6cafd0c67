"""`build`: plan a run, execute its phases on an engine, finalize the dataset.

The driver only plans, hands tasks to the engine and assembles results; the work itself is in
`thresher.run.tasks`. Completion markers make a rerun of the same command resume where it stopped;
the manifest is removed first and written last, so an interrupted build never leaves a manifest that
claims completeness.

The output may be a local folder or an fsspec URL (`s3://bucket/prefix`). The build itself always
runs in a local (or mounted) folder, the stage (`thresher.run.workdir`): shards are assembled there,
byte for byte as for a local output, then a publish phase copies or uploads them to the output;
`stats.json`, the card and the manifest are written to the output directly, the manifest last.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from thresher import __version__
from thresher.config import RunConfig
from thresher.core.config import to_dict
from thresher.core.errors import InputError, WorkDirError
from thresher.core.stats import Stats
from thresher.extract.registry import extractor_info
from thresher.pipeline import build_corpus_stages
from thresher.read.base import Partition
from thresher.read.paths import input_size, local_path
from thresher.read.sources import plan_partitions
from thresher.run import progress
from thresher.run.engines import TaskCall, make_engine
from thresher.run.preflight import preflight
from thresher.run.records import KEY_BUCKETS, KEY_LAYOUT, PAIR_BUCKETS
from thresher.run.tasks import (
    TaskContext,
    assemble_task,
    cluster_task,
    describe_task,
    group_task,
    gzip_concat,
    malformed_examples,
    partition_size,
    run_task,
    scan_task,
    verify_task,
    write_task,
)
from thresher.run.workdir import BuildLock, WorkDir, default_work_dir
from thresher.write.atomic import dumps_json, write_json_atomic
from thresher.write.card import render_card
from thresher.write.manifest import FORMAT_VERSION, MANIFEST
from thresher.write.storage import LocalStore, Store, open_store

log = logging.getLogger(__name__)

# Group (and verify) tasks are planned from the key (pair) bytes the scan (group) phase wrote: about
# GROUP_TASK_BYTES each, at least MIN_GROUP_TASKS so every worker has work on small inputs. A key
# record is 52 bytes on disk and ~100 bytes in a group task's memory, so a task holds ~16 MB of
# records: the cap is reached from ~150k documents on, and peak memory stays flat beyond (a bigger
# corpus makes more tasks, not bigger ones).
GROUP_TASK_BYTES = 8 * 1024 * 1024
MIN_GROUP_TASKS = 16


@dataclass
class BuildResult:
    output: Path | str  # a folder, or the URL as given
    manifest: dict[str, Any]
    stats: Stats

    @property
    def ok(self) -> bool:
        return self.stats.reconciles()


def _spool_stdin(work: WorkDir) -> str:
    path = work.path("stdin.bin")
    tmp = path.with_name("stdin.bin.tmp")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(tmp, "wb") as out:
        shutil.copyfileobj(sys.stdin.buffer, out, 1 << 20)
    os.replace(tmp, path)
    return str(path)


_OUTPUT_NAMES = ("shard-", "data", "stats.json", "README.md")


def _check_output(target: Store, work: WorkDir) -> None:
    """Refuse an output that is a file, or a non-empty folder (prefix) that is neither a thresher
    dataset nor an unfinished build whose work dir is here."""
    if target.is_file():
        raise WorkDirError(f"{target.locate()}: exists and is not a directory")
    entries = target.names()
    if not entries or MANIFEST in entries or ".work" in entries or work.path("plan.json").exists():
        return
    if target.remote and all(e.startswith(_OUTPUT_NAMES) for e in entries):
        raise WorkDirError(
            f"{target.locate()}: holds shards but no manifest, an unfinished build whose work dir is not here; "
            "rerun with the --work-dir it used, or empty the location"
        )
    kind = "location" if target.remote else "directory"
    raise WorkDirError(f"{target.locate()}: not empty and not a thresher dataset; choose an empty or new output {kind}")


def stage_dir(target: Store, work_dir: str | None) -> tuple[Path, bool]:
    """The folder a build to `target` runs in (task files in its `.work/`, shards assembled in it)
    and whether thresher owns all of it (the default cache folder of a URL output)."""
    if work_dir is not None:
        return Path(local_path(work_dir)), False
    if isinstance(target, LocalStore):
        return target.root, False
    return default_work_dir(target.locate()), True


def _publishes(target: Store, stage: Path) -> bool:
    return not isinstance(target, LocalStore) or os.path.abspath(target.root) != os.path.abspath(stage)


def _target_location(target: Store) -> str:
    return os.path.abspath(target.root) if isinstance(target, LocalStore) else target.locate()


def _claim_work_dir(work: WorkDir, target: Store, overwrite: bool) -> None:
    """A work dir that is not the output's own `.work` records the output it publishes to; one that
    belongs to another output is refused (its publish markers would be wrong) unless `overwrite`."""
    import json

    path = work.path("output.json")
    location = _target_location(target)
    if path.exists():
        previous = json.loads(path.read_text(encoding="utf-8")).get("output")
        if previous != location:
            if not overwrite:
                raise WorkDirError(
                    f"{work.root} holds an unfinished build to {previous}; use another --work-dir, "
                    "or pass --overwrite to discard it"
                )
            _reset_workdir(work)
    write_json_atomic(path, {"output": location})


def publish_task(ctx: TaskContext, src: str, target: str, rel: str) -> dict[str, Any]:
    """Copy or upload one assembled shard from the stage to the output (a folder or a URL)."""
    open_store(target).put_file(Path(src), rel)
    return {"path": rel, "bytes": os.path.getsize(src)}


def build(
    inputs: Sequence[str],
    output: str | Path,
    config: RunConfig | None = None,
    *,
    rejects: str | Path | None = None,
    overwrite: bool = False,
    on_progress: Callable[[progress.Snapshot], None] | None = None,
) -> BuildResult:
    """Build a dataset from `inputs` into `output`, a folder or an fsspec URL. See the module
    docstring for the guarantees."""
    config = config or RunConfig()
    preflight(inputs, output, config, rejects=rejects)  # before any task: inputs, extras, outputs
    target = open_store(output)  # imports fsspec only for a URL
    stage, owned = stage_dir(target, config.exec.work_dir)
    work = WorkDir(stage / ".work")
    _check_output(target, work)
    work.root.mkdir(parents=True, exist_ok=True)
    with BuildLock(work):
        if _publishes(target, stage):
            _claim_work_dir(work, target, overwrite)
        return _build_locked(list(inputs), target, stage, owned, work, config, rejects, overwrite, on_progress)


@dataclass
class GroupedRun:
    """The state of a run after its scan and group phases: what the cluster phase (or the dedup
    report) reads from the work dir."""

    work: WorkDir
    ctx: TaskContext
    partitions: list[Partition]
    scan_results: list[dict[str, Any]]
    stats: Stats


class PhaseRunner:
    """Runs a build's tasks on the configured engine, with progress and phase timing."""

    def __init__(self, work: WorkDir, ctx: TaskContext, on_progress: Callable[[progress.Snapshot], None] | None) -> None:
        config = ctx.config
        self.work = work
        self.ctx = ctx
        self.aggregator = progress.Aggregator(on_progress)
        self.engine = make_engine(
            config.exec.engine, config.exec.workers, self.aggregator.tick, config.exec.retries, config.exec.ray_address
        )

    def call(self, fn: Any, task_id: str, *args: Any, weight: float | None = None) -> TaskCall:
        """A task for the engine; `weight` (its expected cost, e.g. the bytes it reads) lets the
        engine start the heaviest tasks first so that a phase does not end on a long one."""
        log_path = str(self.work.path("logs", f"{task_id}.log"))
        return TaskCall(run_task, (fn, self.ctx, task_id, *args), describe_task(task_id, args), log_path, weight=weight)

    def phase(self, name: str, calls: list[TaskCall], task_bytes: list[int] | None = None, total_bytes: int = 0) -> list[Any]:
        self.aggregator.start_phase(name, len(calls), total_bytes)
        sizes = task_bytes or [0] * len(calls)
        return self.engine.run(calls, on_done=lambda i, _: self.aggregator.task_done(sizes[i]))

    def close(self) -> None:
        self.engine.close()


def plan_group_ranges(bucket_bytes: list[int], tasks: int | None = None) -> list[tuple[int, int]]:
    """Contiguous key-bucket ranges for the group tasks of one corpus stage, balanced by the key
    bytes the scan actually wrote: about GROUP_TASK_BYTES each, at least MIN_GROUP_TASKS ranges
    (so every worker has work), or exactly `tasks` when given. Deterministic; the split never changes
    the output, only each group task's memory."""
    total = sum(bucket_bytes)
    n = tasks or max(MIN_GROUP_TASKS, -(-total // GROUP_TASK_BYTES))
    n = max(1, min(n, len(bucket_bytes)))
    target = total / n
    ranges: list[tuple[int, int]] = []
    lo = 0
    acc = 0
    for b, size in enumerate(bucket_bytes):
        acc += size
        if len(ranges) < n - 1 and acc >= target * (len(ranges) + 1):
            ranges.append((lo, b + 1))
            lo = b + 1
    ranges.append((lo, len(bucket_bytes)))
    return [r for r in ranges if r[0] < r[1]]


def scan_and_group(
    work: WorkDir,
    runner: PhaseRunner,
    partitions: list[Partition],
) -> GroupedRun:
    """The scan phase, then the group and verify phases of every corpus stage."""
    ctx = runner.ctx
    config = ctx.config
    part_bytes = [partition_size(p) for p in partitions]
    scan_results = runner.phase(
        "scan",
        [runner.call(scan_task, f"scan-{p.index:06d}", p, weight=n) for p, n in zip(partitions, part_bytes, strict=True)],
        part_bytes,
        sum(part_bytes),
    )
    stats = sum((Stats.from_dict(r["stats"]) for r in scan_results), Stats())
    _check_malformed(config, stats)
    stages = build_corpus_stages(config)
    calls = []
    call_stage: list[int] = []
    group_ranges: list[list[int]] = []
    for si, stage in enumerate(stages):
        bucket_bytes = [0] * KEY_BUCKETS
        for r in scan_results:
            for b, n in enumerate(r["key_bytes"][si]):
                bucket_bytes[b] += n
        ranges = plan_group_ranges(bucket_bytes, config.exec.key_partitions)
        group_ranges.append([lo for lo, _ in ranges])
        for lo, hi in ranges:
            weight = sum(bucket_bytes[lo:hi])
            calls.append(runner.call(group_task, f"group-{stage.name}-{lo:04d}", si, lo, hi, [p.index for p in partitions], weight=weight))
            call_stage.append(si)
    group_results = runner.phase("group", calls)
    pair_bytes = [[0] * PAIR_BUCKETS for _ in stages]
    for si, r in zip(call_stage, group_results, strict=True):
        stats += Stats.from_dict(r["stats"])
        for b, n in enumerate(r["pair_bytes"]):
            pair_bytes[si][b] += n
    # verify: each distinct candidate pair once, in tasks planned from the pair bytes spilled
    calls = []
    for si, stage in enumerate(stages):
        if not sum(pair_bytes[si]):
            continue
        for lo, hi in plan_group_ranges(pair_bytes[si], config.exec.key_partitions):
            weight = sum(pair_bytes[si][lo:hi])
            calls.append(runner.call(verify_task, f"verify-{stage.name}-{lo:04d}", si, lo, hi, group_ranges[si], weight=weight))
    for r in runner.phase("verify", calls):
        stats += Stats.from_dict(r["stats"])
    return GroupedRun(work, ctx, partitions, scan_results, stats)


def prepare_workdir(
    work: WorkDir, inputs: list[str], config: RunConfig, *, write_rejects: bool, overwrite: bool
) -> tuple[list[str], list[Partition]]:
    """Spool stdin, plan the partitions, and check (or write) the work dir's plan: a resume must
    find the same plan; another one is refused unless `overwrite`."""
    import json

    plan_path = work.path("plan.json")
    if "-" in inputs:
        spooled = work.path("stdin.bin")
        spooled_path = str(spooled) if plan_path.exists() and spooled.exists() else _spool_stdin(work)
        inputs = [spooled_path if i == "-" else i for i in inputs]
    partitions = plan_partitions(inputs, config.input)
    plan = {
        "thresher_version": __version__,
        "config_hash": config.hash,
        "write_rejects": write_rejects,
        "key_buckets": KEY_BUCKETS,
        "key_layout": KEY_LAYOUT,
        "corpus_stages": [s.name for s in build_corpus_stages(config)],
        "partitions": [[p.kind, list(p.paths), p.start, p.end] for p in partitions],
    }
    if plan_path.exists():
        previous = json.loads(plan_path.read_text(encoding="utf-8"))
        if previous != plan:
            if not overwrite:
                raise WorkDirError(
                    f"{work.root} holds an unfinished build with another config or input "
                    f"(config hash {previous.get('config_hash')} vs {config.hash}); rerun it as it was, "
                    "or pass --overwrite to discard it"
                )
            _reset_workdir(work)
        else:
            log.info("resuming the build in %s", work.root)
    write_json_atomic(plan_path, plan)
    return inputs, partitions


def _build_locked(
    inputs: list[str],
    target: Store,
    stage: Path,
    owned: bool,
    work: WorkDir,
    config: RunConfig,
    rejects: str | Path | None,
    overwrite: bool,
    on_progress: Callable[[progress.Snapshot], None] | None,
) -> BuildResult:
    # An interrupted run must never leave a manifest claiming completeness: remove it first.
    target.remove(MANIFEST)
    publishes = _publishes(target, stage)
    given_inputs = list(inputs)
    ctx = TaskContext(config, str(work.root), rejects is not None)
    runner = PhaseRunner(work, ctx, on_progress)  # first: a pool's workers start while the driver plans
    try:
        inputs, partitions = prepare_workdir(work, inputs, config, write_rejects=rejects is not None, overwrite=overwrite)
        grouped = scan_and_group(work, runner, partitions)
        stats = grouped.stats
        # cluster (one task: union-find over colliding documents only)
        (cluster,) = runner.phase("cluster", [runner.call(cluster_task, "cluster")])
        # write: each partition knows its first global index from the cluster's drop counts
        dropped = {int(p): n for p, n in cluster["dropped"].items()}
        starts = []
        g = 0
        for p, r in zip(partitions, grouped.scan_results, strict=True):
            starts.append(g)
            g += r["survivors"] - dropped.get(p.index, 0)
        write_results = runner.phase(
            "write", [runner.call(write_task, f"write-{p.index:06d}", p.index, starts[i]) for i, p in enumerate(partitions)]
        )
        for r in write_results:
            stats += Stats.from_dict(r["stats"])
        # assemble: one task per shard, pieces in partition order
        pieces: dict[int, list[str]] = defaultdict(list)
        for r in write_results:
            for shard, path, _ in r["pieces"]:
                pieces[shard].append(path)
        shards = runner.phase(
            "assemble", [runner.call(assemble_task, f"assemble-{k:05d}", k, len(pieces), pieces[k]) for k in sorted(pieces)]
        )
        # publish: shards assembled in the stage are copied or uploaded to the output (each one marked)
        if publishes:
            location = _target_location(target)
            sizes = [s["bytes"] for s in shards]
            calls = [
                runner.call(publish_task, f"publish-{k:05d}", str(stage / s["path"]), location, s["path"])
                for k, s in enumerate(shards)
            ]
            runner.phase("publish", calls, sizes, sum(sizes))
    finally:
        runner.close()
    aggregator = runner.aggregator
    aggregator.start_phase("finalize", 1)
    for phase, seconds in aggregator.phase_seconds.items():
        stats.add_time(f"phase.{phase}", seconds)  # wall clock per phase, for scaling models
    manifest = _finalize(target, work, config, given_inputs, partitions, shards, stats, rejects)
    aggregator.task_done()
    aggregator.emit(final=True)
    if not config.exec.keep_work:
        shutil.rmtree(work.root, ignore_errors=True)
        if publishes and owned:
            shutil.rmtree(stage, ignore_errors=True)
        elif publishes:  # a folder given by --work-dir: remove only what this build staged in it
            for s in shards:
                (stage / s["path"]).unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                (stage / "data").rmdir()
    return BuildResult(target.root if isinstance(target, LocalStore) else target.locate(), manifest, stats)


def _reset_workdir(work: WorkDir) -> None:
    for entry in work.root.iterdir():
        if entry.name == "lock":
            continue
        if entry.is_dir():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def _check_malformed(config: RunConfig, stats: Stats) -> None:
    n = stats.malformed
    if config.exec.strict and n:
        raise InputError(f"{n} malformed input record(s) and --strict is set (see the warnings above)")
    limit = config.exec.max_malformed
    if limit is not None and n > limit:
        raise InputError(f"{n} malformed input records, more than --max-malformed {limit}")


def _finalize(
    out: Store,
    work: WorkDir,
    config: RunConfig,
    inputs: list[str],
    partitions: list[Partition],
    shards: list[dict[str, Any]],
    stats: Stats,
    rejects: str | Path | None,
) -> dict[str, Any]:
    # shards of an earlier build into this folder (prefix) that this build did not produce
    keep = {s["path"] for s in shards}
    for stale in [*out.files("shard-"), *out.files("data/train-")]:
        if stale not in keep:
            out.remove(stale)
    stats_dict = stats.to_dict()
    stats_dict["malformed_examples"] = malformed_examples(work, [p.index for p in partitions])
    out.write_bytes("stats.json", dumps_json(stats_dict).encode("utf-8"))
    if rejects is not None:
        rejects_store = open_store(rejects)
        local = isinstance(rejects_store, LocalStore)
        rejects_dir = rejects_store.root if isinstance(rejects_store, LocalStore) else work.path("rejects-out")
        rejects_dir.mkdir(parents=True, exist_ok=True)
        sources = []
        for p in partitions:
            sources += [work.scan_rejects(p.index), work.write_rejects(p.index)]
        gzip_concat(sources, rejects_dir / "rejects.jsonl.gz")
        gzip_concat([work.scan_malformed(p.index) for p in partitions], rejects_dir / "malformed.jsonl.gz")
        if not local:  # compressed in the work dir, then uploaded
            for name in ("rejects.jsonl.gz", "malformed.jsonl.gz"):
                rejects_store.put_file(rejects_dir / name, name)
    manifest: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "complete": True,
        "thresher_version": __version__,
        "format": config.output.format,
        "records": sum(s["records"] for s in shards),
        "bytes": sum(s["bytes"] for s in shards),
        "shards": shards,
        "config_hash": config.hash,
        "config": to_dict(config, hashed_only=True),
        "extractor": extractor_info(config.extract),
        "inputs": [{"path": p, "bytes": input_size(p) if p != "-" else None} for p in inputs],
        "stats": {k: stats_dict[k] for k in ("seen", "kept", "dropped", "malformed")},
    }
    card = render_card(manifest, stats_dict)
    if config.output.format == "parquet":
        from thresher.write.parquet import hf_card_config

        card = hf_card_config() + "\n" + card  # lets `datasets` and the hub find the shards
    out.write_bytes("README.md", card.encode("utf-8"))
    out.write_bytes(MANIFEST, dumps_json(manifest).encode("utf-8"))  # last: its presence means the dataset is complete
    return manifest
