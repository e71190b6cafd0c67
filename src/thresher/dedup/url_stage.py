"""URL dedup as a phased corpus stage (`thresher.core.phased`): of the documents kept so far that
share a normalized URL (`thresher.dedup.urls.normalize_url`), keep the one fetched last
(`dedup.url.date_fields`; a missing or unreadable date ranks oldest), ties going to the first in
input order; drop the others as `dedup.url/url_duplicate`, the drop's value the document's fetch
date, its limit the kept one's, its detail the kept document's id and the URL.

Three phases, none holding more than one partition's or one bucket range's records:

- `url_keys`, per partition: a fixed-size record per kept document with a URL (a hash of its
  normalized URL, its date, its ordinal and id) spilled into `URL_BUCKETS` buckets by the hash;
- `url_groups`, per range of buckets (sized by the records found): every partition's records of
  those buckets sorted by (URL hash, newest first, ordinal); each URL's first record is its
  keeper, and a drop record for every other one is spilled by the dropped document's partition;
- `url_decide`, per partition: the partition's drop records in ordinal order, matched against its
  kept documents for the URL and written as its decisions file.

The keeper depends on dates and input order alone, so the decisions are the same for any
partitioning of the input, worker count or engine, and on resume.

URL dedup runs after exact and near dedup have clustered: a re-fetch whose text is (nearly) the
same as an earlier fetch's was already decided by `dedup.keep` (by default the first kept), and
URL dedup chooses among the documents that remain.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from hashlib import blake2b
from typing import TYPE_CHECKING, Any

from thresher.clusters import Decision
from thresher.core.document import Drop
from thresher.core.phased import AfterWrite, KeptCorpus, PhaseDriver, StageOutcome, StagePhase
from thresher.core.serial import Serializable
from thresher.decided import iter_kept
from thresher.dedup.urls import date_text, document_date, normalize_url
from thresher.read.base import ordinal_partition
from thresher.write.atomic import atomic_open, dumps_line
from thresher.write.buckets import BucketSpill, read_bucket_range

if TYPE_CHECKING:
    from thresher.config import RunConfig

NAME = "url"  # the stage: its decisions files, its work folder
STAGE = "dedup.url"  # its drops
REASON = "url_duplicate"
URL_BUCKETS = 256
RANGE_RECORDS = 500_000  # key records per url_groups task: ~40 MiB of records held and sorted

# key record: URL hash (16 bytes) | date key (u64) | ordinal (u64) | document id (8 bytes). Big-endian,
# so sorting the raw bytes sorts by URL, then newest first, then input order.
KEY = struct.Struct(">16sQQ8s")
# drop record: ordinal (u64) | its date key | the keeper's date key | the keeper's id (8 bytes)
DROP = struct.Struct(">QQQ8s")
NEWEST = 2**63 - 1
MISSING = 2**64 - 1  # the date key of a document without a readable date: after every date


def date_key(micros: int | None) -> int:
    """A date (`parse_date`) as an unsigned key that sorts newest first, no date last."""
    return MISSING if micros is None else NEWEST - micros


def key_date(key: int) -> int | None:
    return None if key == MISSING else NEWEST - key


def url_hash(normalized: str) -> bytes:
    return blake2b(normalized.encode("utf-8", "surrogatepass"), digest_size=16, person=b"thresher-url").digest()


def id_bytes(doc_id: str) -> bytes:
    """The 8-byte form of a document id, as the cluster phase names clusters (ids are 16 hex
    digits; anything else is hashed)."""
    try:
        raw = bytes.fromhex(doc_id)
    except ValueError:
        raw = b""
    return raw if len(raw) == 8 else blake2b(doc_id.encode(), digest_size=8).digest()


@dataclass(frozen=True, slots=True)
class UrlKeys(Serializable):
    """A `url_keys` task's result: its records (kept documents with a URL) per bucket."""

    records: int
    buckets: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class UrlGroups(Serializable):
    """A `url_groups` task's result: URLs with more than one document, the documents dropped, and
    the most documents one URL had."""

    urls: int
    dropped: int
    largest: int


