"""`thresher explain DATASET URL-or-ID`: where one document went and why.

Found through the index the build wrote (`DATASET/index/`, one bucket read per lookup), never by
scanning the shards. For a kept document: its shard and row, every quality rule's value against
its bounds (from its annotations), and its duplicate cluster. For a dropped one: the `Drop`, and
for a duplicate the document that was kept instead (its URL, where it is), the similarity and the
cluster; for a document dropped by a per-document stage, every stage is run again on it from its
input record under the dataset's recorded config (`--rerun`, the default when the input is still
there), so every rule's value and bound is shown, not only the first failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, cast

from thresher.core.errors import DatasetError
from thresher.report.collect import RuleBound, rule_bounds
from thresher.report.index import DocumentIndex

DOC_ID = re.compile(r"[0-9a-f]{16}")


@dataclass
class RuleCheck:
    stage: str
    metric: str
    value: float | None
    min_value: float | None
    max_value: float | None

    @property
    def verdict(self) -> str:
        if self.value is None:
            return "not measured"
        if self.min_value is not None and self.value < self.min_value:
            return "too low"
        if self.max_value is not None and self.value > self.max_value:
            return "too high"
        return "ok"


@dataclass
class Explanation:
    id: str
    url: str | None
    status: str  # kept | dropped
    entry: dict[str, Any]
    rules: list[RuleCheck] = field(default_factory=list)
    kept_instead: dict[str, Any] | None = None  # for a duplicate: the keeper's index entry
    rerun: list[dict[str, Any]] | None = None  # stages re-run on the input record: stage, drops
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "url": self.url, "status": self.status, "entry": self.entry,
            "rules": [{"stage": r.stage, "metric": r.metric, "value": r.value, "min": r.min_value,
                       "max": r.max_value, "verdict": r.verdict} for r in self.rules],
            "kept_instead": self.kept_instead, "rerun": self.rerun, "notes": self.notes,
        }

    def render(self) -> str:
        lines = [f"{self.id}  {self.url or '(no url)'}"]
        e = self.entry
        if self.status == "kept":
            lines.append(f"  kept: shard {e.get('shard')}, row {e.get('row')}")
        else:
            d = e.get("drop") or {}
            lines.append(
                f"  dropped by {d.get('stage')}: {d.get('reason')} (value {d.get('value')!r}, bound {d.get('limit')!r})"
            )
            detail = d.get("detail") or {}
            if self.kept_instead is not None:
                k = self.kept_instead
                where = f"shard {k.get('shard')}, row {k.get('row')}" if k.get("status") == "kept" else k.get("status")
                lines.append(
                    f"  duplicate of {k['id']} {k.get('url') or ''} ({where}); similarity {d.get('value')}, cluster "
                    f"{detail.get('cluster')}"
                )
            elif detail:
                lines.append(f"  detail: {detail}")
        src = e.get("source")
        if src:
            lines.append(f"  source: {src}")
        if self.rules:
            lines.append("  rules:")
            for r in self.rules:
                bound = " ".join(x for x in (f">= {r.min_value:g}" if r.min_value is not None else "",
                                             f"<= {r.max_value:g}" if r.max_value is not None else "") if x)
                lines.append(f"    {r.stage:<20} {r.metric:<42} {_show(r.value):>10}  {bound:<18} {r.verdict}")
        if self.rerun is not None:
            lines.append("  stages re-run on the input record:")
            for step in self.rerun:
                drops = step["drops"]
                lines.append(
                    f"    {step['stage']:<20} "
                    + ("; ".join(f"{x['reason']} ({x['value']!r} vs {x['limit']!r})" for x in drops) or "passed")
                )
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def _show(v: float | None) -> str:
    return "-" if v is None else f"{v:g}"


def _rule_checks(rules: list[RuleBound], annotations: dict[str, Any]) -> list[RuleCheck]:
    out = []
    for r in rules:
        v = annotations.get(r.metric)
        value = float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None
        out.append(RuleCheck(r.stage, r.metric, value, r.min_value, r.max_value))
    return out


def find(index: DocumentIndex, query: str) -> list[dict[str, Any]]:
    """The index entries a query names: the document of an id, else the documents of a URL."""
    entries: list[dict[str, Any]] = []
    if DOC_ID.fullmatch(query):
        entry = index.by_id(query)
        if entry is not None:
            entries.append(entry)
    if not entries:
        entries = index.entries_for_url(query)
    return entries


def read_kept(dataset: str | Path, manifest: dict[str, Any], shard: int, row: int) -> dict[str, Any] | None:
    """One kept record: the shard's file read up to its row (one shard, not the dataset), once the
    shard is checked against the manifest: an altered shard's row is another document."""
    from thresher.write.formats import get_format
    from thresher.write.manifest import check_shard
    from thresher.write.storage import open_store

    shards = manifest.get("shards", [])
    if not 0 <= shard < len(shards):
        return None
    fmt = get_format(manifest["format"])
    store = open_store(str(dataset))
    problem = check_shard(store, shards[shard])
    if problem is not None:
        raise DatasetError(f"{store.locate(problem.shard)}: {problem.problem}; explain answers only from an intact "
                           "dataset (run thresher verify)")
    with store.open(shards[shard]["path"]) as raw:
        for i, record in enumerate(fmt.read(cast(BinaryIO, raw))):
            if i == row:
                return record
    return None


def _seekable(partition: Any, offset: int) -> bool:
    """Whether a reader can start at `offset` of this partition: a byte range of uncompressed text
    records (split JSONL), where a document's offset is its line's position in the file."""
    from thresher.read.readers import reader_spec
    from thresher.read.sniff import file_is_compressed

    spec = reader_spec(partition.kind)
    if spec is None or spec.offsets != "uncompressed" or file_is_compressed(partition.path):
        return False
    return partition.start <= offset and (partition.end is None or offset < partition.end)


