"""Line dedup as a phased corpus stage (`--line-dedup`): a line (or paragraph) that many documents of
the corpus, or many pages of one host, repeat is boilerplate, and is removed from every document that
holds it, each removed span attributed. Three phases, none holding more than one partition's or one
bucket range's records:

- `line_keys`, one task per partition: every unit of every kept document as a fixed-size record
  (unit key, host key, ordinal, unit index), spilled into 256 buckets by the unit key;
- `line_count`, one task per range of buckets (about `COUNT_TASK_BYTES` of records): the records
  sorted, so each unit's occurrences are together with its hosts in order; a unit on at least
  `min_documents` documents, or on at least `min_host_pages` pages of one host, is boilerplate, and
  each of its occurrences becomes a removal record, spilled into a bucket per partition;
- `line_edit`, one task per partition: its removals sorted by document, applied as the kept
  documents stream by. The edited text is judged again by the quality rules (they run on the text
  users get), so a page that was mostly boilerplate is dropped by the rule it now fails; a page
  left with nothing is dropped as `dedup.lines`. Each edit is a `Decision` with the new text, and
  with `--rejects` every removed span is a record of `spans.jsonl.gz` there.

The stage runs after exact and near dedup, so a page's copies count once.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from thresher.clusters import Decision
from thresher.core.document import Document, Drop
from thresher.core.phased import AfterWrite, KeptCorpus, PhaseDriver, StageOutcome, StagePhase
from thresher.core.serial import Serializable
from thresher.decided import iter_kept
from thresher.dedup.config import LineDedupConfig
from thresher.dedup.lines import (
    KEY_BUCKETS,
    KEY_RECORD,
    REMOVAL,
    Level,
    Unit,
    host_key,
    key_bucket,
    unit_key,
    unit_spans,
    without_spans,
)
from thresher.read.base import ordinal_partition
from thresher.write.atomic import atomic_open, dumps_line
from thresher.write.buckets import BucketSpill, read_bucket_range

NAME = "lines"
STAGE = "dedup.lines"  # drops and spans are attributed to it
COUNT_TASK_BYTES = 16 * 1024 * 1024  # key records per line_count task: its memory, about 4x this
TOP_LINES = 25  # the most removed lines a partition reports, and the manifest lists
SPANS_IN_ANNOTATION = 32  # removed spans listed in a document's annotation (all of them go to the rejects)


@dataclass(frozen=True, slots=True, kw_only=True)
class KeysResult(Serializable):
    units: int
    bucket_bytes: tuple[int, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class CountResult(Serializable):
    units: int  # distinct units found to be boilerplate
    removals: int  # their occurrences


@dataclass(frozen=True, slots=True, kw_only=True)
class TopLine(Serializable):
    text: str
    documents: int
    hosts: int
    removed: int  # occurrences removed (in this partition, or summed)


@dataclass(frozen=True, slots=True, kw_only=True)
class EditResult(Serializable):
    edited: int  # documents kept with spans removed
    spans: int
    chars: int
    dropped: int  # documents dropped: by a rule on the edited text, or left empty
    dropped_by: dict[str, int]
    top: tuple[TopLine, ...]


def _keys_path(ctx: Any, p: int) -> Any:
    return ctx.work.path(NAME, f"keys-p{p:06d}.bin")


def _removals_path(ctx: Any, k: int) -> Any:
    return ctx.work.path(NAME, f"removals-k{k:04d}.bin")


def _runs(path: Any) -> list[list[int]]:
    with open(path.with_suffix(".idx"), "rb") as f:
        runs: list[list[int]] = json.loads(f.read())
    return runs


def line_keys_task(ctx: Any, p: int, decided_by: Sequence[str], unit: Unit, level: Level) -> KeysResult:
    """Spill a record per unit of each of partition p's kept documents, by unit key bucket."""
    units = 0
    pack = KEY_RECORD.pack
    with BucketSpill(_keys_path(ctx, p), KEY_BUCKETS) as spill:
        for ordinal, line in iter_kept(*ctx.work.kept_sources(p, decided_by)):
            record = json.loads(line)
            text = record.get("text") or ""
            host = host_key(record.get("url"))
            for i, (start, end, _) in enumerate(unit_spans(text, unit)):
                key = unit_key(text[start:end], level)
                if key is not None:
                    spill.add(key_bucket(key), pack(key, host, ordinal, i))
                    units += 1
    return KeysResult(units=units, bucket_bytes=tuple(spill.bucket_bytes))


