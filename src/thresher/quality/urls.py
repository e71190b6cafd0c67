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
`www.` is ignored on both sides.
"""

from __future__ import annotations

import io
import os
import re
import tarfile
from dataclasses import dataclass
from urllib.parse import urlsplit

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

    @property
    def configured(self) -> bool:
        return bool(self.blocklists or self.banned_words or self.soft_banned_words or self.banned_subwords)


@dataclass(slots=True)
class UrlLists:
    domains: set[str]
    urls: set[str]


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


def load_url_lists(paths: tuple[str, ...] | list[str]) -> UrlLists:
    """Read block or allow lists from files, UT1 directories and `.tar.gz` archives."""
    lists = UrlLists(set(), set())
    for path in paths:
        if os.path.isdir(path):
            for root, _dirs, files in sorted(os.walk(path)):
                for name in sorted(files):
                    if name in ("domains", "urls"):
                        with open(os.path.join(root, name), encoding="utf-8", errors="replace") as f:
                            _add_lines(f.read(), lists, name)
        elif path.endswith((".tar.gz", ".tgz", ".tar")):
            try:
                with tarfile.open(path) as tar:
                    for member in tar:
                        base = os.path.basename(member.name)
                        if member.isfile() and base in ("domains", "urls"):
                            raw = tar.extractfile(member)
                            if raw is not None:
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


def _host_listed(host: str, domains: set[str]) -> str | None:
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


class UrlFilter:
    """Checks a document's URL against block lists and URL word lists (see the module docstring)."""

    name = STAGE

    def __init__(self, config: UrlFilterConfig, *, block: UrlLists | None = None, allow: UrlLists | None = None):
        self.config = config
        self.block = block if block is not None else load_url_lists(config.blocklists)
        self.allow = allow if allow is not None else load_url_lists(config.allowlists)
        self.banned_words = load_words(config.banned_words)
        self.soft_banned_words = load_words(config.soft_banned_words)
        subwords = sorted(load_words(config.banned_subwords), key=lambda w: (-len(w), w))
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
