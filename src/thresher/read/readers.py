"""The registry of input readers: what each input kind is, how it is recognised and read.

A reader is one module with a function `read(partition, config) -> Iterator[ReadItem]`, plus one
`ReaderSpec` line in `READERS` below (or, from a third-party package, a `ReaderSpec` object named by
an entry point in the `thresher.readers` group). The spec is plain data, so sniffing and planning
never import a reader that no input needs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from thresher.registry import Registry, load_object

if TYPE_CHECKING:
    from thresher.read.base import Partition, ReadItem
    from thresher.read.config import InputConfig

ReadFunction = Callable[["Partition", "InputConfig"], Iterator["ReadItem"]]


@dataclass(frozen=True, slots=True, kw_only=True)
class ReaderSpec:
    """An input kind (the partition kind and `--input-format` value) and what the planner and the
    scan need to know about it."""

    kind: str
    read: str  # `module:function`, imported when a partition of this kind is read
    magic: tuple[bytes, ...] = ()  # leading decompressed bytes that identify the kind
    suffixes: tuple[str, ...] = ()  # file names (after any compression suffix) that identify it
    splittable: bool = False  # an uncompressed file may be cut into byte ranges at record boundaries
    batched: bool = False  # many small files go into one partition (one document per file)
    # what `source["offset"]` of a document is: a byte position in the file itself ("file"), one only
    # when the file is not compressed ("uncompressed"), or none. The scan reports progress by it.
    offsets: Literal["file", "uncompressed", "none"] = "none"
    unavailable: str = ""  # the message when `read` cannot be imported (a missing extra)

    def reader(self) -> ReadFunction:
        fn: ReadFunction = load_object(self.read)  # type: ignore[assignment]
        return fn


def _check(obj: object) -> ReaderSpec:
    if not isinstance(obj, ReaderSpec):
        raise TypeError(f"a thresher.readers entry point must name a ReaderSpec, not {obj!r}")
    return obj


# Sniffing tries the kinds in this order (then plugins'), magic bytes first, then file names.
READERS: Registry[ReaderSpec] = Registry("input format", "thresher.readers", {}, check=_check)
for _spec in (
    ReaderSpec(
        kind="parquet",
        read="thresher.read.parquet:read_parquet",
        magic=(b"PAR1",),
        suffixes=(".parquet",),
        unavailable="Parquet input needs: pip install 'thresher[parquet]'",
    ),
    ReaderSpec(
        kind="warc",
        read="thresher.read.archive:read_warc",
        magic=(b"WARC/", b"filedesc://"),  # ARC too
        suffixes=(".warc", ".arc", ".wet", ".wat"),
        offsets="file",
        unavailable="WARC/ARC input is not available in this build",
    ),
    ReaderSpec(
        kind="jsonl",
        read="thresher.read.jsonl:read_jsonl",
        magic=(b"{", b"["),
        suffixes=(".jsonl", ".json", ".ndjson"),
        splittable=True,
        offsets="uncompressed",
    ),
    ReaderSpec(  # never sniffed: `thresher replay` names it (a --signals build's table as input)
        kind="signals",
        read="thresher.read.signals:read_signals",
        unavailable="the signals table needs the parquet extra: pip install 'thresher[parquet]'",
    ),
    ReaderSpec(
        kind="html",
        read="thresher.read.files:read_html_files",
        magic=(b"<",),
        suffixes=(".html", ".htm", ".xhtml"),
        batched=True,
    ),
):
    READERS.register(_spec.kind, _spec)


def reader_spec(kind: str) -> ReaderSpec | None:
    return READERS.get(kind) if kind in READERS else None


def specs(plugins: bool = True) -> list[ReaderSpec]:
    """Every reader's spec, in the registry's order; `plugins=False`: those known without looking
    up entry points (`Registry.names_so_far`)."""
    return [READERS.get(kind) for kind in (READERS.names() if plugins else READERS.names_so_far())]
