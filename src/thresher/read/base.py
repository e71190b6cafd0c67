"""What readers produce: partitions of the input, and the items read from one partition."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from thresher.core.document import Document, Drop, Malformed, record_id

# A reader kind registered in `thresher.read.readers` ("jsonl", "html", "warc", "parquet", or a plugin's).
PartitionKind = str

# Ordinal layout: input partition (24 bits) | record index (32 bits) | sub-document (8 bits).
# It fixes "first" and the output order independently of engine and worker count.
_RECORD_BITS = 32
_SUB_BITS = 8


def make_ordinal(partition: int, record: int, sub: int = 0) -> int:
    return (partition << (_RECORD_BITS + _SUB_BITS)) | (record << _SUB_BITS) | sub


def ordinal_partition(ordinal: int) -> int:
    return ordinal >> (_RECORD_BITS + _SUB_BITS)


@dataclass(frozen=True, slots=True)
class Partition:
    """One scan task's share of the input: a file, a byte range of a large JSONL file, or a batch
    of HTML files. `index` is its position in the deterministic plan."""

    index: int
    kind: PartitionKind
    paths: tuple[str, ...]
    start: int = 0
    end: int | None = None  # byte range [start, end) for split JSONL; None = to the end

    @property
    def path(self) -> str:
        return self.paths[0]

    @property
    def size_hint(self) -> int | None:
        """The bytes of a byte-range partition (what its scan costs, roughly); None for whole files.
        Engines start the largest first."""
        return self.end - self.start if self.end is not None else None

    def describe(self) -> str:
        if self.end is not None or self.start:
            return f"{self.path}[{self.start}:{self.end if self.end is not None else ''}]"
        if len(self.paths) > 1:
            return f"{self.paths[0]} (+{len(self.paths) - 1} files)"
        return self.path


@dataclass(frozen=True, slots=True)
class Skip:
    """A record that is a document-to-be but is dropped by the reader itself (a WARC revisit, a
    non-HTML response): it counts as seen and dropped, attributed to `drop`."""

    drop: Drop
    location: str
    url: str | None = None
    doc_id: str | None = None

    @property
    def source(self) -> dict[str, Any]:
        """The record's place as a document's `source` holds it: file and byte offset."""
        path, _, place = self.location.rpartition("@")
        offset, _, inner = place.partition("+")
        source: dict[str, Any] = {"file": self.location}
        if path and offset.isdigit() and (not inner or inner.isdigit()):
            source = {"file": path, "offset": int(offset)}
            if inner:
                source["inner_offset"] = int(inner)
        return source

    @property
    def id(self) -> str:
        """The reader's id, else the one a document at this place would have had (`record_id`)."""
        return self.doc_id or record_id(self.source)

    def to_record(self) -> dict[str, Any]:
        """The reject record in the schema of every other reject: `id`, `url`, `source` (file and
        byte offset), `drop`."""
        return {"id": self.id, "url": self.url, "source": self.source, "drop": self.drop.to_record()}


@dataclass(frozen=True, slots=True)
class Event:
    """Something worth counting that is not a record (a WAT file ignored, a charset fallback)."""

    name: str
    location: str = ""
    detail: str = ""


ReadItem = Document | Malformed | Skip | Event