def line_count_task(
    ctx: Any, k: int, lo: int, hi: int, partitions: Sequence[int], min_documents: int, min_host_pages: int
) -> CountResult:
    """Find the boilerplate among the units of key buckets [lo, hi) and write a removal record for
    each of its occurrences, into a bucket per partition."""
    size = KEY_RECORD.size
    records: list[bytes] = []
    for p in partitions:
        path = _keys_path(ctx, p)
        records.extend(read_bucket_range(path, _runs(path), lo, hi, size))
    records.sort()  # by unit key, then host, then document: one unit's occurrences together
    unpack = KEY_RECORD.unpack
    pack = REMOVAL.pack
    units = removals = 0
    with BucketSpill(_removals_path(ctx, k), max(partitions, default=0) + 1) as spill:
        i, n = 0, len(records)
        while i < n:
            key = records[i][:8]
            j = i
            while j < n and records[j][:8] == key:
                j += 1
            group = [unpack(r) for r in records[i:j]]
            documents = hosts = most = 0
            last_doc = last_host = None
            pages = 0
            for _, host, ordinal, _ in group:
                if host != last_host:
                    if last_host is not None and last_host != bytes(8):
                        hosts += 1
                        most = max(most, pages)
                    last_host, pages, last_doc = host, 0, None
                if ordinal != last_doc:
                    documents += 1
                    pages += 1
                    last_doc = ordinal
            if last_host is not None and last_host != bytes(8):
                hosts += 1
                most = max(most, pages)
            if documents >= min_documents or most >= min_host_pages:
                units += 1
                for _, _, ordinal, index in group:
                    spill.add(ordinal_partition(ordinal), pack(ordinal, index, documents, hosts, most))
                    removals += 1
            i = j
    return CountResult(units=units, removals=removals)


def _quality_runners(config: Any) -> list[Any]:
    from thresher.core.stages import stage_runner
    from thresher.lang.routing import build_routed_quality_stages

    return [(stage.name, stage_runner(stage)) for stage in build_routed_quality_stages(config.quality)]


def line_edit_task(ctx: Any, p: int, count_tasks: int, decided_by: Sequence[str], unit: Unit) -> EditResult:
    """Remove the boilerplate units of partition p's kept documents; write the edits (or the drops of
    what the rules no longer keep) as decisions, and with rejects every removed span."""
    size = REMOVAL.size
    found: list[bytes] = []
    for k in range(count_tasks):
        path = _removals_path(ctx, k)
        found.extend(read_bucket_range(path, _runs(path), p, p + 1, size))
    found.sort()  # by document, then unit
    removals = iter(REMOVAL.unpack(r) for r in found)
    pending = next(removals, None)
    runners: list[Any] | None = None
    edited = spans_total = chars_total = dropped = 0
    dropped_by: dict[str, int] = {}
    top: dict[str, list[int]] = {}  # unit text -> [documents, hosts, removed]
    with (
        atomic_open(ctx.work.stage_decisions(NAME, p), "wb", durable=False) as decisions_out,
        atomic_open(ctx.work.stage_rejects("spans", NAME, p), "wb", durable=False) as spans_out,
    ):
        for ordinal, line in iter_kept(*ctx.work.kept_sources(p, decided_by)):
            while pending is not None and pending[0] < ordinal:  # a document an earlier stage dropped
                pending = next(removals, None)
            if pending is None or pending[0] != ordinal:
                continue
            flagged: dict[int, tuple[int, int, int]] = {}
            while pending is not None and pending[0] == ordinal:
                flagged[pending[1]] = pending[2:]
                pending = next(removals, None)
            record = json.loads(line)
            text = record.get("text") or ""
            cut: list[tuple[int, int]] = []
            listed: list[list[int]] = []
            for i, (start, end, after) in enumerate(unit_spans(text, unit)):
                counts = flagged.get(i)
                if counts is None:
                    continue
                documents, hosts, most = counts
                cut.append((start, after))
                if len(listed) < SPANS_IN_ANNOTATION:
                    listed.append([start, after, documents, hosts])
                content = text[start:end].strip()
                entry = top.get(content)
                if entry is None:
                    top[content] = [documents, hosts, 1]
                else:
                    entry[2] += 1
                if ctx.write_rejects:
                    spans_out.write(dumps_line({
                        "id": record["id"], "url": record.get("url"), "stage": STAGE, "start": start, "end": after,
                        "text": text[start:after], "documents": documents, "hosts": hosts, "host_pages": most,
                    }))
            if not cut:
                continue
            removed_chars = sum(end - start for start, end in cut)
            spans_total += len(cut)
            chars_total += removed_chars
            new_text = without_spans(text, cut)
            summary = {"spans": len(cut), "chars": removed_chars, "removed": listed}
            drop: Drop | None = None
            annotations: dict[str, Any] = {}
            if not new_text.strip():
                drop = Drop(STAGE, "only_repeated_lines", value=len(cut), limit=None,
                            detail={"cluster": "", "removed_chars": removed_chars})
            else:
                if runners is None:
                    runners = _quality_runners(ctx.config)
                doc = Document.from_record({**record, "text": new_text}, ordinal)
                before = dict(doc.annotations)
                for _, run in runners:
                    failures = run(doc)
                    if failures:
                        first = failures[0]
                        drop = Drop(first.stage, first.reason, first.value, first.limit,
                                    {**(first.detail or {}), "cluster": "", "after": STAGE, "line_dedup": summary})
                        break
                new_text = doc.text  # a rule set's transform may have edited it again
                annotations = {key: v for key, v in doc.annotations.items() if before.get(key) != v}
            if drop is not None:
                dropped += 1
                dropped_by[drop.stage] = dropped_by.get(drop.stage, 0) + 1
                decisions_out.write(dumps_line(Decision(ordinal=ordinal, cluster="", drop=drop).to_json()))
                continue
            annotations[STAGE] = summary
            edited += 1
            decisions_out.write(dumps_line(
                Decision(ordinal=ordinal, edit={"text": new_text, "annotations": annotations}).to_json()))
    best = heapq.nsmallest(TOP_LINES, top.items(), key=lambda kv: (-kv[1][0], -kv[1][2], kv[0]))
    return EditResult(
        edited=edited, spans=spans_total, chars=chars_total, dropped=dropped,
        dropped_by=dict(sorted(dropped_by.items())),
        top=tuple(TopLine(text=t[:300], documents=d, hosts=h, removed=r) for t, (d, h, r) in best),
    )


