"""The task functions of a build: pure functions of (context, task spec) → files + a result.

Every engine runs exactly these functions; none of them knows where it runs. A task writes its
files atomically and its completion marker last, so a killed task leaves no marker and is rerun.

Phases (see docs/architecture.md):
  scan     one per input partition: read → per-document stages → survivors, rejects, dedup keys
  group    one per (corpus stage, range of key buckets): group keys, spill candidate pairs by pair
           bucket (edges between byte-identical payloads are written directly)
  verify   one per (corpus stage, range of pair buckets): each distinct pair verified once → edges
  cluster  one: union-find over edges, keeper per cluster, per-partition decisions
  write    one per input partition: apply decisions, write its pieces of the output shards
  assemble one per output shard: its pieces, in partition order, into the shard file
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import hashlib
import json
import logging
import os
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

from thresher.config import RunConfig
from thresher.core.document import Document, Drop, Malformed, record_id
from thresher.core.stages import comparison_of
from thresher.core.stats import Stats
from thresher.dedup.cluster import Decision, Node, cluster, decide, link_identical
from thresher.pipeline import BATCH_CHARS, BATCH_DOCS, DocumentChain, Outcome, build_corpus_stages
from thresher.read.base import Event, Partition, Skip, ordinal_partition
from thresher.read.readers import reader_spec
from thresher.read.sniff import file_is_compressed
from thresher.read.sources import read_partition
from thresher.run import progress
from thresher.run.deadline import WATCHDOG_GRACE_S, DocumentDeadline, RecordFailures, StuckDocument, collect_stuck
from thresher.run.heap import trim_heap
from thresher.run.integrity import check_unchanged_since_plan
from thresher.run.observe import TaskObserver, record_id_url_json
from thresher.run.records import (
    EDGE,
    KEY_BUCKETS,
    KEY_LEN,
    KEY_RECORD,
    MEMBER,
    PAIR,
    PAIR_BUCKETS,
    id_bytes,
    key_bucket,
    pack_edge,
    pair_bucket,
    unpack_edge,
)
from thresher.run.results import (
    ClusterResult,
    GroupResult,
    Piece,
    ScanResult,
    ShardFile,
    TaskResult,
    VerifyResult,
    WriteResult,
)
from thresher.run.workdir import WorkDir
from thresher.write.atomic import atomic_open, dumps_line, write_work_json
from thresher.write.digest import digested_file
from thresher.write.formats import get_format, shard_writer

log = logging.getLogger(__name__)

# Per group task: pairs remembered to skip repeats (~4 MB at most). Per scan and group task: the
# key or pair bytes buffered before a spill. Per verify task: decoded payloads kept (a MinHash
# payload with its shingle-id sample decodes to ~70 KB).
SEEN_PAIRS_CAP = 50_000
SPILL_BYTES = 8 * 1024 * 1024  # per BucketSpill: records buffered before a run is written
PREPARED_CACHE_MEMBERS = 256
MALFORMED_LOG_LIMIT = 20  # per partition: located warnings in the log; all of them go to the rejects dir


@dataclass(frozen=True, slots=True)
class TaskContext:
    config: RunConfig
    workdir: str
    write_rejects: bool

    @property
    def work(self) -> WorkDir:
        return WorkDir(self.workdir)


def run_task(
    fn: Callable[..., TaskResult], result_type: type[TaskResult], ctx: TaskContext, task_id: str, *args: Any
) -> TaskResult:
    """Run a task unless its completion marker exists; write the marker (its result, as JSON) last.

    The task's own log records (warnings about malformed input, ...) and, when it fails, its
    traceback go to `logs/<task>.log` in the work dir; the exception is re-raised for the engine to
    retry or report."""
    work = ctx.work
    marker = work.marker(task_id)
    if marker.exists():
        return result_type.from_json(json.loads(marker.read_text(encoding="utf-8")))
    log_path = work.path("logs", f"{task_id}.log")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(log_path, mode="a", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    package_logger = logging.getLogger("thresher")
    package_logger.addHandler(handler)
    progress.set_task(task_id)  # its progress ticks name it: the driver replaces them by its result
    try:
        result = fn(ctx, *args)
    except BaseException:
        import traceback

        if handler.stream is not None:  # open unless the handler was closed (it is opened eagerly)
            handler.stream.write(f"task {task_id} failed (pid {os.getpid()}):\n{traceback.format_exc()}\n")
        raise
    finally:
        progress.set_task(None)
        package_logger.removeHandler(handler)
        handler.close()
        trim_heap()  # workers are long-lived: what the task freed goes back to the system
    write_work_json(marker, result.to_json())
    return result


def describe_task(task_id: str, args: tuple[Any, ...]) -> str:
    """A task and the input it works on, for error messages."""
    for arg in args:
        if isinstance(arg, Partition):
            return f"{task_id} (input {arg.describe()})"
    return task_id


# -- scan ---------------------------------------------------------------------------------------


def as_stdin(items: Iterator[Any], spooled: str) -> Iterator[Any]:
    """Items read from standard input (spooled to `spooled` in the work dir, which is removed after
    the build) name it `-`, as the user did, in their provenance, locations and ids: an id then
    does not depend on where the output went."""
    for item in items:
        if isinstance(item, Document):
            if item.source.get("file") == spooled:
                named_by_place = item.id == record_id(item.source)  # not a plugin reader's own id
                item.source["file"] = "-"
                if named_by_place:
                    item.id = record_id(item.source)
        elif isinstance(item, (Malformed, Skip, Event)) and item.location.startswith(spooled):
            item = dataclasses.replace(item, location="-" + item.location[len(spooled):])
        yield item


def scan_task(ctx: TaskContext, partition: Partition) -> ScanResult:
    config = ctx.config
    work = ctx.work
    stats = Stats()
    # a document that earlier attempts of this task died in is dropped, not run again (run/deadline.py)
    stuck_dir, task = work.path("stuck"), f"scan-{partition.index}"
    deadline_s = config.exec.doc_deadline_s
    stuck_log = collect_stuck(stuck_dir, task, deadline_s)
    stuck = {o: d for o, d in stuck_log.items() if d.skip}
    chain = DocumentChain(config, stats, DocumentDeadline(deadline_s, stuck_dir, task))
    corpus = build_corpus_stages(config)
    payload_sizes = [0 for _ in corpus]
    payload_files = []
    for stage in corpus:
        path = work.payload(stage.name, partition.index)
        path.parent.mkdir(parents=True, exist_ok=True)
        payload_files.append(open(path, "wb"))
    survivors = 0
    malformed_logged = 0
    reporter = progress.Throttle("scan")
    # progress by bytes where a document's source offset is a position in the file itself
    # (uncompressed JSONL, archives); compressed JSONL reports its bytes when the task ends
    spec = reader_spec(partition.kind)
    offsets = spec.offsets if spec is not None else "none"
    offsets_in_file = offsets == "file" or (offsets == "uncompressed" and not file_is_compressed(partition.path))
    bytes_total = partition_size(partition)
    bytes_reported = 0
    t_read = 0.0
    items_read = 0
    work_cap = config.input.max_work_bytes_per_input_byte
    observer = TaskObserver(stats, work.observed("scan", partition.index, "index"), work.observed("scan", partition.index, "samples"),
                            config.output.card_tokenizer)
    with (
        RecordFailures(stuck_dir, task) as in_record,  # an exception escaping one record: noted for the retry
        contextlib.ExitStack() as key_spills,
        atomic_open(work.scan_docs(partition.index), "wb", durable=False) as docs_out,
        atomic_open(work.scan_malformed(partition.index), "wb", durable=False) as malformed_out,
        (atomic_open(work.scan_rejects(partition.index), "wb", durable=False) if ctx.write_rejects else _NullWriter()) as rejects_out,
    ):
        spills = [key_spills.enter_context(BucketSpill(work.keys(stage.name, partition.index), KEY_BUCKETS)) for stage in corpus]
        items = as_stdin(read_partition(partition, config.input), str(work.path("stdin.bin")))
        # Batches (pipeline.BatchEvaluator): with a stage that takes them, items are read ahead in
        # bounded batches and the chain judges the batch's documents at once; the items are then
        # handled one by one in input order exactly as without batches, so the output is the same.
        # A retry of a task that a worker died in judges documents alone (a precise crumb).
        if stuck_log:
            chain.disable_batches()
        batch_docs = BATCH_DOCS if chain.batched else 1
        ended = False
        while not ended:
            batch: list[Any] = []
            batch_chars = 0
            while len(batch) < batch_docs and batch_chars < BATCH_CHARS:
                t0 = time.perf_counter()
                try:
                    item = next(items, None)
                except Exception as exc:  # noqa: BLE001 - a third-party decoder's failure stops this input, counted
                    item = read_failure(partition, exc)
                    items = iter(())
                t_read += time.perf_counter() - t0
                if item is None:
                    ended = True
                    break
                if isinstance(item, Event):
                    stats.count(f"event/{item.name}")
                    continue
                items_read += 1
                if work_cap is not None and items_read % 256 == 0:
                    written = docs_out.tell() + malformed_out.tell() + rejects_out.tell()
                    if written > max(WORK_BYTES_FLOOR, work_cap * bytes_total):
                        item = work_bytes_stop(partition, written, bytes_total, work_cap)
                        items = iter(())
                batch.append(item)
                if isinstance(item, Document):
                    batch_chars += len(item.text) + len(item.html or "")
            judged: dict[int, Outcome] = {}
            if batch_docs > 1:
                docs = [it for it in batch if isinstance(it, Document) and it.ordinal not in stuck]
                # an exception escaping a batch is noted under no record (IN_BATCH): the retry, which
                # finds a stuck log, judges documents alone and so names the record it fails in
                in_record.ordinal, in_record.step = IN_BATCH, "scan"
                judged = dict(zip(map(id, docs), chain.run_batch(docs), strict=True))
            for item in batch:
                in_record.ordinal = None
                stats.record_seen()
                if isinstance(item, Malformed):
                    stats.record_malformed(item)
                    malformed_out.write(dumps_line({"reason": item.reason, "location": item.location, "detail": item.detail}))
                    if malformed_logged < MALFORMED_LOG_LIMIT:
                        log.warning("malformed input: %s", item.describe())
                        malformed_logged += 1
                    reporter.tick(malformed=1)
                    continue
                if isinstance(item, Skip):
                    stats.record_drop(item.drop)
                    observer.dropped(item.id, item.url, item.source, item.drop, None)
                    if ctx.write_rejects:
                        rejects_out.write(
                            dumps_line(item.to_record())
                        )
                    reporter.tick(dropped=1)
                    continue
                doc: Document = item
                in_record.ordinal, in_record.step = doc.ordinal, "scan"
                outcome: Outcome
                if doc.ordinal in stuck:
                    outcome = stuck_drop(chain, stuck[doc.ordinal])
                else:
                    outcome = judged[id(doc)] if batch_docs > 1 else chain.run(doc)
                scans: list[Any] = []
                if outcome is None:
                    # the corpus stages' keys, all computed before any is written: one that raises drops
                    # the document like a stage in the chain does, with nothing of it left in the work files
                    scans, outcome = corpus_scans(corpus, doc, stats)
                if outcome is not None:
                    drop, failures = outcome
                    stats.record_drop(drop, failures)
                    observer.chain_dropped(doc, drop)
                    if ctx.write_rejects:
                        rejects_out.write(dumps_line(reject_record(doc, drop, failures)))
                    reporter.tick(dropped=1)
                    continue
                observer.survived(doc)
                t0 = time.perf_counter()
                member_head = (doc.ordinal, id_bytes(doc.id), len(doc.text), float(doc.annotations.get("quality.score", 0.0)))
                for si, scanned in enumerate(scans):
                    if scanned is None:
                        continue
                    offset = payload_sizes[si]
                    if scanned.payload:
                        payload_files[si].write(scanned.payload)
                        payload_sizes[si] += len(scanned.payload)
                    # a key record is the key then the member, which is the same for all of its keys
                    member = MEMBER.pack(*member_head, offset, len(scanned.payload))
                    spill = spills[si]
                    buffers = spill.buffers
                    for key in scanned.keys:
                        if len(key) != KEY_LEN:
                            key = (key + bytes(KEY_LEN))[:KEY_LEN]
                        buf = buffers[key_bucket(key)]
                        buf += key
                        buf += member
                    spill.added(len(scanned.keys), len(scanned.keys) * KEY_RECORD.size)
                stats.add_time("dedup.keys", time.perf_counter() - t0)
                docs_out.write(b"%d\t" % doc.ordinal + dumps_line(doc.to_record()))
                survivors += 1
                position = doc.source.get("offset") if offsets_in_file else None
                if isinstance(position, int) and position - partition.start > bytes_reported:
                    delta = min(position - partition.start, bytes_total) - bytes_reported
                    bytes_reported += delta
                    reporter.tick(passed=1, bytes=delta)
                else:
                    reporter.tick(passed=1)
    observer.close()
    check_unchanged_since_plan(work.root, partition.paths)  # truncated or rewritten while it was read
    stats.add_time("read", t_read)
    if bytes_total > bytes_reported:
        reporter.tick(bytes=bytes_total - bytes_reported)
    for f in payload_files:
        f.close()
    chain.deadline.close()
    reporter.flush()
    return ScanResult(stats=stats, survivors=survivors, key_bytes=tuple(tuple(spill.bucket_bytes) for spill in spills))


IN_BATCH = -1  # the stuck log's ordinal for an exception that escaped a batch of documents (no document has it)
WORK_BYTES_FLOOR = 256 * 1024 * 1024  # below this a scan is never stopped for its work bytes


def work_bytes_stop(partition: Partition, written: int, input_bytes: int, cap: float) -> Malformed:
    log.warning("reading %s stopped: %d work bytes for %d input bytes", partition.describe(), written, input_bytes)
    detail = (
        f"stopped reading this input after writing {written} work bytes for its {input_bytes} bytes "
        f"(input.max_work_bytes_per_input_byte = {cap}): a decompression bomb?"
    )
    return Malformed("work_bytes_cap", partition.describe(), detail)


def read_failure(partition: Partition, exc: Exception) -> Malformed:
    """What an exception escaping a reader becomes: one located malformed record that ends the read of
    this input (a generator that raised cannot continue), so a broken file stops itself, not the build."""
    log.warning("reading %s stopped: %s: %s", partition.describe(), type(exc).__name__, exc)
    return Malformed("read_error", partition.describe(), f"reading stopped: {type(exc).__name__}: {exc}"[:500])


def corpus_scans(corpus: list[Any], doc: Document, stats: Stats) -> tuple[list[Any], tuple[Drop, list[Drop]] | None]:
    """Each corpus stage's scan of a document that passed the chain; or, when one raises, the
    document's drop as `<stage>: error` (the exception in `detail`, `event/stage_error` counted)."""
    scans = []
    t0 = time.perf_counter()
    try:
        for stage in corpus:
            scans.append(stage.scan(doc))
    except Exception as exc:  # noqa: BLE001 - one document's failure is its drop, not the task's
        stats.count("event/stage_error")
        return [], (Drop(stage.name, "error", detail={"error": f"{type(exc).__name__}: {exc}"[:500]}), [])
    finally:
        stats.add_time("dedup.keys", time.perf_counter() - t0)
    return scans, None


