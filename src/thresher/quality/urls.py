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

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from thresher.core.config import setting
from thresher.core.document import Document, Drop
from thresher.quality.url_lists import (  # noqa: F401 - the list types and loaders, importable from here as before
    DIGEST_FILE_BYTES,
    DomainDigests,
    UrlLists,
    cached_load,
    list_files_signature,
    load_url_lists,
    load_words,
    sort_unique,
)

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


def _prefix_listed(location: str, urls: set[str] | DomainDigests) -> str | None:
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


def _lists(paths: tuple[str, ...], compiled_dir: str | None = None) -> UrlLists:
    """The lists of `paths`, once per process; a large one read from its compiled file
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
