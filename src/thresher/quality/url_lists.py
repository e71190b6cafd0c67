"""Reading URL and word lists (UT1 format, the FineWeb tarball) into what the URL filter looks up:
sets of domains and URL prefixes, and for a large domain file `DomainDigests`, a sorted array of
64-bit BLAKE2b digests (see `thresher.quality.urls` for the formats and the lookup). Each process
keeps what it loaded (`cached_load`). The URL filter (`urls.py`) and the compiled list store
(`list_store.py`) both build on this module, which imports neither.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import io
import os
import re
import sys
import tarfile
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any, TypeVar

from thresher.compiled import compiled_module
from thresher.core.errors import ConfigError
from thresher.mapped_file import PagedDigests

_NON_ALNUM = re.compile(r"[^a-z0-9]+")

class DomainDigests:
    """A large list of names (domains, or the URL prefixes of a compiled list) as a sorted array of
    64-bit digests (see the module docstring)."""

    def __init__(self, digests: Iterable[int] = ()) -> None:
        self.digests: Sequence[int] | PagedDigests = sort_unique(array("Q", digests))

    @classmethod
    def from_sorted(cls, digests: Sequence[int] | PagedDigests) -> DomainDigests:
        """Over digests already sorted and distinct (an array, or a compiled file's section)."""
        made = cls.__new__(cls)
        made.digests = digests
        return made

    @staticmethod
    def digest(name: str) -> int:
        return int.from_bytes(hashlib.blake2b(name.encode("utf-8", "replace"), digest_size=8).digest(), "big")

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        d = self.digest(name)
        if isinstance(self.digests, PagedDigests):  # a compiled file's, read a block per lookup
            return d in self.digests
        i = bisect.bisect_left(self.digests, d)
        return i < len(self.digests) and self.digests[i] == d

    def __len__(self) -> int:
        return len(self.digests)

    def update(self, other: Iterable[str]) -> None:
        added = array("Q", map(self.digest, other))
        if not added:
            return  # the common case (a list with no small `domains` file beside its big one): no copy
        # extended in place where the digests are this object's own array: a copy of the FineWeb
        # list's 36 MB for a few names was half of its compile's peak
        merged = self.digests if isinstance(self.digests, array) else array("Q", self.digests)
        merged.extend(added)
        self.digests = sort_unique(merged)


_KERNEL: Any = compiled_module("thresher.quality._domainlist")


def sort_unique(values: array[int]) -> array[int]:
    """`values` sorted and distinct, in place (the compiled kernel) or through 256 buckets by the top
    byte (the Python reference: no list of all the values, whose ints would cost ~36 bytes each)."""
    if _KERNEL is not None:
        del values[_KERNEL.sort_unique(values):]
        return values
    buckets = [array("Q") for _ in range(256)]
    appends = [b.append for b in buckets]
    for v in values:
        appends[v >> 56](v)
    del values[:]
    for i, bucket in enumerate(buckets):
        values.extend(sorted(set(bucket)))
        buckets[i] = array("Q")
    return values


@dataclass(slots=True)
class UrlLists:
    domains: set[str] | DomainDigests
    urls: set[str] | DomainDigests  # URL prefixes (`host/path`); digests when read from a compiled file


# a domain file larger than this is streamed into digests instead of a set of strings
DIGEST_FILE_BYTES = 8 * 1024 * 1024
_STREAM_CHUNK = 1 << 20


def _normalize_domain(line: str) -> str:
    entry = line.strip().lower()
    if entry.startswith("www."):
        entry = entry[4:]
    return entry.rstrip(".")


_blake2b_64 = functools.partial(hashlib.blake2b, digest_size=8)
_DIGEST_BYTES = hashlib.blake2b().__class__.digest
_UNUSUAL_BYTES = re.compile(rb"[^\x21-\x7e\n]")  # anything but printable ASCII without spaces, and newlines


def _chunk_digests(chunk: bytes) -> bytes:
    """The big-endian digests of a chunk of whole lines of a `domains` file, concatenated."""
    if chunk.isascii() and not _UNUSUAL_BYTES.search(chunk):
        # printable ASCII, no spaces: bytes operations give what the str ones below give, at C speed
        lines = chunk.lower().split(b"\n")
        if b"#" in chunk or b"www." in chunk or b".\n" in chunk or chunk.endswith(b"."):
            lines = [(ln[4:] if ln.startswith(b"www.") else ln).rstrip(b".") for ln in lines if not ln.startswith(b"#")]
        return b"".join(map(_DIGEST_BYTES, map(_blake2b_64, filter(None, lines))))
    text = chunk.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")  # as a text file reads
    entries = (_normalize_domain(ln) for ln in text.split("\n") if not ln.lstrip().startswith("#"))
    return b"".join(map(_DIGEST_BYTES, map(_blake2b_64, (e.encode("utf-8", "replace") for e in entries if e))))


def _add_domain_stream(raw: IO[bytes], lists: UrlLists) -> None:
    """Stream a big `domains` file into digests without holding its strings, a chunk of whole lines
    at a time (the compiled kernel where it is built; each chunk's result is the same either way)."""
    found = array("Q")
    rest = b""
    while True:
        block = raw.read(_STREAM_CHUNK)
        if block:
            cut = block.rfind(b"\n")
            if cut < 0:
                rest += block
                continue
            chunk, rest = rest + block[:cut + 1], block[cut + 1:]
        else:
            chunk, rest = rest, b""
        if chunk:
            packed = _KERNEL.digest_lines(chunk) if _KERNEL is not None else None
            if packed is not None:
                found.frombytes(packed)
            else:
                values = array("Q", _chunk_digests(chunk))
                if sys.byteorder == "little":
                    values.byteswap()
                found.extend(values)
        if not block:
            break
    if isinstance(lists.domains, DomainDigests):
        found.extend(lists.domains.digests)
        lists.domains.digests = sort_unique(found)
    else:
        small = lists.domains
        lists.domains = DomainDigests.from_sorted(sort_unique(found))
        lists.domains.update(small)


def _add_lines(text: str, lists: UrlLists, kind: str | None) -> None:
    """Add one list file's entries. Done in bulk (C-level `split` and `set.update`): the FineWeb list
    has 4.6 M domains, and a Python loop per line would take seconds longer."""
    text = text.lower()
    if "#" in text:
        text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    entries = set(text.split())
    if kind == "domains":
        domains, urls = entries, set()
    elif kind == "urls":
        domains, urls = set(), entries
    else:
        urls = {e for e in entries if "/" in e}
        domains = entries - urls if urls else entries
    # entries are one per line; C-speed substring tests tell whether any needs normalising
    if domains and ("\nwww." in text or text.startswith("www.") or ".\n" in text or text.rstrip().endswith(".")):
        fixed = {e for e in domains if e.startswith("www.") or e.endswith(".")}
        domains -= fixed
        domains.update((e[4:] if e.startswith("www.") else e).rstrip(".") for e in fixed)
    domains.discard("")
    if urls:
        urls = {(u[4:] if u.startswith("www.") else u).rstrip("/") for u in urls}
    if lists.domains:
        lists.domains.update(domains)
    else:
        lists.domains = domains
    lists.urls.update(urls)


def ut1_files(directory: str) -> Iterator[tuple[str, str]]:
    """(`domains` or `urls`, its path) for every list file of a UT1 category directory, its
    subdirectories included, in the one order every reader of the lists uses."""
    for root, _dirs, files in sorted(os.walk(directory)):
        for name in sorted(files):
            if name in ("domains", "urls"):
                yield name, os.path.join(root, name)


def load_url_lists(paths: tuple[str, ...] | list[str]) -> UrlLists:
    """Read block or allow lists from files, UT1 directories and `.tar.gz` archives."""
    lists = UrlLists(set(), set())
    for path in paths:
        if os.path.isdir(path):
            for name, file_path in ut1_files(path):
                if name == "domains" and os.path.getsize(file_path) > DIGEST_FILE_BYTES:
                    with open(file_path, "rb") as raw_file:
                        _add_domain_stream(raw_file, lists)
                else:
                    with open(file_path, encoding="utf-8", errors="replace") as f:
                        _add_lines(f.read(), lists, name)
        elif path.endswith((".tar.gz", ".tgz", ".tar")):
            try:
                with tarfile.open(path) as tar:
                    for member in tar:
                        base = os.path.basename(member.name)
                        if member.isfile() and base in ("domains", "urls"):
                            raw = tar.extractfile(member)
                            if raw is None:
                                continue
                            if base == "domains" and member.size > DIGEST_FILE_BYTES:
                                _add_domain_stream(raw, lists)
                            else:
                                _add_lines(io.TextIOWrapper(raw, "utf-8", "replace").read(), lists, base)
            except (OSError, tarfile.TarError) as exc:
                raise ConfigError(f"cannot read URL list archive {path}: {exc}") from exc
        else:
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    _add_lines(f.read(), lists, None)
            except OSError as exc:
                raise ConfigError(f"cannot read URL list {path}: {exc}") from exc
    return lists


def load_words(path: str | None) -> set[str]:
    """A FineWeb-style word list: one entry per line, reduced to lowercase letters and digits."""
    if path is None:
        return set()
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return {w for w in (_NON_ALNUM.sub("", line.lower()) for line in f if not line.startswith("#")) if w}
    except OSError as exc:
        raise ConfigError(f"cannot read URL word list {path}: {exc}") from exc


# Loaded lists kept per process: a few entries (block, allow, three word lists of one config), each
# immutable once loaded (the filter only reads them).
_LOADED_MAX_ENTRIES = 8
_loaded: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
_T = TypeVar("_T")


def list_files_signature(paths: Iterable[str]) -> tuple[tuple[str, int, int], ...] | None:
    """(path, size, mtime in ns) of every file the lists would be read from, in read order; None
    when one cannot be stat'ed (the load then reports it)."""
    signature: list[tuple[str, int, int]] = []
    try:
        for path in paths:
            if os.path.isdir(path):
                for _name, full in ut1_files(path):
                    st = os.stat(full)
                    signature.append((os.path.abspath(full), st.st_size, st.st_mtime_ns))
            else:
                st = os.stat(path)
                signature.append((os.path.abspath(path), st.st_size, st.st_mtime_ns))
    except OSError:
        return None
    return tuple(signature)


def cached_load(kind: str, paths: tuple[str, ...], load: Callable[[], _T]) -> _T:
    """`load()`, or what it returned before in this process for the same unchanged files."""
    signature = list_files_signature(paths)
    if signature is None:
        return load()
    key = (kind, tuple(paths), signature)
    if key in _loaded:
        _loaded.move_to_end(key)
        return _loaded[key]  # type: ignore[no-any-return]
    value = load()
    _loaded[key] = value
    while len(_loaded) > _LOADED_MAX_ENTRIES:
        _loaded.popitem(last=False)
    return value