def stuck_drop(chain: DocumentChain, stuck: StuckDocument) -> tuple[Drop, list[Drop]]:
    """The drop of a document that earlier attempts died or failed in (it is not run again)."""
    if stuck.errors and not stuck.timed_out:
        chain.stats.count("event/record_failed_twice")
        detail = {"skipped": f"{stuck.failures} attempts failed in this record", "error": stuck.error}
        return Drop(stuck.step or "scan", "error", value=stuck.failures, limit=2, detail=detail), []
    names = [name for name, _, _ in chain.runners]
    stage = names[stuck.stage_index] if 0 <= stuck.stage_index < len(names) else "extract"
    if stuck.timed_out:
        chain.stats.count("event/deadline_exceeded")
        detail = {"skipped": "the worker was ended past the deadline; the retry did not run the page again"}
        limit = chain.deadline.seconds
        killed_after = limit + max(WATCHDOG_GRACE_S, limit) if limit is not None else None  # the kill timer's CPU seconds
        return Drop(stage, "timeout", value=killed_after, limit=limit, detail=detail), []
    chain.stats.count("event/worker_died")
    return Drop(stage, "worker_died", value=stuck.deaths, limit=2, detail={"skipped": "two attempts died in this page"}), []


def partition_size(partition: Partition) -> int:
    from thresher.paths import input_size

    if partition.end is not None:
        return partition.end - partition.start
    return sum(input_size(path) or 0 for path in partition.paths)


