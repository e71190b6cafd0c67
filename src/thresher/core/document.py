"""`Document`, the unit every stage sees; `Drop`, the record of why one was removed;
`Malformed`, an input record that could not become a document."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Document:
    """One page on its way through the pipeline.

    `id` names the input record: readers derive it from where the record is (`record_id`: the input
    file as named and the record's place in it), so two records never share one, even when they hold
    the same page, and the same record gets the same id in any run, config, engine or worker count.
    `ordinal` fixes "first" and the output order: it is `(input partition << 40) | record index` and
    is assigned by the reader, independent of engine.
    `html` is transient: extraction consumes it and sets it to `None`.
    """

    id: str
    text: str = ""
    url: str | None = None
    title: str | None = None
    html: str | None = None
    source: dict[str, Any] = field(default_factory=dict)
    fetched_at: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    annotations: dict[str, Any] = field(default_factory=dict)
    ordinal: int = 0
    # scratch space for values stages derive from the text and later stages of the same scan reuse
    # (the word split exact and near dedup share), and for what a reader hands the stages beside the
    # page (`http_headers`: the response headers consent signals are read from); never written out,
    # not part of equality
    derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def to_record(self) -> dict[str, Any]:
        """The JSON-ready form used in work files and output shards (without the transient html)."""
        record: dict[str, Any] = {"id": self.id, "url": self.url, "title": self.title, "text": self.text}
        if self.fetched_at is not None:
            record["fetched_at"] = self.fetched_at
        if self.source:
            record["source"] = self.source
        if self.metadata:
            record["metadata"] = self.metadata
        if self.annotations:
            record["annotations"] = self.annotations
        return record

    @classmethod
    def from_record(cls, record: dict[str, Any], ordinal: int = 0) -> Document:
        return cls(
            id=record["id"],
            text=record.get("text") or "",
            url=record.get("url"),
            title=record.get("title"),
            source=record.get("source") or {},
            fetched_at=record.get("fetched_at"),
            metadata=record.get("metadata") or {},
            annotations=record.get("annotations") or {},
            ordinal=ordinal,
        )


# The parts of a document's `source` that place it in its input: the file as the plan names it, the
# byte offset of the record (JSONL line, WARC record), the offset inside a file-level gzip member,
# the Parquet row. Other source fields (charset, WARC-Record-ID) describe the record, not its place.
PLACE_FIELDS = ("file", "offset", "inner_offset", "row")


def record_id(source: Mapping[str, Any]) -> str:
    """The id of the input record at `source`'s place: 16 hex digits of a hash of its input file
    and its position in it (`PLACE_FIELDS`).

    Unique per input record by construction (the same page at two places gets two ids), and
    deterministic: positions are absolute in the file, so the id depends neither on how the input
    was split into partitions nor on any config, engine, worker count or resume. Rejects and outputs
    of different configs join on it; a reader's own drops (`read.base.Skip`) get the id the document
    would have had. A caller-supplied id (`input.id_field`) is kept beside it as `metadata.source_id`.
    """
    h = hashlib.blake2b(digest_size=8, person=b"thresher-record")
    for name in PLACE_FIELDS:
        value = source.get(name)
        if value is not None:
            h.update(f"{name}={value}".encode("utf-8", "surrogatepass"))
            h.update(b"\x00")
    return h.hexdigest()


def make_doc_id(url: str | None, content: str | bytes) -> str:
    """A stable 16-hex-digit id from a URL and content, for documents that come from no input file
    (a plugin's generated records). Readers use `record_id`: this one gives the same page twice the
    same id."""
    h = hashlib.blake2b(digest_size=8)
    h.update((url or "").encode("utf-8", "surrogatepass"))
    h.update(b"\x00")
    h.update(content.encode("utf-8", "surrogatepass") if isinstance(content, str) else content)
    return h.hexdigest()


@dataclass(frozen=True, slots=True)
class Drop:
    """Why a document was removed: the stage, a snake_case reason the stage declares, the measured
    value and the bound it crossed. A rule with two bounds reports the one it crossed."""

    stage: str
    reason: str
    value: Any = None
    limit: Any = None
    detail: dict[str, Any] | None = None

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {"stage": self.stage, "reason": self.reason, "value": self.value, "limit": self.limit}
        if self.detail:
            record["detail"] = self.detail
        return record

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Drop:
        return cls(record["stage"], record["reason"], record.get("value"), record.get("limit"), record.get("detail"))

    def describe(self) -> str:
        """One line for humans: `quality.word_count: too_few_words (value 12, limit 50)`."""
        parts = []
        if self.value is not None:
            parts.append(f"value {self.value}")
        if self.limit is not None:
            parts.append(f"limit {self.limit}")
        tail = f" ({', '.join(parts)})" if parts else ""
        return f"{self.stage}: {self.reason}{tail}"


@dataclass(frozen=True, slots=True)
class Malformed:
    """An input record that could not become a document, with where it was and what was wrong."""

    reason: str
    location: str
    detail: str = ""

    def describe(self) -> str:
        return f"{self.location}: {self.reason}" + (f": {self.detail}" if self.detail else "")
