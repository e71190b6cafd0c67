"""`build`: plan a run, execute its phases on an engine, finalize the dataset.

The driver only plans, hands tasks to the engine and assembles results; the work itself is in
`thresher.run.tasks`. Completion markers make a rerun of the same command resume where it stopped;
the manifest is removed first and written last, so an interrupted build never leaves a manifest that
claims completeness.
"""

from __future__ import annotations

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
from thresher.pipeline import build_corpus_stages
from thresher.read.base import Partition
from thresher.read.paths import input_size
from thresher.read.sources import plan_partitions
from thresher.run import progress
from thresher.run.engines import TaskCall, make_engine
from thresher.run.tasks import (
    TaskContext,
    _partition_size,
    assemble_task,
    cluster_task,
    describe_task,
    group_task,
    gzip_concat,
    malformed_examples,
    run_task,
    scan_task,
    write_task,
)
from thresher.run.workdir import BuildLock, WorkDir
from thresher.write.atomic import write_json_atomic
from thresher.write.card import render_card
from thresher.write.manifest import FORMAT_VERSION, MANIFEST

log = logging.getLogger(__name__)

# Key partitions scale with input size so that one group task holds a bounded share of the keys:
# about one partition per 256 MiB of input, at least 16 (so the group phase has tasks for every
# worker even on small inputs), at most 1024. The count never changes the output (a test proves
# it), only how the group phase's work and memory are split.
KEY_PARTITION_BYTES = 256 * 1024 * 1024
MIN_KEY_PARTITIONS = 16


@dataclass
class BuildResult:
    output: Path
    manifest: dict[str, Any]
    stats: Stats

    @property
    def ok(self) -> bool:
        return self.stats.reconciles()