class _NullWriter:
    def __enter__(self) -> _NullWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def write(self, data: bytes) -> None:
        return None

    def tell(self) -> int:
        return 0


def reject_record(doc: Document, drop: Drop, failures: list[Drop] | None = None) -> dict[str, Any]:
    record = doc.to_record()
    record["drop"] = drop.to_record()
    if failures and len(failures) > 1:
        record["failures"] = [f.to_record() for f in failures]
    return record


# -- group --------------------------------------------------------------------------------------


class _Payloads:
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


def group_task(ctx: TaskContext, stage_index: int, lo: int, hi: int, partitions: list[int]) -> GroupResult:
    """Group the keys of buckets [lo, hi) of one corpus stage from every scan partition and emit
    the candidate pairs of every key seen more than once, spilled by pair bucket for the verify
    phase. Members with byte-identical payloads need no verification: their edges are written here."""
    stage = build_corpus_stages(ctx.config)[stage_index]
    work = ctx.work
    size = KEY_RECORD.size
    records: list[bytes] = []
    for p in partitions:
        keys_path = work.keys(stage.name, p)
        records.extend(read_bucket_range(keys_path, json.loads(keys_path.with_suffix(".idx").read_text()), lo, hi, size))
    records.sort()
    payloads = _Payloads(work, stage.name)
    # A pair collides in one bucket per shared band; pairs already emitted by this task are skipped.
    # It only saves spill bytes (the verify phase removes every repeat), so it is a bounded cache.
    seen_pairs: set[bytes] = set()
    edges = 0
    pairs = BucketSpill(work.pairs(stage.name, lo), PAIR_BUCKETS)
    t0 = time.perf_counter()

    def first_visit(pair: bytes) -> bool:
        if pair in seen_pairs:
            return False
        if len(seen_pairs) >= SEEN_PAIRS_CAP:
            seen_pairs.clear()
        seen_pairs.add(pair)
        return True

    with pairs, atomic_open(work.edges(stage.name, lo), "wb", durable=False) as out:
        i = 0
        n_records = len(records)
        while i < n_records:
            key = records[i][:KEY_LEN]
            j = i + 1
            while j < n_records and records[j][:KEY_LEN] == key:
                j += 1
            if j - i > 1:
                members = [records[r][KEY_LEN:] for r in range(i, j)]  # packed MEMBER records, by ordinal
                # Members with byte-identical payloads are identical for the stage: linked here,
                # only distinct payloads go on to the candidate pairs (see dedup.cluster.link_identical)
                same = link_identical(
                    hashlib.blake2b(payloads.read(o, off, n), digest_size=16).digest()
                    for o, off, n in (_payload_ref(m) for m in members)
                )
                for first, idx in same.links:
                    m, lead = members[idx], members[first]
                    if lead[:8] != m[:8] and first_visit(lead[:8] + m[:8]):
                        out.write(pack_edge(member_node(lead), member_node(m), 1.0))
                        edges += 1
                leaders = same.leaders
                for a, b in stage.candidate_pairs(len(leaders)):
                    ma, mb = members[leaders[a]], members[leaders[b]]
                    if ma[:8] == mb[:8] or not first_visit(ma[:8] + mb[:8]):
                        continue
                    add_pair(pairs, ma, mb)
            i = j
    payloads.close()
    stats = Stats()
    stats.count(f"event/{stage.name}.keys", len(records))
    stats.count(f"event/{stage.name}.pairs", pairs.count)
    stats.count(f"event/{stage.name}.edges", edges)
    stats.add_time(f"{stage.name}.group", time.perf_counter() - t0)
    return GroupResult(stats=stats, edges=edges, pairs=pairs.count, pair_bytes=tuple(pairs.bucket_bytes))


