"""Where a stage's benchmark n-gram index comes from: built once per process, or compiled once into
a file that every worker of a build maps read-only.

`load_index` caches an index by the benchmark files' paths, sizes and modification times and every
setting that shapes it (two entries at most, to bound memory). Without `compiled_dir` (the library)
it builds the index in the process (`thresher.decontam.index.build_index`); with it (a build sets it
to `<work dir>/lists`) it maps the compiled file.

Built in each worker, the index of GSM8K's 1,319 test items (question and answer) costs every
worker ~8 MiB of its own memory: 12 bytes per n-gram, the 2 MiB prefix bitmap and what reading and
sorting left behind in its heap. A build's driver compiles it instead (`precompile`, before the
scan) into `<folder>/<key>.ngramindex`, and every worker maps that file: the pages are shared
through the page cache, and a worker's own memory for the index is the item list, decoded only when
a document matches.

`key` is a digest of what shapes the index: the benchmark files' sha256 (from the config, checked
against the files when the index is compiled), the reference texts' paths, sizes and dates, every
setting that changes which n-grams are indexed, and this format. The file: a header (magic, format
version, n-gram length, counts and section lengths, a 16-byte BLAKE2b checksum of the key, the
header's fields and the body), the sorted n-gram hashes (`uint64`, little-endian), the first item
of each (`uint32`), padding to 8 bytes, the prefix bitmap, then the items as JSON
(`[[benchmark, id], ...]`). A file whose size, header or checksum does not match is never used: it
is compiled again and replaced. Written and locked as the compiled URL lists are
(`thresher.mapped_file`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import struct
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, overload

from thresher.core.errors import InputError
from thresher.decontam.config import DecontamConfig
from thresher.decontam.index import BITMAP_BITS, ItemRef, NgramIndex, build_index
from thresher.mapped_file import (
    exclusive_lock,
    little_endian,
    map_read_only,
    numbers,
    read_chunks,
    write_atomically,
)

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
MAGIC = b"THRNGIX\x00"
SUFFIX = ".ngramindex"
# magic, version, n-gram length, bitmap bits, hashes, exempt n-grams, item count, items' JSON bytes, checksum
_HEADER = struct.Struct("<8sIIIQQQQ16s")
HEADER_BYTES = 96  # _HEADER padded with zeros: the hashes start 8-byte aligned


def index_key(config: DecontamConfig) -> str:
    """A digest of everything that shapes the index of `config` (module doc)."""
    references = []
    for path in config.common_texts:
        st = os.stat(path)
        references.append([os.path.abspath(path), st.st_size, st.st_mtime_ns])
    shape = [FORMAT_VERSION, BITMAP_BITS, list(config.benchmark_sha256), references, list(config.fields), config.ngram,
             config.max_items_per_ngram, config.max_common_docs, config.max_ngrams]
    return hashlib.blake2b(json.dumps(shape).encode(), digest_size=16).hexdigest()


def _checksum(key: str, fields: tuple[Any, ...], body: Iterator[Any]) -> bytes:
    h = hashlib.blake2b(key.encode(), digest_size=16)
    h.update(struct.pack("<IIIQQQQ", *fields))
    for part in body:
        h.update(part)
    return h.digest()


def _padding(size: int) -> bytes:
    return b"\0" * (-size % 8)


def write_index(path: Path, key: str, index: NgramIndex) -> None:
    """Write `index` to `path` atomically (a temporary file renamed into place)."""
    hashes, items_of = little_endian(index.hashes), little_endian(index.items_of)
    items = json.dumps([[ref.benchmark, ref.id] for ref in index.items], ensure_ascii=False).encode("utf-8")
    fields = (FORMAT_VERSION, index.n, BITMAP_BITS, len(index.hashes), index.exempt, len(index.items), len(items))
    body = (hashes, items_of, _padding(len(items_of)), memoryview(index.bitmap).cast("B"), items)
    header = _HEADER.pack(MAGIC, *fields, _checksum(key, fields, iter(body))).ljust(HEADER_BYTES, b"\0")
    write_atomically(path, (header, *body))


class _MappedItems(Sequence[ItemRef]):
    """The index's items, decoded from the file's JSON on first use (only a matching document asks)."""

    def __init__(self, blob: memoryview, count: int) -> None:
        self._blob = blob
        self._count = count
        self._items: list[ItemRef] | None = None

    def _decoded(self) -> list[ItemRef]:
        if self._items is None:
            self._items = [ItemRef(name, item) for name, item in json.loads(bytes(self._blob).decode("utf-8"))]
        return self._items

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, i: int) -> ItemRef: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[ItemRef]: ...

    def __getitem__(self, i: int | slice) -> ItemRef | Sequence[ItemRef]:
        return self._decoded()[i]


def open_index(path: Path, key: str, *, verify: bool = True) -> NgramIndex | None:
    """The index in `path`, mapped; None when the file is missing, truncated or fails its checksum."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(HEADER_BYTES)
            if len(head) < HEADER_BYTES or head[:8] != MAGIC:
                return None
            _magic, *fields, checksum = _HEADER.unpack_from(head)
            version, n, bitmap_bits, count, exempt, n_items, items_bytes = fields
            items_of_bytes = 4 * count
            bitmap_bytes = 1 << (bitmap_bits - 3)
            body = 8 * count + items_of_bytes + len(_padding(items_of_bytes)) + bitmap_bytes + items_bytes
            if version != FORMAT_VERSION or bitmap_bits != BITMAP_BITS or size != HEADER_BYTES + body:
                return None
            if verify and _checksum(key, tuple(fields), read_chunks(f, body)) != checksum:
                return None
            view = map_read_only(f)
    except (OSError, struct.error, ValueError):
        return None
    if view is None:
        return None
    at = HEADER_BYTES
    hashes = numbers(view[at:at + 8 * count], "Q")
    at += 8 * count
    items_of = numbers(view[at:at + items_of_bytes], "I")
    at += items_of_bytes + len(_padding(items_of_bytes))
    bitmap = view[at:at + bitmap_bytes]
    at += bitmap_bytes
    return NgramIndex(hashes, items_of, _MappedItems(view[at:at + items_bytes], n_items), n, exempt, bitmap=bitmap)