def default_key_partitions(total_bytes: int) -> int:
    return max(MIN_KEY_PARTITIONS, min(1024, -(-total_bytes // KEY_PARTITION_BYTES)))


def _spool_stdin(work: WorkDir) -> str:
    path = work.path("stdin.bin")
    tmp = path.with_name("stdin.bin.tmp")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(tmp, "wb") as out:
        shutil.copyfileobj(sys.stdin.buffer, out, 1 << 20)
    os.replace(tmp, path)
    return str(path)


def _check_output_dir(out: Path) -> None:
    if not out.exists():
        return
    if not out.is_dir():
        raise WorkDirError(f"{out}: exists and is not a directory")
    entries = {e.name for e in out.iterdir()}
    if entries and MANIFEST not in entries and ".work" not in entries:
        raise WorkDirError(f"{out}: not empty and not a thresher dataset; choose an empty or new output directory")


def _extractor_info(config: RunConfig) -> dict[str, str]:
    try:
        from thresher.extract.registry import get_extractor

        extractor = get_extractor(config.extract)
        return {"name": extractor.name, "version": extractor.version()}
    except ImportError:
        return {"name": config.extract.extractor, "version": __version__}


def build(
    inputs: Sequence[str],
    output: str | Path,
    config: RunConfig | None = None,
    *,
    rejects: str | Path | None = None,
    overwrite: bool = False,
    on_progress: Callable[[progress.Snapshot], None] | None = None,
) -> BuildResult:
    """Build a dataset from `inputs` into `output`. See the module docstring for the guarantees."""
    config = config or RunConfig()
    out = Path(output)
    _check_output_dir(out)
    work = WorkDir(out / ".work")
    work.root.mkdir(parents=True, exist_ok=True)
    with BuildLock(work):
        return _build_locked(list(inputs), out, work, config, rejects, overwrite, on_progress)


def _build_locked(
    inputs: list[str],
    out: Path,
    work: WorkDir,
    config: RunConfig,
    rejects: str | Path | None,
    overwrite: bool,
    on_progress: Callable[[progress.Snapshot], None] | None,
) -> BuildResult:
    # An interrupted run must never leave a manifest claiming completeness: remove it first.
    (out / MANIFEST).unlink(missing_ok=True)
    plan_path = work.path("plan.json")
    given_inputs = list(inputs)
    if "-" in inputs:
        spooled = work.path("stdin.bin")
        if not (plan_path.exists() and spooled.exists()):
            spooled_path = _spool_stdin(work)
        else:
            spooled_path = str(spooled)
        inputs = [spooled_path if i == "-" else i for i in inputs]
    partitions = plan_partitions(inputs, config.input)
    total_bytes = sum(_partition_size(p) for p in partitions)
    key_partitions = config.exec.key_partitions or default_key_partitions(total_bytes)
    corpus = build_corpus_stages(config)
    plan = {
        "thresher_version": __version__,
        "config_hash": config.hash,
        "write_rejects": rejects is not None,
        "key_partitions": key_partitions,
        "corpus_stages": [s.name for s in corpus],
        "partitions": [[p.kind, list(p.paths), p.start, p.end] for p in partitions],
    }
    if plan_path.exists():
        import json

        previous = json.loads(plan_path.read_text(encoding="utf-8"))
        if previous != plan:
            if not overwrite:
                raise WorkDirError(
                    f"{work.root} holds an unfinished build with another config or input "
                    f"(config hash {previous.get('config_hash')} vs {config.hash}); rerun it as it was, "
                    "or pass --overwrite to discard it"
                )
            _reset_workdir(work)
            plan_path = work.path("plan.json")
        else:
            log.info("resuming the build in %s", work.root)
    write_json_atomic(plan_path, plan)

    ctx = TaskContext(config, str(work.root), key_partitions, rejects is not None)
    aggregator = progress.Aggregator(on_progress)
    engine = make_engine(config.exec.engine, config.exec.workers, aggregator.tick, config.exec.retries, config.exec.ray_address)

    def call(fn: Any, task_id: str, *args: Any) -> TaskCall:
        return TaskCall(run_task, (fn, ctx, task_id, *args), describe_task(task_id, args), str(work.path("logs", f"{task_id}.log")))

    try:
        # scan
        aggregator.start_phase("scan", len(partitions), total_bytes)
        part_bytes = [_partition_size(p) for p in partitions]
        scan_results = engine.run(
            [call(scan_task, f"scan-{p.index:06d}", p) for p in partitions],
            on_done=lambda i, _: aggregator.task_done(part_bytes[i]),
        )
        stats = sum((Stats.from_dict(r["stats"]) for r in scan_results), Stats())
        _check_malformed(config, stats)
        # group
        group_calls = [
            call(group_task, f"group-{stage.name}-{k:04d}", si, k, [p.index for p in partitions])
            for si, stage in enumerate(corpus)
            for k in range(key_partitions)
        ]
        aggregator.start_phase("group", len(group_calls))
        for r in engine.run(group_calls, on_done=lambda i, _: aggregator.task_done()):
            stats += Stats.from_dict(r["stats"])
        # cluster (one task: union-find over colliding documents only)
        aggregator.start_phase("cluster", 1)
        (cluster,) = engine.run([call(cluster_task, "cluster", key_partitions)])
        aggregator.task_done()
        # write
        dropped = {int(p): n for p, n in cluster["dropped"].items()}
        starts = []
        g = 0
        for p, r in zip(partitions, scan_results, strict=True):
            starts.append(g)
            g += r["survivors"] - dropped.get(p.index, 0)
        aggregator.start_phase("write", len(partitions))
        write_results = engine.run(
            [call(write_task, f"write-{p.index:06d}", p.index, starts[i]) for i, p in enumerate(partitions)],
            on_done=lambda i, _: aggregator.task_done(),
        )
        for r in write_results:
            stats += Stats.from_dict(r["stats"])
        # assemble: one task per shard, pieces in partition order
        pieces: dict[int, list[str]] = defaultdict(list)
        for r in write_results:
            for shard, path, _ in r["pieces"]:
                pieces[shard].append(path)
        aggregator.start_phase("assemble", len(pieces))
        shards = engine.run(
            [call(assemble_task, f"assemble-{k:05d}", k, len(pieces), pieces[k]) for k in sorted(pieces)],
            on_done=lambda i, _: aggregator.task_done(),
        )
    finally:
        engine.close()
    aggregator.start_phase("finalize", 1)
    for phase, seconds in aggregator.phase_seconds.items():
        stats.add_time(f"phase.{phase}", seconds)  # wall clock per phase, for scaling models
    manifest = _finalize(out, work, config, given_inputs, partitions, shards, stats, rejects)
    aggregator.task_done()
    aggregator.emit(final=True)
    if not config.exec.keep_work:
        shutil.rmtree(work.root, ignore_errors=True)
    return BuildResult(out, manifest, stats)


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
    out: Path,
    work: WorkDir,
    config: RunConfig,
    inputs: list[str],
    partitions: list[Partition],
    shards: list[dict[str, Any]],
    stats: Stats,
    rejects: str | Path | None,
) -> dict[str, Any]:
    # shards of an earlier build into this folder that this build did not produce
    keep = {s["path"] for s in shards}
    for stale in [*out.glob("shard-*"), *out.glob("data/train-*")]:
        if str(stale.relative_to(out)) not in keep:
            stale.unlink()
    stats_dict = stats.to_dict()
    stats_dict["malformed_examples"] = malformed_examples(work, [p.index for p in partitions])
    write_json_atomic(out / "stats.json", stats_dict)
    if rejects is not None:
        rejects_dir = Path(rejects)
        rejects_dir.mkdir(parents=True, exist_ok=True)
        sources = []
        for p in partitions:
            sources += [work.scan_rejects(p.index), work.write_rejects(p.index)]
        gzip_concat(sources, rejects_dir / "rejects.jsonl.gz")
        gzip_concat([work.scan_malformed(p.index) for p in partitions], rejects_dir / "malformed.jsonl.gz")
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
        "extractor": _extractor_info(config),
        "inputs": [{"path": p, "bytes": input_size(p) if p != "-" else None} for p in inputs],
        "stats": {k: stats_dict[k] for k in ("seen", "kept", "dropped", "malformed")},
    }
    card = render_card(manifest, stats_dict)
    if config.output.format == "parquet":
        from thresher.write.parquet import hf_card_config

        card = hf_card_config() + "\n" + card  # lets `datasets` and the hub find the shards
    (out / "README.md").write_text(card, encoding="utf-8")
    write_json_atomic(out / MANIFEST, manifest)  # last: its presence means the dataset is complete
    return manifest