def _payload_ref(member: bytes) -> tuple[int, int, int]:
    ordinal, _, _, _, offset, length = MEMBER.unpack(member)
    return ordinal, offset, length


def member_node(member: bytes) -> Node:
    ordinal, doc_id, length, quality, _, _ = MEMBER.unpack(member)
    return Node(ordinal, doc_id, length, quality)


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


def add_pair(spill: BucketSpill, a: bytes, b: bytes) -> None:
    """A candidate pair of packed members into its pair bucket, *higher* ordinal first: a hot
    bucket pairs each member with its few lowest-ordinal representatives, so a verify task that
    sorts pairs this way meets each member with all its representatives in a row and decodes it
    once (the representatives stay in its cache)."""
    if a < b:
        a, b = b, a
    spill.add(pair_bucket(int.from_bytes(a[:8], "big")), a + b)


def verify_task(ctx: TaskContext, stage_index: int, lo: int, hi: int, groups: list[int]) -> VerifyResult:
    """Verify the candidate pairs of pair buckets [lo, hi) of one corpus stage, gathered from every
    group task: sorted and made unique, so each distinct pair is verified exactly once however many
    bands (and group tasks) it collided in. Writes the verified edges."""
    stage = build_corpus_stages(ctx.config)[stage_index]
    work = ctx.work
    size = PAIR.size
    records: list[bytes] = []
    for g in groups:
        path = work.pairs(stage.name, g)
        records.extend(read_bucket_range(path, json.loads(path.with_suffix(".idx").read_text()), lo, hi, size))
    records.sort()
    payloads = _Payloads(work, stage.name)
    # A stage may split verification into prepare(payload) -> object and compare(x, y), so that each
    # member is decoded once rather than once per pair. Pairs come sorted by their higher-ordinal
    # member, which stays decoded across its pairs; the lower ones (a hot bucket's representatives)
    # go through a small LRU.
    prepare, similarity = comparison_of(stage)
    prepared: OrderedDict[int, Any] = OrderedDict()

    def prepared_value(ordinal: int, offset: int, length: int) -> Any:
        value = prepared.get(ordinal)
        if value is not None:
            prepared.move_to_end(ordinal)
            return value
        raw = payloads.read(ordinal, offset, length)
        value = prepared[ordinal] = prepare(raw)
        if len(prepared) > PREPARED_CACHE_MEMBERS:
            prepared.popitem(last=False)
        return value

    candidates = edges = 0
    t0 = time.perf_counter()
    with atomic_open(work.edges(stage.name, lo, "v"), "wb", durable=False) as out:
        previous = b""
        for rec in records:
            if rec == previous:
                continue
            previous = rec
            ob, ib, lb, qb, pb, nb, oa, ia, la, qa, pa, na = PAIR.unpack(rec)  # b: the higher ordinal
            candidates += 1
            sim = similarity(prepared_value(oa, pa, na), prepared_value(ob, pb, nb))
            if sim is not None:
                out.write(pack_edge(Node(oa, ia, la, qa), Node(ob, ib, lb, qb), sim))
                edges += 1
    payloads.close()
    stats = Stats()
    stats.count(f"event/{stage.name}.candidates", candidates)
    stats.count(f"event/{stage.name}.edges", edges)
    stats.add_time(f"{stage.name}.verify", time.perf_counter() - t0)
    return VerifyResult(stats=stats, edges=edges)


