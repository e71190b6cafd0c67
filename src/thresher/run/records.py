"""Fixed-size binary records exchanged between phases.

Big-endian throughout, so that sorting the raw bytes sorts by (key, ordinal): the group phase
sorts records without decoding them, and "first" is the lowest ordinal in every bucket.

- key record: key (16 bytes) | member
- member:     ordinal (u64) | doc id (8 bytes) | text length (u32) | quality score (f32)
              | payload offset (u64) | payload length (u32)
- pair:       member b | member a, b.ordinal > a.ordinal (a candidate pair awaiting verification)
- edge:       node a | node b | similarity (f32), where node = ordinal | id | length | quality
"""

from __future__ import annotations

import struct

from thresher.clusters import Node

KEY_LEN = 16
# Keys are spilled into this many hash buckets by the scan phase; the driver then groups contiguous
# bucket ranges into group tasks sized by the keys actually found (see run/build.plan_group_ranges).
KEY_BUCKETS = 1024
# The layout of dedup keys and how they are bucketed, recorded in a work dir's plan: a build resumed
# with other keys would put equal keys of different partitions into different buckets and miss
# their pairs, so a change here must bump it (2: MinHash band keys lead with the band's CRC).
KEY_LAYOUT = 2


def key_bucket(key: bytes) -> int:
    """The key bucket of a 16-byte dedup key, from its leading 4 bytes: every stage's keys lead with
    a hash of everything that makes them equal (a BLAKE2b digest; for MinHash bands the CRC of the
    whole band), so buckets, and the group tasks built from them, fill evenly."""
    return int.from_bytes(key[:4], "big") % KEY_BUCKETS


KEY_RECORD = struct.Struct(">16sQ8sIfQI")
# Candidate pairs are spilled by the group phase into this many buckets by a hash of the pair's
# higher ordinal, so that every copy of a pair (it collides in one key bucket per shared LSH band)
# meets in one verify task, which verifies it once.
PAIR_BUCKETS = 256
MEMBER = struct.Struct(">Q8sIfQI")
PAIR = struct.Struct(">Q8sIfQIQ8sIfQI")
EDGE = struct.Struct(">Q8sIfQ8sIff")


def id_bytes(doc_id: str) -> bytes:
    """The 8-byte form of a document id (ids are 16 hex digits; anything else is hashed)."""
    try:
        raw = bytes.fromhex(doc_id)
        if len(raw) == 8:
            return raw
    except ValueError:
        pass
    import hashlib

    return hashlib.blake2b(doc_id.encode(), digest_size=8).digest()


def pair_bucket(b_ordinal: int) -> int:
    """The pair bucket of a candidate pair: a mix of its higher ordinal (ordinals are structured,
    partition << 40 | record << 8 | sub, so they must be mixed, not just reduced). Every pair of a
    document with lower-ordinal partners meets in one verify task, which then decodes it once."""
    h = (b_ordinal * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    return (h >> 40) % PAIR_BUCKETS


def pack_edge(a: Node, b: Node, similarity: float) -> bytes:
    return EDGE.pack(a.ordinal, a.doc_id, a.length, a.quality, b.ordinal, b.doc_id, b.length, b.quality, similarity)


def unpack_edge(raw: bytes) -> tuple[Node, Node, float]:
    oa, ia, la, qa, ob, ib, lb, qb, sim = EDGE.unpack(raw)
    return Node(oa, ia, la, qa), Node(ob, ib, lb, qb), sim
