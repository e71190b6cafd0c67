"""The write and assemble tasks: decisions applied, output shards written.

A write task merges one partition's survivors with its decisions (both in ordinal order) and writes its
pieces of the output shards; an assemble task turns one shard's pieces, in partition order, into the
shard file in the output, digested as it is written. For a format of compressed members (`jsonl.gz`)
the write tasks compress every member, and assembling is copying (`thresher.write.members`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Generator, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, cast

from thresher.clusters import Decision
from thresher.core.document import Drop
from thresher.core.stats import Stats
from thresher.decided import apply_edit
from thresher.run import progress
from thresher.run.cluster import iter_decisions
from thresher.run.observe import TaskObserver, record_id_url_json
from thresher.run.results import Piece, ShardFile, WriteResult
from thresher.run.scan import iter_scan_docs
from thresher.run.task import NullWriter, TaskContext
from thresher.run.workdir import WorkDir
from thresher.write.atomic import dumps_line
from thresher.write.digest import digested_file
from thresher.write.formats import get_format, member_codec, shard_writer
from thresher.write.members import MemberWriter, join_members, owns


def decided_lines(
    work: WorkDir, p: int, stages: Sequence[str], include_annotations: bool
) -> Generator[tuple[bytes | None, dict[str, Any] | None, Drop | None], None, None]:
    """Partition p's scanned documents in order with the decisions of the cluster phase and of the
    phased stages `stages` applied: `(output line, record, None)` for a kept document (record None
    when the line is the scan's own), `(None, record, drop)` for a dropped one.

    A document without a decision is written as the scan wrote it (no JSON round trip):
    `dumps_line` is deterministic, so the bytes are those of decoding and encoding it again."""
    # both streams are in ordinal order, so they are merged as they are read: a partition's
    # decisions can be as many as its documents, and holding them would grow with the partition
    decisions = iter_decisions(work, p, stages)
    pending = next(decisions, None)

    def orphan(decision: Decision) -> RuntimeError:
        """A decision for a document the scan never kept: a broken work dir (ignoring it would keep
        a duplicate)."""
        return RuntimeError(f"partition {p}: decision for ordinal {decision.ordinal}, which no scanned document has")

    for o, line in iter_scan_docs(work, p):
        if pending is not None and pending.ordinal < o:
            raise orphan(pending)
        decision = None
        if pending is not None and pending.ordinal == o:
            decision, pending = pending, next(decisions, None)
        if decision is None and include_annotations:
            yield line, None, None
            continue
        record = json.loads(line)
        if decision is not None and decision.drop is not None:
            yield None, record, decision.drop
            continue
        if decision is not None and decision.edit is not None:
            apply_edit(record, decision.edit)  # a phased stage's edit (line dedup's removed spans)
        if decision is not None and decision.cluster:
            annotations = record.setdefault("annotations", {})
            annotations["dedup.duplicates"] = decision.duplicates
            annotations["dedup.cluster"] = decision.cluster
        if not include_annotations:
            record.pop("annotations", None)
        yield dumps_line(record), record, None
    if pending is not None:
        raise orphan(pending)


def write_task(
    ctx: TaskContext, p: int, global_start: int, stages: Sequence[str] = (), following: Sequence[int] = ()
) -> WriteResult:
    """Apply the decisions of the cluster phase and of the phased stages `stages` (in order) to one
    partition's survivors and write its pieces of the output shards: global kept index g goes to
    shard g // shard_max_records.

    For a format of compressed members (`jsonl.gz`, `thresher.write.members`) a piece is the
    members whose first record is in this partition: the records of a member begun in an earlier
    partition are left to that partition's task, and a member that runs past this partition is
    completed from the documents of the partitions `following` (the next ones, as far as one member
    can reach)."""
    config = ctx.config
    work = ctx.work
    per_shard = config.output.shard_max_records
    include_annotations = config.output.include_annotations
    stats = Stats()
    pieces: list[list[Any]] = []  # [shard, path, records or MemberWriter] while the piece is written
    reporter = progress.Throttle("write")
    observer = TaskObserver(stats, work.observed("write", p, "index"), work.observed("write", p, "samples"),
                            config.output.card_tokenizer)

    def kept_records() -> Iterator[tuple[bytes, dict[str, Any] | None]]:
        for line, record, drop in decided_lines(work, p, stages, include_annotations):
            if drop is not None:
                assert record is not None
                stats.record_drop(drop)
                observer.dropped(record["id"], record.get("url"), record.get("source"), drop, record)
                observer.corpus_dropped(record)
                if ctx.write_rejects:
                    record["drop"] = drop.to_record()
                    rejects_out.write(dumps_line(record))
                reporter.tick(dropped=1)
                continue
            assert line is not None
            stats.record_kept()
            reporter.tick(kept=1)
            yield line, record

    codec = member_codec(get_format(config.output.format, config.output.compression_level))
    g = global_start
    with (
        contextlib.ExitStack() as stack,
        (ctx.output(work.rel(work.write_rejects(p))) if ctx.write_rejects else NullWriter()) as rejects_out,
    ):
        handle: Any = None
        members: MemberWriter | None = None
        for line, record in kept_records():
            shard, index = divmod(g, per_shard)
            g += 1
            if record is None:
                observer.kept_json(*record_id_url_json(line), shard, index)
            else:
                observer.kept(record["id"], record.get("url"), shard, index)
            if codec is not None and not owns(index, global_start - shard * per_shard, codec.records):
                continue  # a member begun in an earlier partition: compressed by its task
            if not pieces or pieces[-1][0] != shard:
                # a new shard: close the previous piece (atomically renamed) and open this one
                stack.close()
                rel = work.rel(work.piece(shard, p, ".jsonl" if codec is None else ".members"))
                handle = stack.enter_context(ctx.output(rel))  # through the work store
                if codec is not None:
                    members = MemberWriter(handle, codec.records, per_shard, codec.compress)
                pieces.append([shard, ctx.output_location(rel), 0 if members is None else members])
            if members is None:
                handle.write(line)
                pieces[-1][2] += 1
            else:
                members.add(line, index)
        if members is not None and members.open:
            complete_member(members, work, following, stages, include_annotations, g % per_shard)
    observer.close()
    reporter.flush()
    return WriteResult(
        stats=stats,
        pieces=tuple(piece_of(shard, path, written) for shard, path, written in pieces),
        kept=g - global_start,
    )


def complete_member(members: MemberWriter, work: WorkDir, following: Sequence[int], stages: Sequence[str],
                    include_annotations: bool, index: int) -> None:
    """Complete the open member from the kept documents of the partitions `following`, from the
    record at `index` in the shard on; the data ends inside it when they run out."""
    for q in following:
        with contextlib.closing(decided_lines(work, q, stages, include_annotations)) as lines:
            for line, _, drop in lines:
                if drop is not None:
                    continue
                assert line is not None
                if members.add(line, index):
                    return
                index += 1
    members.finish()


def piece_of(shard: int, path: str, written: int | MemberWriter) -> Piece:
    if isinstance(written, int):
        return Piece(shard=shard, path=path, records=written)
    assert written.first_member is not None
    return Piece(shard=shard, path=path, records=written.records, member=written.first_member,
                 members=written.members)


def assemble_task(ctx: TaskContext, shard: int, total: int, pieces: list[Piece]) -> ShardFile:
    """Turn one shard's pieces (in partition order) into the final shard file in the output, in
    one streaming pass: the size and sha256 the manifest lists are taken from the bytes as they are
    written (`thresher.write.digest`), not by reading the shard back. For a format of compressed
    members the pieces are whole members, compressed by the write tasks: copied."""
    fmt = get_format(ctx.config.output.format, ctx.config.output.compression_level)
    name = fmt.shard_name(shard, total)
    dest = Path(ctx.workdir).parent / name
    # an attempt killed mid-write left its temp file (`atomic_open` names it after the shard and its pid)
    for stale in dest.parent.glob(f".{dest.name}.tmp-*"):
        stale.unlink(missing_ok=True)
    codec = member_codec(fmt)
    # the pieces as local files: themselves in a folder, downloaded from an object store
    with ctx.store.local_copies([piece.path for piece in pieces]) as paths:
        if codec is not None:  # pieces of whole members: copied
            records = sum(piece.records for piece in pieces)
            members = sum(piece.members for piece in pieces)
            if members != -(-records // codec.records):
                raise RuntimeError(
                    f"shard {shard}: {members} members for {records} records of {codec.records} a member"
                )
            with digested_file(dest) as out:
                join_members([(path, piece.member, piece.members) for path, piece in zip(paths, pieces, strict=True)],
                             cast(IO[bytes], out))
            return ShardFile(path=name, records=records, bytes=out.bytes, sha256=out.sha256)
        write = shard_writer(fmt)
        if write is None:  # a format that only writes files: hashed after writing
            from thresher.write.manifest import file_digest

            records = fmt.assemble(paths, dest)
            size, digest = file_digest(dest)
            return ShardFile(path=name, records=records, bytes=size, sha256=digest)
        with digested_file(dest) as out:
            records = write(paths, cast(IO[bytes], out))  # write, tell and flush: all a format uses
        return ShardFile(path=name, records=records, bytes=out.bytes, sha256=out.sha256)