# -- cluster ------------------------------------------------------------------------------------


def iter_edges(work: WorkDir, stages: list[Any]) -> Iterator[tuple[int, Node, Node, float]]:
    """Every verified edge as (stage index, node a, node b, similarity), in a fixed order. A pair
    colliding in several group tasks appears once per task."""
    size = EDGE.size
    for si, stage in enumerate(stages):
        for path in sorted(work.path("edges", stage.name).glob("*.edges")):
            with open(path, "rb") as f:
                while chunk := f.read(size * 4096):
                    for off in range(0, len(chunk), size):
                        a, b, sim = unpack_edge(chunk[off : off + size])
                        yield si, a, b, sim


def cluster_task(ctx: TaskContext) -> ClusterResult:
    """Cluster the verified edges of every corpus stage (`thresher.dedup.cluster`) and write the
    decisions per input partition, in ordinal order."""
    work = ctx.work
    stages = build_corpus_stages(ctx.config)
    clustering = cluster(lambda: iter_edges(work, stages), ctx.config.dedup.keep)
    dropped_per_partition: dict[int, int] = {}
    current_p = -1
    out: Any = None
    stack = contextlib.ExitStack()
    with stack:
        for decision in decide(clustering, stages):
            p = ordinal_partition(decision.ordinal)
            if p != current_p:
                stack.close()
                out = stack.enter_context(atomic_open(work.decisions(p), "wb", durable=False))
                current_p = p
                dropped_per_partition[p] = 0
            out.write(dumps_line(decision.to_json()))
            if not decision.kept:
                dropped_per_partition[p] += 1
    return ClusterResult(dropped=dropped_per_partition, clusters=clustering.clusters, nodes=clustering.nodes)