def rerun(
    config: Any, source: dict[str, Any], doc_id: str, url: str | None = None
) -> tuple[list[dict[str, Any]], dict[str, Any]] | None:
    """Read the document's input record again and run every per-document stage on it, going on
    past a rule set's failures (a transform that drops — empty extraction — ends it). None when the
    input is gone or no longer holds the document: an id names a place in the input, so a record
    found there with another URL is another record (the file was rewritten)."""
    import dataclasses

    from thresher.core.document import Document, Malformed
    from thresher.core.stages import RuleSet, stage_runner
    from thresher.pipeline import build_document_stages
    from thresher.read.sources import plan_partitions, read_partition

    path = source.get("file") if isinstance(source, dict) else None
    if not path or not Path(str(path)).exists():
        return None
    offset = source.get("offset")
    doc: Document | None = None
    for partition in plan_partitions([str(path)], config.input):
        if isinstance(offset, int) and _seekable(partition, offset):
            # ids name the record's place, so the record at `offset` is read alone, not the input
            # up to it: a lookup in a 10 GB JSONL costs one line (falls through when it is not there)
            at = dataclasses.replace(partition, start=offset, end=None)
            first = next((i for i in read_partition(at, config.input) if isinstance(i, (Document, Malformed))), None)
            if isinstance(first, Document) and first.id == doc_id:
                if url is not None and first.url != url:
                    return None
                doc = first
                break
        # a byte-range partition that ends before the record's offset cannot hold it
        if isinstance(offset, int) and partition.end is not None and partition.end <= offset:
            continue
        for item in read_partition(partition, config.input):
            if isinstance(item, Document) and item.id == doc_id:
                doc = item if url is None or item.url == url else None
                break
        if doc is not None:
            break
    if doc is None:
        return None
    steps: list[dict[str, Any]] = []
    for stage in build_document_stages(config):
        drops = stage_runner(stage)(doc)
        steps.append({"stage": stage.name, "drops": [d.to_record() for d in drops]})
        if drops and not isinstance(stage, RuleSet):
            break
    return steps, doc.annotations


def _line_dedup_notes(summary: Any) -> list[str]:
    """A document's spans that line dedup removed (its `dedup.lines` annotation): offsets into the
    text before the edit, and on how many documents and hosts each repeats. The removed text itself
    is in the rejects' `spans.jsonl.gz`."""
    if not isinstance(summary, dict):
        return []
    notes = [f"line dedup removed {summary.get('spans')} repeated span(s), {summary.get('chars')} characters "
             "(the text of each: the rejects' spans.jsonl.gz):"]
    for start, end, documents, hosts in summary.get("removed", []):
        notes.append(f"  characters {start}-{end}: on {documents} documents of {hosts} host(s)")
    if len(summary.get("removed", [])) < int(summary.get("spans", 0)):
        notes.append(f"  ... and {int(summary['spans']) - len(summary['removed'])} more")
    return notes


def explain(dataset: str | Path, query: str, rerun_inputs: bool = True) -> list[Explanation]:
    from thresher.config import RunConfig
    from thresher.report.dataset import open_dataset

    root = Path(dataset)
    opened = open_dataset(root)  # the manifest checked, no unlisted shard
    manifest, index = opened.manifest, opened.index()
    entries = find(index, query)
    rules = rule_bounds(manifest.get("config", {}))
    out: list[Explanation] = []
    for entry in entries:
        ex = Explanation(entry.get("id") or "(no id)", entry.get("url"), entry["status"], entry)
        if entry["status"] == "kept":
            record = read_kept(root, manifest, int(entry["shard"]), int(entry["row"]))
            if record is None:
                ex.notes.append("the shard no longer holds this row (altered dataset? run thresher verify)")
            else:
                annotations = record.get("annotations") or {}
                ex.rules = _rule_checks(rules, annotations)
                ex.notes += _line_dedup_notes(annotations.get("dedup.lines"))
                if annotations.get("dedup.duplicates"):
                    ex.notes.append(f"kept for a cluster of {annotations['dedup.duplicates'] + 1} near/exact duplicates"
                                    f" (cluster {annotations.get('dedup.cluster')})")
        else:
            drop = entry.get("drop") or {}
            if (drop.get("detail") or {}).get("after") == "dedup.lines":
                ex.notes.append("dropped by this rule once line dedup had removed its repeated lines; a re-run "
                                "judges the text as it was before that edit")
                ex.notes += _line_dedup_notes(drop["detail"].get("line_dedup"))
            kept_id = (drop.get("detail") or {}).get("kept_id")
            if kept_id:
                ex.kept_instead = index.by_id(kept_id) or {"id": kept_id, "status": "unknown"}
            elif drop.get("stage") == "read":  # the reader made no document of it: no stage to re-run
                ex.notes.append("dropped by the reader before any stage ran")
            elif rerun_inputs:
                try:
                    config = RunConfig.from_dict(manifest.get("config", {}))
                except Exception as exc:  # noqa: BLE001 - a config this version cannot read
                    ex.notes.append(f"cannot re-run: the recorded config does not load here ({exc})")
                else:
                    result = rerun(config, entry.get("source") or {}, entry["id"], entry.get("url"))
                    if result is None:
                        ex.notes.append("cannot re-run: the input record is no longer where the build read it")
                    else:
                        ex.rerun, annotations = result
                        ex.rules = _rule_checks(rules, annotations)
        out.append(ex)
    return out