def shared_index(config: DecontamConfig, folder: str | Path) -> NgramIndex:
    """The index of `config` mapped from its compiled file in `folder`, compiled there first when
    missing or damaged; built in memory where the folder cannot be written (logged; same index)."""
    key = index_key(config)
    target = Path(folder)
    path = target / f"{key}{SUFFIX}"
    found = open_index(path, key)
    if found is not None:
        return found
    try:
        target.mkdir(parents=True, exist_ok=True)
        with exclusive_lock(target / f"{key}.lock"):
            found = open_index(path, key)  # another process may have compiled it while this one waited
            if found is not None:
                return found
            index = build_index(config)
            write_index(path, key, index)
    except OSError as exc:
        log.warning("cannot compile the benchmark index into %s (%s): each process builds it itself", target, exc)
        return build_index(config)
    log.info("compiled the benchmark n-gram index into %s", path)
    mapped = open_index(path, key, verify=False)  # just written and checked by this process
    return mapped if mapped is not None else index


_cache: OrderedDict[Any, NgramIndex] = OrderedDict()
CACHE_ENTRIES = 2


def _file_identity(path: str) -> tuple[str, int, int]:
    try:
        st = os.stat(path)
    except OSError as exc:
        raise InputError(f"benchmark file {path}: {exc.strerror or exc}") from None
    return (os.path.abspath(path), st.st_size, st.st_mtime_ns)


def load_index(config: DecontamConfig) -> NgramIndex:
    """The index of `config`, built once per process (module doc)."""
    key = (
        tuple(_file_identity(p) for p in config.benchmarks),
        tuple(_file_identity(p) for p in config.common_texts),
        config.fields, config.ngram, config.max_items_per_ngram, config.max_common_docs, config.max_ngrams,
        config.benchmark_sha256, config.compiled_dir,
    )
    index = _cache.get(key)
    if index is not None:
        _cache.move_to_end(key)
        return index
    if config.compiled_dir is not None:
        index = _cache[key] = shared_index(config, config.compiled_dir)
    else:
        index = _cache[key] = build_index(config)
    while len(_cache) > CACHE_ENTRIES:
        _cache.popitem(last=False)
    return index