# -- write --------------------------------------------------------------------------------------


def iter_cluster_decisions(work: WorkDir, p: int) -> Iterator[Decision]:
    """The cluster phase's decisions for partition p (keep or drop per colliding document), in
    ordinal order; none when no document of p collided."""
    yield from _read_decisions(work.decisions(p))


def later_decisions(work: WorkDir, p: int) -> Path:
    """Drops decided after the cluster phase for partition p (semantic dedup, `thresher.embed.phase`),
    in ordinal order, only for documents the cluster phase kept."""
    return work.decisions(p).with_suffix(".later.jsonl")


def iter_decisions(work: WorkDir, p: int) -> Iterator[Decision]:
    """Every decision the write task applies to partition p, in ordinal order: the cluster phase's,
    with a later drop replacing a keeper's decision for the same document."""
    later = _read_decisions(later_decisions(work, p))
    pending = next(later, None)
    for decision in iter_cluster_decisions(work, p):
        while pending is not None and pending.ordinal < decision.ordinal:
            yield pending
            pending = next(later, None)
        if pending is not None and pending.ordinal == decision.ordinal:
            decision, pending = pending, next(later, None)
        yield decision
    while pending is not None:
        yield pending
        pending = next(later, None)


def _read_decisions(path: Path) -> Iterator[Decision]:
    if path.exists():
        with open(path, "rb") as f:
            for line in f:
                yield Decision.from_json(json.loads(line))


