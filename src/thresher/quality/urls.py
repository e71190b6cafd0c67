"""URL filter: domain and URL block lists, banned words and subwords in the URL, an allow-list.

Drops a document whose URL's host or one of its parent domains is block-listed (`blocked_domain`),
whose URL starts with a block-listed URL prefix (`blocked_url`), whose URL contains a banned word
(`banned_url_word`), more soft-banned words than allowed (`soft_banned_url_words`) or a banned
subword anywhere in its letters and digits (`banned_url_subword`), and, when asked, one whose URL
has no host (`malformed_url`). A URL whose host or prefix is on the allow-list passes untouched.
Documents without a URL are not judged.

Lists are read from paths the user configures (thresher ships none and downloads none), in UT1
format: a file of domains, or of URLs without scheme (`host/path`), one per line, `#` comments; a
UT1 category directory (its `domains` and `urls` files, subdirectories included); or a `.tar.gz`
holding such `domains`/`urls` files (the FineWeb list). A line with a `/` is a URL, else a domain.
Word lists (FineWeb format) are files of one word or phrase per line, compared on letters and
digits only, lowercased.

Domains are kept in a set and a host is looked up by walking its suffixes
(`a.b.example.com`, `b.example.com`, `example.com`), so a blocked domain blocks its subdomains;
`www.` is ignored on both sides. A large domain file (the FineWeb list has 4.6 M domains) is read
line by line into `DomainDigests`, a sorted array of 64-bit BLAKE2b digests: 8 bytes per domain
instead of ~150 in a set of strings (~36 MB instead of ~700 MB per worker process). A false match
needs a 64-bit digest collision (about 1 in 4 × 10¹² lookups against 4.6 M domains) and is the same
in every run.

A list whose files total 1 MiB or more is compiled once into a file of sorted digests that every
process maps read-only (`thresher.quality.list_store`): a build compiles it before the scan (the
FineWeb list: ~2 CPU s with the compiled kernel `_domainlist`, ~6 in pure Python), and each worker
then maps it for a checksum pass and ~3 MiB of its own (the URL prefixes). Each process keeps what it
loaded (`cached_load`), keyed by every list file's path, size and modification time: a changed file
is read again, an unchanged one is shared by every scan task the process runs.
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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import IO, Any, TypeVar
from urllib.parse import urlsplit

from thresher.compiled import compiled_module
from thresher.core.config import setting
from thresher.core.document import Document, Drop
from thresher.core.errors import ConfigError

STAGE = "quality.urls"
_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_OTHER_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+-]*:(?!\d)")  # mailto:, javascript:, data:


@dataclass(frozen=True, slots=True, kw_only=True)
class UrlFilterConfig:
    blocklists: tuple[str, ...] = setting((), "block lists: files, UT1 directories or .tar.gz archives")
    allowlists: tuple[str, ...] = setting((), "allow lists in the same formats; they win over block lists")
    banned_words: str | None = setting(None, "file of words that block a URL containing one")
    soft_banned_words: str | None = setting(None, "file of words of which a URL may contain a few")
    banned_subwords: str | None = setting(None, "file of strings that block a URL whose letters contain one")
    max_soft_banned_words: int | None = setting(1, "most soft-banned words a URL may contain")
    drop_malformed: bool = setting(True, "drop documents whose URL has no host")
    compiled_dir: str | None = setting(
        None, "folder of compiled large lists, shared by every worker (default: the build's work dir/lists, "
        "else ~/.cache/thresher/lists)", hashed=False)

    @property
    def configured(self) -> bool:
        return bool(self.blocklists or self.banned_words or self.soft_banned_words or self.banned_subwords)


class DomainDigests:
    """A large domain list as a sorted array of 64-bit digests (see the module docstring)."""

    def __init__(self, digests: Iterable[int] = ()) -> None:
        self.digests: Sequence[int] = sort_unique(array("Q", digests))

    @classmethod
    def from_sorted(cls, digests: Sequence[int]) -> DomainDigests:
        """Over digests already sorted and distinct (an array, or a mapped file's memoryview)."""
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
        i = bisect.bisect_left(self.digests, d)
        return i < len(self.digests) and self.digests[i] == d

    def __len__(self) -> int:
        return len(self.digests)

    def update(self, other: Iterable[str]) -> None:
        merged = array("Q", self.digests)
        merged.extend(self.digest(n) for n in other)
        self.digests = sort_unique(merged)


_KERNEL: Any = compiled_module("thresher.quality._domainlist")


def sort_unique(values: array) -> array:
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
    urls: set[str]


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
        lists.domains = domains  # type: ignore[assignment]
    lists.urls.update(urls)


def load_url_lists(paths: tuple[str, ...] | list[str]) -> UrlLists:
    """Read block or allow lists from files, UT1 directories and `.tar.gz` archives."""
    lists = UrlLists(set(), set())
    for path in paths:
        if os.path.isdir(path):
            for root, _dirs, files in sorted(os.walk(path)):
                for name in sorted(files):
                    if name in ("domains", "urls"):
                        file_path = os.path.join(root, name)
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


def split_url(url: str) -> tuple[str, str] | None:
    """(host, `host/path` without scheme, `www.`, port and query), or None when there is no host."""
    url = url.strip()
    if "://" not in url and _OTHER_SCHEME.match(url):
        return None
    try:
        parts = urlsplit(url if "://" in url else "//" + url)
        host = (parts.hostname or "").rstrip(".")
    except ValueError:
        return None
    if not host or " " in host:
        return None
    if host.startswith("www."):
        host = host[4:]
    return host, host + parts.path.rstrip("/")


def _host_listed(host: str, domains: set[str] | DomainDigests) -> str | None:
    if not domains:
        return None
    name = host
    while True:
        if name in domains:
            return name
        dot = name.find(".")
        if dot < 0:
            return None
        name = name[dot + 1:]


def _prefix_listed(location: str, urls: set[str]) -> str | None:
    if not urls:
        return None
    if location in urls:
        return location
    end = location.rfind("/")
    while end > 0:
        if location[:end] in urls:
            return location[:end]
        end = location.rfind("/", 0, end)
    return None


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
                for root, _dirs, files in sorted(os.walk(path)):
                    for name in sorted(files):
                        if name in ("domains", "urls"):
                            full = os.path.join(root, name)
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


def _lists(paths: tuple[str, ...], compiled_dir: str | None = None) -> UrlLists:
    """The lists of `paths`, once per process; a large one mapped from its compiled file
    (`thresher.quality.list_store`), shared by every process."""
    if not paths:
        return UrlLists(set(), set())
    from thresher.quality import list_store

    def load() -> UrlLists:
        if list_store.worth_compiling(paths):
            return list_store.shared_url_lists(paths, compiled_dir)
        return load_url_lists(paths)

    return cached_load("url_lists", tuple(paths), load)


def _words(path: str | None) -> set[str]:
    if path is None:
        return set()
    return cached_load("words", (path,), lambda: load_words(path))


class UrlFilter:
    """Checks a document's URL against block lists and URL word lists (see the module docstring)."""

    name = STAGE

    def __init__(self, config: UrlFilterConfig, *, block: UrlLists | None = None, allow: UrlLists | None = None):
        self.config = config
        self.block = block if block is not None else _lists(config.blocklists, config.compiled_dir)
        self.allow = allow if allow is not None else _lists(config.allowlists, config.compiled_dir)
        self.banned_words = _words(config.banned_words)
        self.soft_banned_words = _words(config.soft_banned_words)
        subwords = sorted(_words(config.banned_subwords), key=lambda w: (-len(w), w))
        self._subwords = re.compile("|".join(map(re.escape, subwords))) if subwords else None

    def check_all(self, doc: Document) -> list[Drop]:
        url = doc.url
        if not url:
            return []
        parsed = split_url(url)
        if parsed is None:
            if self.config.drop_malformed:
                return [Drop(self.name, "malformed_url", value=url[:200], limit=None)]
            return []
        host, location = parsed
        if _host_listed(host, self.allow.domains) or _prefix_listed(location, self.allow.urls):
            doc.annotations["quality.url_allowed"] = True
            return []
        drops: list[Drop] = []
        domain = _host_listed(host, self.block.domains)
        if domain is not None:
            drops.append(Drop(self.name, "blocked_domain", value=host, limit=domain))
        prefix = _prefix_listed(location, self.block.urls)
        if prefix is not None:
            drops.append(Drop(self.name, "blocked_url", value=location, limit=prefix))
        if self.banned_words or self.soft_banned_words:
            words = set(_NON_ALNUM.split(url.lower()))
            banned = sorted(words & self.banned_words)
            if banned:
                drops.append(Drop(self.name, "banned_url_word", value=len(banned), limit=0, detail={"words": banned}))
            limit = self.config.max_soft_banned_words
            soft = sorted(words & self.soft_banned_words)
            if limit is not None and len(soft) > limit:
                drops.append(Drop(self.name, "soft_banned_url_words", value=len(soft), limit=limit,
                                  detail={"words": soft}))
        if self._subwords is not None:
            match = self._subwords.search(_NON_ALNUM.sub("", url.lower()))
            if match is not None:
                drops.append(Drop(self.name, "banned_url_subword", value=1, limit=0, detail={"subword": match.group()}))
        return drops

    def check(self, doc: Document) -> Drop | None:
        drops = self.check_all(doc)
        return drops[0] if drops else None
