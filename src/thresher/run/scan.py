"""The scan task: one input partition read and judged document by document.

Each document goes through the per-document chain (`thresher.pipeline.DocumentChain`); a survivor's
corpus-stage keys are spilled by key bucket (`thresher.run.spill.BucketSpill`) and its payloads
appended to the stage's payload file, and the survivor itself goes to the partition's scan file
(`iter_scan_docs` reads it back). Malformed input and drops go to their own files. A scan never
grows with its input: it stops reading an input that writes too many work bytes for its size (a
decompression bomb), and a document an earlier attempt died in is dropped, not run again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from collections.abc import Iterator
from typing import Any

from thresher.core.document import Document, Drop, Malformed, record_id
from thresher.core.stages import RECORDED_SIGNALS
from thresher.core.stats import Stats
from thresher.decided import iter_scan_lines
from thresher.pipeline import BATCH_CHARS, BATCH_DOCS, DocumentChain, Outcome, build_corpus_stages
from thresher.read.base import Event, Partition, Skip
from thresher.read.readers import reader_spec
from thresher.read.sniff import file_is_compressed
from thresher.read.sources import read_partition
from thresher.run import progress
from thresher.run.deadline import WATCHDOG_GRACE_S, DocumentDeadline, RecordFailures, StuckDocument, collect_stuck
from thresher.run.integrity import check_unchanged_since_plan
from thresher.run.observe import TaskObserver
from thresher.run.records import KEY_BUCKETS, KEY_LEN, KEY_RECORD, MEMBER, id_bytes, key_bucket
from thresher.run.results import ScanResult
from thresher.run.signal_rows import SignalRecorder
from thresher.run.spill import BucketSpill
from thresher.run.task import NullWriter, TaskContext
from thresher.run.workdir import WorkDir
from thresher.write.atomic import dumps_line

log = logging.getLogger(__name__)


MALFORMED_LOG_LIMIT = 20  # per partition: located warnings in the log; all of them go to the rejects dir
REPLAY_KIND = "signals"  # the input kind of `thresher replay` (`thresher.read.signals`)
IN_BATCH = -1  # the stuck log's ordinal for an exception that escaped a batch of documents (no document has it)
WORK_BYTES_FLOOR = 256 * 1024 * 1024  # below this a scan is never stopped for its work bytes
_NONE = object()  # a stage the table recorded no settings for: never equal to a stage's own


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
    chain_type = DocumentChain
    if partition.kind == REPLAY_KIND:  # a --signals build's table: its rows are decided again
        from thresher.replay_chain import ReplayChain

        chain_type = ReplayChain
    chain = chain_type(config, stats, DocumentDeadline(deadline_s, stuck_dir, task))
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
    observer = TaskObserver(
        stats,
        work.observed("scan", partition.index, "index"),
        work.observed("scan", partition.index, "samples"),
        config.output.card_tokenizer,
    )
    signals = SignalRecorder(work, partition.index, corpus, chain.stages) if config.output.signals else None
    with (
        RecordFailures(stuck_dir, task) as in_record,  # an exception escaping one record: noted for the retry
        contextlib.ExitStack() as key_spills,
        # through the work store: renamed into place in a folder, the attempt's objects on an object store
        ctx.output(work.rel(work.scan_docs(partition.index))) as docs_out,
        ctx.output(work.rel(work.scan_malformed(partition.index))) as malformed_out,
        (
            ctx.output(work.rel(work.scan_rejects(partition.index))) if ctx.write_rejects else NullWriter()
        ) as rejects_out,
    ):
        spills = [
            key_spills.enter_context(BucketSpill(work.keys(stage.name, partition.index), KEY_BUCKETS))
            for stage in corpus
        ]
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
                    malformed_out.write(
                        dumps_line({"reason": item.reason, "location": item.location, "detail": item.detail})
                    )
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
                    if signals is not None:
                        signals.record(doc, outcome, (), None)
                    reporter.tick(dropped=1)
                    continue
                observer.survived(doc)
                t0 = time.perf_counter()
                member_head = (
                    doc.ordinal,
                    id_bytes(doc.id),
                    len(doc.text),
                    float(doc.annotations.get("quality.score", 0.0)),
                )
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
                line = dumps_line(doc.to_record())
                docs_out.write(b"%d\t" % doc.ordinal + line)
                if signals is not None:
                    signals.record(doc, None, scans, line)
                survivors += 1
                position = doc.source.get("offset") if offsets_in_file else None
                if isinstance(position, int) and position - partition.start > bytes_reported:
                    delta = min(position - partition.start, bytes_total) - bytes_reported
                    bytes_reported += delta
                    reporter.tick(passed=1, bytes=delta)
                else:
                    reporter.tick(passed=1)
    observer.close()
    if signals is not None:
        signals.close()
    check_unchanged_since_plan(work.root, partition.paths)  # truncated or rewritten while it was read
    stats.add_time("read", t_read)
    if bytes_total > bytes_reported:
        reporter.tick(bytes=bytes_total - bytes_reported)
    for f in payload_files:
        f.close()
    chain.deadline.close()
    reporter.flush()
    return ScanResult(stats=stats, survivors=survivors, key_bytes=tuple(tuple(spill.bucket_bytes) for spill in spills))


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
    document's drop as `<stage>: error` (the exception in `detail`, `event/stage_error` counted).
    A replayed row (`thresher.read.signals`) whose recorded signals were computed under a stage's
    settings has that stage's scan rebuilt from them (`core.stages.ReusesSignals`): the same keys
    and payload, without shingling or hashing its text again."""
    scans = []
    t0 = time.perf_counter()
    recorded = doc.derived.get(RECORDED_SIGNALS)
    try:
        for stage in corpus:
            if recorded is not None and recorded[0].get(stage.name, _NONE) == getattr(stage, "recorded_with", None):
                scans.append(stage.from_signals(recorded[1]))
            else:
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
        killed_after = (
            limit + max(WATCHDOG_GRACE_S, limit) if limit is not None else None
        )  # the kill timer's CPU seconds
        return Drop(stage, "timeout", value=killed_after, limit=limit, detail=detail), []
    chain.stats.count("event/worker_died")
    return Drop(
        stage, "worker_died", value=stuck.deaths, limit=2, detail={"skipped": "two attempts died in this page"}
    ), []


def partition_size(partition: Partition) -> int:
    from thresher.paths import input_size

    if partition.end is not None:
        return partition.end - partition.start
    return sum(input_size(path) or 0 for path in partition.paths)


def reject_record(doc: Document, drop: Drop, failures: list[Drop] | None = None) -> dict[str, Any]:
    record = doc.to_record()
    record["drop"] = drop.to_record()
    if failures and len(failures) > 1:
        record["failures"] = [f.to_record() for f in failures]
    return record


def iter_scan_docs(work: WorkDir, p: int) -> Iterator[tuple[int, bytes]]:
    """(ordinal, JSON line) of every document of partition p that passed the scan, in order. The
    scan writes `ordinal TAB json` per line, so a reader can pick documents without decoding them."""
    return iter_scan_lines(work.scan_docs(p))