def iter_scan_docs(work: WorkDir, p: int) -> Iterator[tuple[int, bytes]]:
    """(ordinal, JSON line) of every document of partition p that passed the scan, in order. The
    scan writes `ordinal TAB json` per line, so a reader can pick documents without decoding them."""
    with open(work.scan_docs(p), "rb") as f:
        for line in f:
            tab = line.index(b"\t")
            yield int(line[:tab]), line[tab + 1 :]


def write_task(ctx: TaskContext, p: int, global_start: int) -> WriteResult:
    """Apply the cluster decisions to one partition's survivors and write its pieces of the
    output shards: global kept index g goes to shard g // shard_max_records."""
    config = ctx.config
    work = ctx.work
    per_shard = config.output.shard_max_records
    # both streams are in ordinal order, so they are merged as they are read: a partition's
    # decisions can be as many as its documents, and holding them would grow with the partition
    decisions = iter_decisions(work, p)
    pending = next(decisions, None)

    def orphan(decision: Decision) -> RuntimeError:
        """A decision for a document the scan never kept: a broken work dir (ignoring it would keep
        a duplicate)."""
        return RuntimeError(f"partition {p}: decision for ordinal {decision.ordinal}, which no scanned document has")

    stats = Stats()
    pieces: list[list[Any]] = []  # [shard, path, records] while the piece is written
    reporter = progress.Throttle("write")
    include_annotations = config.output.include_annotations
    observer = TaskObserver(stats, work.observed("write", p, "index"), work.observed("write", p, "samples"),
                            config.output.card_tokenizer)

    def kept_records() -> Any:
        """The output lines of the partition's kept documents. A document without a decision is
        written as the scan wrote it (no JSON round trip): `dumps_line` is deterministic, so the
        bytes are those of decoding and encoding it again."""
        nonlocal pending
        for o, line in iter_scan_docs(work, p):
            if pending is not None and pending.ordinal < o:
                raise orphan(pending)
            decision = None
            if pending is not None and pending.ordinal == o:
                decision, pending = pending, next(decisions, None)
            if decision is None and include_annotations:
                stats.record_kept()
                reporter.tick(kept=1)
                yield line, None
                continue
            record = json.loads(line)
            if decision is not None and decision.drop is not None:
                stats.record_drop(decision.drop)
                observer.dropped(record["id"], record.get("url"), record.get("source"), decision.drop, record)
                observer.corpus_dropped(record)
                if ctx.write_rejects:
                    record["drop"] = decision.drop.to_record()
                    rejects_out.write(dumps_line(record))
                reporter.tick(dropped=1)
                continue
            if decision is not None:
                annotations = record.setdefault("annotations", {})
                annotations["dedup.duplicates"] = decision.duplicates
                annotations["dedup.cluster"] = decision.cluster
            if not include_annotations:
                record.pop("annotations", None)
            stats.record_kept()
            reporter.tick(kept=1)
            yield dumps_line(record), record
        if pending is not None:
            raise orphan(pending)

    g = global_start
    with (
        contextlib.ExitStack() as stack,
        (atomic_open(work.write_rejects(p), "wb", durable=False) if ctx.write_rejects else _NullWriter()) as rejects_out,
    ):
        handle: Any = None
        for line, record in kept_records():
            shard = g // per_shard
            if record is None:
                observer.kept_json(*record_id_url_json(line), shard, g % per_shard)
            else:
                observer.kept(record["id"], record.get("url"), shard, g % per_shard)
            if not pieces or pieces[-1][0] != shard:
                # a new shard: close the previous piece (atomically renamed) and open this one
                stack.close()
                path = work.piece(shard, p, ".jsonl")
                handle = stack.enter_context(atomic_open(path, "wb", durable=False))
                pieces.append([shard, str(path), 0])
            handle.write(line)
            pieces[-1][2] += 1
            g += 1
    observer.close()
    reporter.flush()
    return WriteResult(stats=stats, pieces=tuple(Piece(shard=s, path=path, records=n) for s, path, n in pieces), kept=g - global_start)