@dataclass(frozen=True, slots=True)
class UrlDecided(Serializable):
    """A `url_decide` task's result: how many documents of its partition it dropped."""

    dropped: int


def _keys_path(work: Any, p: int) -> Any:
    return work.path(NAME, f"keys-p{p:06d}.bin")


def _drops_path(work: Any, lo: int) -> Any:
    return work.path(NAME, f"drops-b{lo:04d}.bin")


def _runs(path: Any) -> list[list[int]]:
    runs: list[list[int]] = json.loads(path.with_suffix(".idx").read_text())
    return runs


def url_keys_task(ctx: Any, p: int, decided_by: Sequence[str]) -> UrlKeys:
    """Spill a key record for every document of partition p kept so far that has a URL."""
    fields = tuple(ctx.config.dedup.url.date_fields)
    records = 0
    with BucketSpill(_keys_path(ctx.work, p), URL_BUCKETS) as spill:
        for ordinal, line in iter_kept(*ctx.work.kept_sources(p, decided_by)):
            record = json.loads(line)
            url = record.get("url")
            if not isinstance(url, str) or not (normalized := normalize_url(url)):
                continue
            digest = url_hash(normalized)
            when = date_key(document_date(record, fields))
            spill.add(int.from_bytes(digest[:4], "big") % URL_BUCKETS,
                      KEY.pack(digest, when, ordinal, id_bytes(record["id"])))
            records += 1
    return UrlKeys(records, tuple(n // KEY.size for n in spill.bucket_bytes))  # counted as spilled


def url_groups_task(ctx: Any, lo: int, hi: int, partitions: Sequence[int]) -> UrlGroups:
    """Find the keeper of every URL of buckets [lo, hi) and spill a drop record for each other
    document of the URL, by the position of its partition in `partitions`."""
    records: list[bytes] = []
    for p in partitions:
        path = _keys_path(ctx.work, p)
        records.extend(read_bucket_range(path, _runs(path), lo, hi, KEY.size))
    records.sort()
    position = {p: i for i, p in enumerate(partitions)}
    urls = dropped = largest = 0
    with BucketSpill(_drops_path(ctx.work, lo), len(partitions)) as spill:
        start = 0
        while start < len(records):
            digest = records[start][:16]
            end = start + 1
            while end < len(records) and records[end][:16] == digest:
                end += 1
            if end - start > 1:
                _, keeper_when, _, keeper_id = KEY.unpack(records[start])
                for record in records[start + 1 : end]:
                    _, when, ordinal, _ = KEY.unpack(record)
                    spill.add(position[ordinal_partition(ordinal)], DROP.pack(ordinal, when, keeper_when, keeper_id))
                urls += 1
                dropped += end - start - 1
                largest = max(largest, end - start)
            start = end
    return UrlGroups(urls, dropped, largest)


def url_decide_task(ctx: Any, p: int, i: int, starts: Sequence[int], decided_by: Sequence[str]) -> UrlDecided:
    """Write partition p's decisions (it is the i-th partition): its drop records from every
    `url_groups` task (by the ranges' first buckets `starts`), in ordinal order."""
    drops: list[bytes] = []
    for lo in starts:
        path = _drops_path(ctx.work, lo)
        drops.extend(read_bucket_range(path, _runs(path), i, i + 1, DROP.size))
    drops.sort()  # big-endian: by ordinal
    pending = iter(drops)
    current = next(pending, None)
    with atomic_open(ctx.work.stage_decisions(NAME, p), "wb", durable=False) as out:
        for ordinal, line in iter_kept(*ctx.work.kept_sources(p, decided_by)):
            if current is None:
                break
            o, when, keeper_when, keeper_id = DROP.unpack(current)
            if o < ordinal:
                raise RuntimeError(f"partition {p}: a URL drop for ordinal {o}, which no kept document has")
            if o > ordinal:
                continue
            out.write(dumps_line(_decision(ordinal, json.loads(line), when, keeper_when, keeper_id).to_json()))
            current = next(pending, None)
    if current is not None:
        raise RuntimeError(f"partition {p}: a URL drop for ordinal {DROP.unpack(current)[0]}, which no kept "
                           "document has")
    return UrlDecided(len(drops))


def _decision(ordinal: int, record: dict[str, Any], when: int, keeper_when: int, keeper_id: bytes) -> Decision:
    kept = keeper_id.hex()
    detail = {"kept_id": kept, "cluster": kept, "url": normalize_url(record["url"]),
              "by": "input_order" if when == keeper_when else "date"}
    drop = Drop(STAGE, REASON, value=date_text(key_date(when)), limit=date_text(key_date(keeper_when)), detail=detail)
    return Decision(ordinal=ordinal, cluster=kept, drop=drop)


def plan_bucket_ranges(counts: Sequence[int], target: int = RANGE_RECORDS) -> list[tuple[int, int]]:
    """Contiguous bucket ranges [lo, hi) covering every bucket, each with at most `target` records
    unless one bucket alone has more; none when there are no records."""
    if not any(counts):
        return []
    ranges: list[tuple[int, int]] = []
    lo = total = 0
    for b, n in enumerate(counts):
        if b > lo and total + n > target:
            ranges.append((lo, b))
            lo, total = b, 0
        total += n
    ranges.append((lo, len(counts)))
    return ranges


PHASES = (
    StagePhase("url_keys", url_keys_task, UrlKeys, memory_mib=256),
    StagePhase("url_groups", url_groups_task, UrlGroups, memory_mib=512),
    StagePhase("url_decide", url_decide_task, UrlDecided, memory_mib=256),
)


class UrlDedup:
    """One document per normalized URL, the newest (see the module docstring)."""

    name = NAME
    section = "url_dedup"  # unused: the stage adds no manifest section
    phases = PHASES

    def run(self, driver: PhaseDriver, corpus: KeptCorpus) -> StageOutcome:
        parts = list(corpus.partitions)
        stages = list(corpus.decided_by)
        keyed: list[UrlKeys] = driver.phase(
            "url_keys", [driver.call("url_keys", f"url_keys-{p:06d}", p, stages) for p in parts])
        counts = [sum(k.buckets[b] for k in keyed) for b in range(URL_BUCKETS)]
        ranges = plan_bucket_ranges(counts)
        grouped: list[UrlGroups] = driver.phase(
            "url_groups", [driver.call("url_groups", f"url_groups-{lo:04d}", lo, hi, parts) for lo, hi in ranges])
        starts = [lo for lo, _ in ranges]
        decided: list[UrlDecided] = driver.phase(
            "url_decide", [driver.call("url_decide", f"url_decide-{p:06d}", p, i, starts, stages)
                           for i, p in enumerate(parts)])
        dropped = {p: d.dropped for p, d in zip(parts, decided, strict=True)}
        return StageOutcome(dropped, {"documents": sum(k.records for k in keyed),
                                      "urls_repeated": sum(g.urls for g in grouped),
                                      "largest_group": max((g.largest for g in grouped), default=0)})

    def after_write(
        self, driver: PhaseDriver, corpus: KeptCorpus, shards: Sequence[Any], outcome: StageOutcome
    ) -> AfterWrite:
        """Nothing: the drops are counted in the stats (`drops["dedup.url"]`), and a build where no
        URL repeats has the manifest of a build without the stage."""
        return AfterWrite()


def url_stage(config: RunConfig) -> UrlDedup | None:
    """The stage table's factory: the stage unless `--no-url-dedup`."""
    return UrlDedup() if config.dedup.url.enabled else None
