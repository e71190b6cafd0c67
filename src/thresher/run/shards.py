"""The write and assemble tasks: decisions applied, output shards written.

A write task merges one partition's survivors with its decisions (both in ordinal order) and writes its
pieces of the output shards; an assemble task turns one shard's pieces, in partition order, into the
shard file in the output, digested as it is written. For a format of compressed members (`jsonl.gz`)
the write tasks compress the members inside their records, and assembling is mostly copying
(`thresher.write.members`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, cast

from thresher.clusters import Decision
from thresher.core.stats import Stats
from thresher.decided import apply_edit
from thresher.run import progress
from thresher.run.cluster import iter_decisions
from thresher.run.observe import TaskObserver, record_id_url_json
from thresher.run.results import Piece, ShardFile, WriteResult
from thresher.run.scan import iter_scan_docs
from thresher.run.task import NullWriter, TaskContext
from thresher.write.atomic import atomic_open, dumps_line
from thresher.write.digest import digested_file
from thresher.write.formats import get_format, member_codec, shard_writer
from thresher.write.members import PieceWriter, Segment, join_pieces


def write_task(ctx: TaskContext, p: int, global_start: int, stages: Sequence[str] = ()) -> WriteResult:
    """Apply the decisions of the cluster phase and of the phased stages `stages` (in order) to one
    partition's survivors and write its pieces of the output shards: global kept index g goes to
    shard g // shard_max_records."""
    config = ctx.config
    work = ctx.work
    per_shard = config.output.shard_max_records
    # both streams are in ordinal order, so they are merged as they are read: a partition's
    # decisions can be as many as its documents, and holding them would grow with the partition
    decisions = iter_decisions(work, p, stages)
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
            if decision is not None and decision.edit is not None:
                apply_edit(record, decision.edit)  # a phased stage's edit (line dedup's removed spans)
            if decision is not None and decision.cluster:
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

    # a format of compressed members: the members inside this task's records are compressed here,
    # those cut by the partition's ends are left raw for the assemble task (`thresher.write.members`)
    codec = member_codec(get_format(config.output.format, config.output.compression_level))
    segments: dict[int, list[Segment]] = {}
    g = global_start
    with (
        contextlib.ExitStack() as stack,
        (atomic_open(work.write_rejects(p), "wb", durable=False) if ctx.write_rejects else NullWriter()) as rejects_out,
    ):
        handle: Any = None
        members: PieceWriter | None = None
        for line, record in kept_records():
            shard, index = divmod(g, per_shard)
            if record is None:
                observer.kept_json(*record_id_url_json(line), shard, index)
            else:
                observer.kept(record["id"], record.get("url"), shard, index)
            if not pieces or pieces[-1][0] != shard:
                # a new shard: close the previous piece (atomically renamed) and open this one
                if members is not None:
                    segments[pieces[-1][0]] = members.close()
                stack.close()
                path = work.piece(shard, p, ".jsonl" if codec is None else ".segments")
                handle = stack.enter_context(atomic_open(path, "wb", durable=False))
                if codec is not None:
                    members = PieceWriter(handle, codec.records, per_shard, codec.compress)
                pieces.append([shard, str(path), 0])
            if members is None:
                handle.write(line)
            else:
                members.add(line, index)
            pieces[-1][2] += 1
            g += 1
        if members is not None:
            segments[pieces[-1][0]] = members.close()
    observer.close()
    reporter.flush()
    return WriteResult(
        stats=stats,
        pieces=tuple(Piece(shard=s, path=path, records=n, segments=tuple(segments.get(s, ())))
                     for s, path, n in pieces),
        kept=g - global_start,
    )


def assemble_task(ctx: TaskContext, shard: int, total: int, pieces: list[Piece]) -> ShardFile:
    """Turn one shard's pieces (in partition order) into the final shard file in the output, in
    one streaming pass: the size and sha256 the manifest lists are taken from the bytes as they are
    written (`thresher.write.digest`), not by reading the shard back. For a format of compressed
    members the pieces' compressed segments are copied and only the members cut by partition
    boundaries are compressed here."""
    fmt = get_format(ctx.config.output.format, ctx.config.output.compression_level)
    name = fmt.shard_name(shard, total)
    dest = Path(ctx.workdir).parent / name
    # an attempt killed mid-write left its temp file (`atomic_open` names it after the shard and its pid)
    for stale in dest.parent.glob(f".{dest.name}.tmp-*"):
        stale.unlink(missing_ok=True)
    codec = member_codec(fmt)
    if codec is not None:
        plain = [piece.path for piece in pieces if piece.records and not piece.segments]
        if plain:
            raise RuntimeError(f"shard {shard}: pieces without segments for a format of members: {plain[:3]}")
        with digested_file(dest) as out:
            records = join_pieces([(Path(piece.path), piece.segments) for piece in pieces], cast(IO[bytes], out),
                                  codec.records, codec.compress)
        return ShardFile(path=name, records=records, bytes=out.bytes, sha256=out.sha256)
    paths = [Path(piece.path) for piece in pieces]
    write = shard_writer(fmt)
    if write is None:  # a format that only writes files: hashed after writing
        from thresher.write.manifest import file_digest

        records = fmt.assemble(paths, dest)
        size, digest = file_digest(dest)
        return ShardFile(path=name, records=records, bytes=size, sha256=digest)
    with digested_file(dest) as out:
        records = write(paths, cast(IO[bytes], out))  # write, tell and flush: all a format uses
    return ShardFile(path=name, records=records, bytes=out.bytes, sha256=out.sha256)