def assemble_task(ctx: TaskContext, shard: int, total: int, pieces: list[str]) -> ShardFile:
    """Turn one shard's pieces (in partition order) into the final shard file in the output, in
    one streaming pass: the size and sha256 the manifest lists are taken from the bytes as they are
    written (`thresher.write.digest`), not by reading the shard back."""
    fmt = get_format(ctx.config.output.format, ctx.config.output.compression_level)
    name = fmt.shard_name(shard, total)
    dest = Path(ctx.workdir).parent / name
    # an attempt killed mid-write left its temp file (`atomic_open` names it after the shard and its pid)
    for stale in dest.parent.glob(f".{dest.name}.tmp-*"):
        stale.unlink(missing_ok=True)
    write = shard_writer(fmt)
    if write is None:  # a format that only writes files: hashed after writing
        from thresher.write.manifest import file_digest

        records = fmt.assemble([Path(p) for p in pieces], dest)
        size, digest = file_digest(dest)
        return ShardFile(path=name, records=records, bytes=size, sha256=digest)
    with digested_file(dest) as out:
        records = write([Path(p) for p in pieces], cast(IO[bytes], out))  # write, tell and flush: all a format uses
    return ShardFile(path=name, records=records, bytes=out.bytes, sha256=out.sha256)


def malformed_examples(work: WorkDir, partitions: list[int], limit: int = 50) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in partitions:
        path = work.scan_malformed(p)
        if not path.exists():
            continue
        with open(path, "rb") as f:
            for line in f:
                out.append(json.loads(line))
                if len(out) >= limit:
                    return out
    return out


def gzip_concat(sources: list[Path], dest: Path) -> None:
    """Compress text files into one gzip file (deterministic header)."""
    with atomic_open(dest, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
        for src in sources:
            if src.exists():
                with open(src, "rb") as f:
                    while chunk := f.read(1 << 20):
                        gz.write(chunk)