def plan_count_ranges(bucket_bytes: Sequence[int], target: int = COUNT_TASK_BYTES) -> list[tuple[int, int]]:
    """Contiguous bucket ranges of about `target` bytes of key records each (at least one)."""
    ranges: list[tuple[int, int]] = []
    lo, held = 0, 0
    for b, nbytes in enumerate(bucket_bytes):
        if held and held + nbytes > target:
            ranges.append((lo, b))
            lo, held = b, 0
        held += nbytes
    ranges.append((lo, len(bucket_bytes)))
    return ranges


class LineDedupStage:
    """The phased stage (see the module docstring)."""

    name = NAME
    section = "line_dedup"
    phases = (
        StagePhase("line_keys", line_keys_task, KeysResult, memory_mib=256),
        StagePhase("line_count", line_count_task, CountResult, memory_mib=4 * COUNT_TASK_BYTES // 2**20 + 128),
        StagePhase("line_edit", line_edit_task, EditResult, memory_mib=512),
    )

    def __init__(self, config: LineDedupConfig) -> None:
        if config.min_documents < 2 or config.min_host_pages < 2:
            raise ValueError(
                "line dedup: min_documents and min_host_pages must be at least 2 (1 removes every line)")
        self.config = config

    def run(self, driver: PhaseDriver, corpus: KeptCorpus) -> StageOutcome:
        c = self.config
        parts = list(corpus.partitions)
        stages = list(corpus.decided_by)
        keyed: list[KeysResult] = driver.phase(
            "line_keys", [driver.call("line_keys", f"line_keys-{p:06d}", p, stages, c.unit, c.level) for p in parts])
        totals = [sum(r.bucket_bytes[b] for r in keyed) for b in range(KEY_BUCKETS)]
        ranges = plan_count_ranges(totals)
        counted: list[CountResult] = driver.phase("line_count", [
            driver.call("line_count", f"line_count-{k:04d}", k, lo, hi, parts, c.min_documents, c.min_host_pages,
                        weight=float(sum(totals[lo:hi])))
            for k, (lo, hi) in enumerate(ranges)
        ])
        edits: list[EditResult] = driver.phase(
            "line_edit",
            [driver.call("line_edit", f"line_edit-{p:06d}", p, len(ranges), stages, c.unit) for p in parts],
        )
        merged: dict[str, list[int]] = {}
        dropped_by: dict[str, int] = {}
        for e in edits:
            for t in e.top:
                entry = merged.setdefault(t.text, [t.documents, t.hosts, 0])
                entry[2] += t.removed
            for stage, n in e.dropped_by.items():
                dropped_by[stage] = dropped_by.get(stage, 0) + n
        top = heapq.nsmallest(TOP_LINES, merged.items(), key=lambda kv: (-kv[1][0], -kv[1][2], kv[0]))
        section = {
            "unit": c.unit, "level": c.level, "min_documents": c.min_documents, "min_host_pages": c.min_host_pages,
            "units": sum(r.units for r in keyed), "boilerplate_units": sum(r.units for r in counted),
            "documents_edited": sum(e.edited for e in edits), "spans_removed": sum(e.spans for e in edits),
            "chars_removed": sum(e.chars for e in edits), "documents_dropped": sum(e.dropped for e in edits),
            "dropped_by": dict(sorted(dropped_by.items())),
            "top_lines": [{"text": t, "documents": d, "hosts": h, "removed": r} for t, (d, h, r) in top],
        }
        return StageOutcome({p: e.dropped for p, e in zip(parts, edits, strict=True)}, section)

    def after_write(
        self, driver: PhaseDriver, corpus: KeptCorpus, shards: Sequence[Any], outcome: StageOutcome
    ) -> AfterWrite:
        return AfterWrite(section=dict(outcome.state))


def line_stage(config: Any) -> LineDedupStage | None:
    """The stage table's factory: the stage with `--line-dedup`, else None."""
    return LineDedupStage(config.dedup.lines) if config.dedup.lines.enabled else None
