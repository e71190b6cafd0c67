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

- counts what the dataset card says about the text (UTF-8 bytes, whitespace tokens, documents per
  `lang.label`) as `card/…` counters: the scan counts every document that passed the per-document
  stages, the write task counts those the corpus stages then dropped (`card-dropped/…`), and the
  card reports the difference, so finalize never re-reads the shards.

Costs per document: a bin per annotation (~30 counter increments) and one short line. The hot
path is kept to dictionary lookups: each metric caches its values' full counter keys (so a counter
key is neither built nor hashed again), a kept document's index line is formatted from the id and
URL JSON its output line already holds, and the index merge decodes no entry. Index part lines are
`<id JSON>\t<URL JSON>\t<entry JSON>` (the layout is `OBSERVE_LAYOUT`, recorded in the plan: a
resume across layouts is refused).
"""

from __future__ import annotations

import gzip
import json
import math
import re
from collections.abc import Iterable, Iterator
from json import encoder as _json_encoder
from pathlib import Path
from typing import Any

from thresher.core.document import Document, Drop
from thresher.core.stages import RECORDED_TEXT_SIZES
from thresher.core.stats import Stats
from thresher.report.sample import BottomK
from thresher.run.histograms import ValueHistograms
from thresher.stage_hooks import card_counter_names
from thresher.write.tokens import TokenCounter, token_counter

SAMPLE_PER_RULE = 5
SAMPLE_TEXT = 2_000  # characters of a sampled document kept for the report
CARD = "card"
CARD_DROPPED = "card-dropped"
OBSERVE_LAYOUT = 3  # 3: histogram bins found by comparison with fixed boundaries (run.histograms)


# an output line starts {"id":"…","url":… (Document.to_record's order, `dumps_line`'s separators)
_ID_URL = re.compile(rb'\{"id":("(?:[^"\\]|\\.)*"),"url":("(?:[^"\\]|\\.)*"|null)')


def record_id_url_json(line: bytes) -> tuple[str, str]:
    """A written record's id and URL as the JSON its line holds (`"…"` or `null`). `dumps_line`
    and `json.dumps(ensure_ascii=False)` encode a string alike, so these are the bytes encoding the
    decoded values again would give."""
    m = _ID_URL.match(line)
    if m is None:
        record = json.loads(line)
        return _dumps(record["id"]), _dumps(record.get("url"))
    return m.group(1).decode("utf-8"), m.group(2).decode("utf-8")


encode_basestring = _json_encoder.encode_basestring  # the C function where the interpreter has it
c_make_encoder = getattr(_json_encoder, "c_make_encoder", None)  # None without the C accelerator


def _dumps(value: Any) -> str:
    """`json.dumps(value, ensure_ascii=False)`; a string or None without building an encoder (most
    of that call's cost for one short string)."""
    if type(value) is str:
        return encode_basestring(value)  # what json.dumps(ensure_ascii=False) returns for a str
    if value is None:
        return "null"
    return json.dumps(value, ensure_ascii=False)


def _not_serializable(value: Any) -> Any:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


# `json.dumps(entry, ensure_ascii=False, separators=(",", ":"), sort_keys=True)` as the C encoder
# that call builds each time, built once (no circular-reference check: entries are plain trees)
_ENTRY_ENCODER: Any = (None if c_make_encoder is None else
                       c_make_encoder(None, _not_serializable, encode_basestring, None, ":", ",", True, False, True))


def entry_json(entry: dict[str, Any]) -> str:
    """An index entry's JSON: sorted keys, compact separators, non-ASCII kept."""
    if _ENTRY_ENCODER is None:
        return json.dumps(entry, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return "".join(_ENTRY_ENCODER(entry, 0))


def _entry_line(doc_id: str | None, url: str | None, entry: dict[str, Any]) -> str:
    """One index part line (see the module doc)."""
    return f"{_dumps(doc_id)}\t{_dumps(url)}\t{entry_json(entry)}\n"


def _number_json(value: Any) -> str | None:
    """A bound's or value's JSON where it is a plain number or None (what the encoder writes: the
    float's or int's repr); None for anything else (NaN, infinities, other types: the encoder's)."""
    cls = type(value)
    if cls is float:
        return repr(value) if math.isfinite(value) else None
    if cls is int:
        return repr(value)
    return "null" if value is None else None


_DROP_NAMES: dict[tuple[str, str], str] = {}  # (stage, reason) -> their JSON fields, built once


def drop_json(record: dict[str, Any]) -> str:
    """`entry_json` of a `Drop.to_record()`, formatted by hand in sorted key order (detail, limit,
    reason, stage, value) where its values are plain: two thirds of the encoder's cost."""
    stage, reason = record.get("stage"), record.get("reason")
    has_detail = "detail" in record
    if len(record) == 4 + has_detail and type(stage) is str and type(reason) is str and "value" in record:
        value, limit = _number_json(record["value"]), _number_json(record.get("limit", math.nan))
        if value is not None and limit is not None:
            names = _DROP_NAMES.get((stage, reason))
            if names is None:
                names = _DROP_NAMES[(stage, reason)] = (
                    f'"reason":{encode_basestring(reason)},"stage":{encode_basestring(stage)}'
                )
            detail = f'"detail":{entry_json(record["detail"])},' if has_detail else ""
            return f'{{{detail}"limit":{limit},{names},"value":{value}}}'
    return entry_json(record)


def dropped_line(id_json: str, url_json: str, source: Any, drop_record: dict[str, Any]) -> str:
    """The index part line of a dropped document: the bytes `_entry_line` gives for its entry."""
    source_json = "null" if source is None else entry_json(source)
    return (f"{id_json}\t{url_json}\t"
            f'{{"drop":{drop_json(drop_record)},"id":{id_json},"source":{source_json},"status":"dropped","url":{url_json}}}\n')


def kept_line(id_json: str, url_json: str, shard: int, row: int) -> str:
    """The index part line of a kept document, formatted by hand: the bytes `_entry_line` gives
    for its entry (keys in sorted order, compact separators), without a JSON encoder call."""
    return (f"{id_json}\t{url_json}\t"
            f'{{"id":{id_json},"row":{row},"shard":{shard},"status":"kept","url":{url_json}}}\n')


# each ASCII byte to b" " if `str.split()` splits on it, else to b"x": the words of an ASCII text are
# then its b"x" runs, counted in C without making a string per word
_WORD_BYTES = bytes(ord(" ") if chr(i).isspace() else ord("x") for i in range(128)) + b"x" * 128


def whitespace_tokens(text: str) -> int:
    """`len(text.split())`; for ASCII text without building the list of words."""
    if not text.isascii():
        return len(text.split())
    marks = text.encode("ascii").translate(_WORD_BYTES)
    return marks.count(b" x") + (marks[:1] == b"x")


def utf8_length(text: str) -> int:
    """UTF-8 bytes of a text; `isascii` is a flag CPython keeps, so ASCII text is never encoded."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


class TextCounters:
    """Adds a document's text size, whitespace tokens (and a tokenizer's count) and language to
    `prefix/…` counters. Sizes are summed in attributes and added to the counters by `flush` (an
    attribute sum costs a third of a counter update); the language keys are built once."""

    __slots__ = ("counters", "tokens", "_bytes", "_words", "_tokens", "_lang", "_lang_prefix", "_consent_prefix",
                 "text_bytes", "words", "token_count")

    def __init__(self, counters: Any, prefix: str, tokens: TokenCounter | None = None) -> None:
        self.counters = counters
        self.tokens = tokens
        self._bytes = f"{prefix}/text_bytes"
        self._words = f"{prefix}/whitespace_tokens"
        self._tokens = None if tokens is None else f"{prefix}/tokens/{tokens.name}"
        self._lang: dict[str, str] = {}
        self._lang_prefix = f"{prefix}/lang/"
        self._consent_prefix = f"{prefix}/consent/"
        self.text_bytes = self.words = self.token_count = 0

    def add(self, text: str, annotations: dict[str, Any] | None, sizes: tuple[int, int] | None = None) -> None:
        """Count a text (`sizes`: its UTF-8 bytes and whitespace tokens, where they are known)."""
        if sizes is None:
            sizes = utf8_length(text), whitespace_tokens(text)
        self.text_bytes += sizes[0]
        words = sizes[1]
        self.words += words
        if annotations:
            names = card_counter_names(annotations)
            if names:
                self._consent(words, names)
        if self.tokens is not None:
            self.token_count += self.tokens.count(text)
        # the canonical label (`lang.label`, `eng_Latn`); records made before labels existed: their lang.code
        code = (annotations.get("lang.label") or annotations.get("lang.code")) if annotations else None
        if code:
            key = self._lang.get(code)
            if key is None:
                key = self._lang[code] = f"{self._lang_prefix}{code}"
            self.counters[key] += 1

    def _consent(self, words: int, names: tuple[str, ...]) -> None:
        """Documents and whitespace tokens per opt-out signal and per agent robots.txt disallows
        (`consent/<signal>/…`, `consent/robots:<agent>/…`; only documents that carry one)."""
        prefix = self._consent_prefix
        for name in names:
            self.counters[f"{prefix}{name}/documents"] += 1
            if words:
                self.counters[f"{prefix}{name}/whitespace_tokens"] += words

    def flush(self) -> None:
        """Add the summed sizes to the counters (only those that are not zero, as adding did)."""
        counters = self.counters
        for key, n in ((self._bytes, self.text_bytes), (self._words, self.words), (self._tokens, self.token_count)):
            if key is not None and n:
                counters[key] += n
        self.text_bytes = self.words = self.token_count = 0


def card_summary(counters: Any) -> dict[str, Any]:
    """What the card says about the kept text, from the merged `card/` and `card-dropped/` counters:
    the same figures as reading every shard (text bytes, whitespace tokens, documents per language)."""
    def net(key: str) -> int:
        return int(counters.get(f"{CARD}/{key}", 0)) - int(counters.get(f"{CARD_DROPPED}/{key}", 0))

    def by(kind: str) -> dict[str, int]:
        out: dict[str, int] = {}
        prefix = f"{CARD}/{kind}/"
        for key in sorted(counters):
            if key.startswith(prefix):
                n = net(key[len(CARD) + 1:])
                if n > 0:
                    out[key[len(prefix):]] = n
        return out

    summary: dict[str, Any] = {"text_bytes": net("text_bytes"), "whitespace_tokens": net("whitespace_tokens"),
                               "languages": by("lang"), "tokens": by("tokens")}
    consent: dict[str, dict[str, int]] = {}
    for key, n in by("consent").items():  # "noai/documents", "robots:GPTBot/whitespace_tokens"
        name, _, measure = key.rpartition("/")
        consent.setdefault(name, {})[measure] = n
    if consent:  # only a build whose kept pages carry opt-out signals (thresher.consent) has the key
        summary["consent"] = consent
    return summary


class TaskObserver:
    def __init__(self, stats: Stats, index_path: Path, sample_path: Path, card_tokenizer: str | None = None) -> None:
        self.counters = stats.counters
        self.tokens = None if card_tokenizer is None else token_counter(card_tokenizer)
        self.card = TextCounters(self.counters, CARD, self.tokens)
        self.card_dropped = TextCounters(self.counters, CARD_DROPPED, self.tokens)
        self.index_path = index_path
        self.sample_path = sample_path
        self.index_path.parent.mkdir(parents=True, exist_ok=True)
        self._index = open(index_path.with_suffix(".tmp"), "w", encoding="utf-8")
        self.samples: dict[str, BottomK[dict[str, Any]]] = {}
        self.histograms = ValueHistograms(self.counters)

    def _line(self, doc_id: str | None, url: str | None, entry: dict[str, Any]) -> None:
        self._index.write(_entry_line(doc_id, url, entry))

    def annotations(self, annotations: dict[str, Any], passed: bool) -> None:
        """Count each numeric `quality.*` annotation into its histogram bin (`run.histograms`)."""
        self.histograms.add(annotations, passed)

    def survived(self, doc: Document) -> None:
        """A document that passed the per-document stages (it goes on to the corpus stages)."""
        self.histograms.add(doc.annotations, True)  # `annotations`, one call less on the hot path
        # a replayed row's recorded sizes count while its text is the recorded one (no stage edited it)
        recorded = doc.derived.get(RECORDED_TEXT_SIZES)
        sizes = (recorded[1], recorded[2]) if recorded is not None and recorded[0] is doc.text else None
        self.card.add(doc.text, doc.annotations, sizes)

    def corpus_dropped(self, record: dict[str, Any]) -> None:
        """A document a corpus stage (dedup) dropped after the scan counted it as surviving."""
        self.card_dropped.add(record.get("text") or "", record.get("annotations"))

    def dropped(
        self, doc_id: str | None, url: str | None, source: Any, drop: Drop, record: dict[str, Any] | None
    ) -> None:
        drop_record = drop.to_record()
        self._index.write(dropped_line(_dumps(doc_id), _dumps(url), source, drop_record))
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
        self.histograms.add(doc.annotations, False)
        self.dropped(doc.id, doc.url, doc.source, drop, {"text": doc.text, "annotations": doc.annotations})

    def kept(self, doc_id: str, url: str | None, shard: int, row: int) -> None:
        self._index.write(kept_line(_dumps(doc_id), _dumps(url), shard, row))

    def kept_json(self, id_json: str, url_json: str, shard: int, row: int) -> None:
        """`kept` given the id and URL as the JSON the output line holds (`record_id_url_json`)."""
        self._index.write(kept_line(id_json, url_json, shard, row))

    def close(self) -> None:
        """Put the index part and the samples in place (atomically: a task's files exist only
        once it finished)."""
        import os

        self.histograms.flush()
        self.card.flush()
        self.card_dropped.flush()
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
    with open(dest, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as gz:
        for rule in sorted(merged):
            for item in merged[rule].items():
                gz.write((json.dumps(item, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8"))
                n += 1
    return n


def iter_index_parts(parts: Iterable[Path]) -> Iterator[tuple[bytes, bytes, bytes]]:
    """(id JSON, URL JSON, entry JSON) of each line of the tasks' index parts, in UTF-8, none decoded
    (`IndexWriter.add_raw` takes them so)."""
    for part in parts:
        if not part.is_file():
            continue
        with open(part, "rb") as f:
            for line in f:
                id_json, url_json, entry = line.rstrip(b"\r\n").split(b"\t", 2)
                yield id_json, url_json, entry
