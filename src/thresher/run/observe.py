"""What a build records for `thresher report` and `thresher explain`, beside the shards, whether or
not `--rejects` was given.

Each scan and write task has an observer that, per document:
- counts every numeric `quality.*` annotation into a histogram bin of the task's `Stats`, split by
  whether the document passed the per-document stages (`hist/<metric>/<passed|dropped>/<bin>`):
  bins are fixed (ten a decade, from the value alone), so histograms merge by summing like every
  other counter and never depend on partitioning;
- appends one line to the task's index part (id, URL, source, and the Drop or the shard and row):
  the build turns these into `DATASET/index/` (`thresher.report.index`);
- keeps the `SAMPLE_PER_RULE` dropped documents of each rule with the smallest id hashes
  (`BottomK`): the union of the tasks' samples contains the corpus-wide sample, so the build
  merges them into `DATASET/samples.jsonl.gz`, the same whatever the engine or worker count.

Costs per document: a bin per annotation (~30 counter increments) and one short JSON line.
"""

from __future__ import annotations

import gzip
import json
import math
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from thresher.core.document import Document, Drop
from thresher.core.stats import Stats
from thresher.report.sample import BottomK

SAMPLE_PER_RULE = 5
SAMPLE_TEXT = 2_000  # characters of a sampled document kept for the report
BINS_PER_DECADE = 10
HIST = "hist"


def value_bin(value: float) -> str:
    """The histogram bin of a value: `z` for 0, else `p<k>`/`n<k>` for |value| in
    [10^(k/10), 10^((k+1)/10)): a data-independent binning with 26% wide bins."""
    if value == 0 or not math.isfinite(value):
        return "z"
    k = math.floor(math.log10(abs(value)) * BINS_PER_DECADE)
    return f"{'p' if value > 0 else 'n'}{k}"


def bin_range(name: str) -> tuple[float, float]:
    """The [low, high) range a bin stands for (0, 0 for the zero bin)."""
    if name == "z":
        return (0.0, 0.0)
    sign = 1.0 if name[0] == "p" else -1.0
    k = int(name[1:])
    a, b = 10 ** (k / BINS_PER_DECADE), 10 ** ((k + 1) / BINS_PER_DECADE)
    return (a, b) if sign > 0 else (-b, -a)


# an output line starts {"id":"…","url":… (Document.to_record's order, `dumps_line`'s separators)
_ID_URL = re.compile(rb'\{"id":("(?:[^"\\]|\\.)*"),"url":("(?:[^"\\]|\\.)*"|null)')


def record_id_url(line: bytes) -> tuple[str, str | None]:
    """A written record's id and URL without decoding the whole line (its text can be megabytes)."""
    m = _ID_URL.match(line)
    if m is None:
        record = json.loads(line)
        return record["id"], record.get("url")
    return json.loads(m.group(1)), json.loads(m.group(2))


def _numeric(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class TaskObserver:
    def __init__(self, stats: Stats, index_path: Path, sample_path: Path) -> None:
        self.counters = stats.counters
        self.index_path = index_path
        self.sample_path = sample_path
        self.index_path.parent.mkdir(parents=True, exist_ok=True)
        self._index = open(index_path.with_suffix(".tmp"), "w", encoding="utf-8")
        self.samples: dict[str, BottomK[dict[str, Any]]] = {}
        self._prefixes: dict[tuple[str, bool], str] = {}

    def _line(self, entry: dict[str, Any]) -> None:
        self._index.write(json.dumps(entry, ensure_ascii=False, separators=(",", ":"), sort_keys=True) + "\n")

    def annotations(self, annotations: dict[str, Any], passed: bool) -> None:
        counters = self.counters
        prefixes = self._prefixes
        for key, value in annotations.items():
            if key.startswith("quality.") and _numeric(value):
                prefix = prefixes.get((key, passed))
                if prefix is None:  # built once per metric and side, not per document
                    prefix = prefixes[(key, passed)] = f"{HIST}/{key}/{'passed' if passed else 'dropped'}/"
                counters[prefix + value_bin(value)] += 1

    def dropped(self, doc_id: str | None, url: str | None, source: Any, drop: Drop, record: dict[str, Any] | None) -> None:
        drop_record = drop.to_record()
        self._line({"id": doc_id, "url": url, "status": "dropped", "source": source, "drop": drop_record})
        rule = f"{drop.stage}/{drop.reason}"
        sample = self.samples.get(rule)
        if sample is None:
            sample = self.samples[rule] = BottomK(SAMPLE_PER_RULE)
        key = doc_id if doc_id is not None else json.dumps(source, sort_keys=True)
        entry = {"id": doc_id, "key": key, "url": url, "drop": drop_record}
        if record is not None:
            entry["text"] = (record.get("text") or "")[:SAMPLE_TEXT]
            entry["annotations"] = record.get("annotations") or {}
        sample.add(key, entry)

    def chain_dropped(self, doc: Document, drop: Drop) -> None:
        self.annotations(doc.annotations, passed=False)
        self.dropped(doc.id, doc.url, doc.source, drop, {"text": doc.text, "annotations": doc.annotations})

    def kept(self, doc_id: str, url: str | None, shard: int, row: int) -> None:
        self._line({"id": doc_id, "url": url, "status": "kept", "shard": shard, "row": row})

    def close(self) -> None:
        """Put the index part and the samples in place (atomically: a task's files exist only
        once it finished)."""
        import os

        self._index.close()
        os.replace(self.index_path.with_suffix(".tmp"), self.index_path)
        tmp = self.sample_path.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            for rule in sorted(self.samples):
                for item in self.samples[rule].items():
                    f.write(json.dumps({"rule": rule, **item}, ensure_ascii=False, sort_keys=True) + "\n")
        os.replace(tmp, self.sample_path)


def merge_samples(parts: Iterable[Path], dest: Path) -> int:
    """The corpus-wide bottom-k per rule from the tasks' samples, written as gzip (mtime 0)."""
    merged: dict[str, BottomK[dict[str, Any]]] = {}
    for part in parts:
        if not part.is_file():
            continue
        with open(part, encoding="utf-8") as f:
            for line in f:
                item = json.loads(line)
                sample = merged.get(item["rule"])
                if sample is None:
                    sample = merged[item["rule"]] = BottomK(SAMPLE_PER_RULE)
                sample.add(item["key"], item)
    n = 0
    with open(dest, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
        for rule in sorted(merged):
            for item in merged[rule].items():
                gz.write((json.dumps(item, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8"))
                n += 1
    return n


def iter_index_parts(parts: Iterable[Path]) -> Iterator[dict[str, Any]]:
    for part in parts:
        if not part.is_file():
            continue
        with open(part, encoding="utf-8") as f:
            for line in f:
                yield json.loads(line)
