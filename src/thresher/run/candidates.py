"""The group and verify tasks: from the scan's dedup keys to verified edges.

A group task takes a range of key buckets of one corpus stage from every scan partition and emits the
candidate pairs of every key seen more than once, spilled by pair bucket; a verify task takes a range
of pair buckets from every group task and verifies each distinct pair once. Both read only their
buckets (`thresher.run.spill`), so neither grows with the corpus.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from typing import Any

from thresher.clusters import Node, link_identical
from thresher.core.stages import comparison_of
from thresher.core.stats import Stats
from thresher.pipeline import build_corpus_stages
from thresher.run.records import KEY_LEN, KEY_RECORD, MEMBER, PAIR, PAIR_BUCKETS, pack_edge, pair_bucket
from thresher.run.results import GroupResult, VerifyResult
from thresher.run.spill import BucketSpill, Payloads, read_bucket_range
from thresher.run.task import TaskContext
from thresher.write.atomic import atomic_open

# Per group task: pairs remembered to skip repeats (~4 MB at most). Per verify task: decoded payloads
# kept (a MinHash payload with its shingle-id sample decodes to ~70 KB).
SEEN_PAIRS_CAP = 50_000
# Per group task: payload digests remembered by member (~9 MB at most)
DIGESTS_CAP = 50_000
PREPARED_CACHE_MEMBERS = 256


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
        records.extend(
            read_bucket_range(keys_path, json.loads(keys_path.with_suffix(".idx").read_text()), lo, hi, size)
        )
    records.sort()
    payloads = Payloads(work, stage.name)
    # A pair collides in one bucket per shared band; pairs already emitted by this task are skipped.
    # It only saves spill bytes (the verify phase removes every repeat), so it is a bounded cache.
    seen_pairs: set[bytes] = set()
    # A member is in one key bucket per key (a MinHash document in one per band, several of them in
    # one task's range): its payload's digest is remembered, so that it is read and hashed once
    # (bounded: cleared when full, which only costs reading it again)
    digests: dict[bytes, bytes] = {}
    edges = 0
    pairs = BucketSpill(work.pairs(stage.name, lo), PAIR_BUCKETS)
    t0 = time.perf_counter()

    def payload_digest(member: bytes) -> bytes:
        digest = digests.get(member)
        if digest is None:
            if len(digests) >= DIGESTS_CAP:
                digests.clear()
            digest = digests[member] = hashlib.blake2b(payloads.read(*_payload_ref(member)), digest_size=16).digest()
        return digest

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
                # only distinct payloads go on to the candidate pairs (see clusters.link_identical)
                same = link_identical(map(payload_digest, members))
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
    payloads = Payloads(work, stage.name)
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
