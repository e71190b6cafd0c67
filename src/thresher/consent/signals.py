"""The consent signals a page carries itself: in its HTML `<meta>` tags and its HTTP response headers.

- `noai` / `noimageai` (the directives DeviantArt introduced in 2022 and others adopted): in
  `<meta name="robots" content="noai, noimageai">`, in a meta tag named for one crawler
  (`<meta name="GPTBot" content="noai">`), and in the `X-Robots-Tag` header, for every crawler or
  scoped to one (`X-Robots-Tag: GPTBot: noai`; a header may list several scopes, and a response may
  repeat the header, which the WARC reader joins with ", ").
- TDMRep (W3C Community Group report "TDM Reservation Protocol", 2024): `tdm-reservation` (1: text
  and data mining rights are reserved, 0: not) and `tdm-policy` (the URL of the licence offer), as
  HTTP headers (section 3.2) or `<meta name=...>` tags (section 3.3).

Other robots directives (`noindex`, `nofollow`, `none`) concern search indexing, not training, and
are not read. Each signal keeps its source: `header` or `meta`, with `:Agent` when scoped to a
crawler of the configured list (scopes naming other crawlers are ignored).

`page_signals` never raises; values it cannot read are reported in `problems` (a `tdm-reservation`
that is neither 0 nor 1). Meta tags are read in the page's head (`meta_tags`: up to `</head`),
found by substring search, and only a tag naming one of the names read is parsed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

DIRECTIVES = ("noai", "noimageai")
# robots directives that carry a value after a colon: in X-Robots-Tag, `name: value` is a directive
# and not a crawler's scope when the name is one of these (Google's documented list)
_VALUED = frozenset({"max-snippet", "max-image-preview", "max-video-preview", "unavailable_after"})
_ATTR = re.compile(r"""([a-zA-Z-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")
_NAME = re.compile(r"""name\s*=\s*["']?\s*([A-Za-z_-]+)""", re.I)  # a tag's name, to skip the others cheaply
_SCOPE = re.compile(r"\s*([A-Za-z_-]+)\s*:(.*)", re.S)
_SPLIT = re.compile(r"[,\s]+")
_MAX_META_TAGS = 2000  # a page with more meta tags is read up to this many (bounded work)
_MAX_TAG_CHARS = 4000  # a `<meta` without its `>` within this many characters is no tag
# meta tags are read in the head: up to the first `</head`, else in this many first characters
# (a page without a closing head tag; 512 Ki characters hold the head of any page we have seen)
_MAX_HEAD_CHARS = 512 * 1024
_HEAD_SCAN = re.compile(r"<(?:(meta)[\s/>]|/head)", re.I)


@dataclass(slots=True)
class PageSignals:
    """What one page says. `noai` and `noimageai` list sources (`meta`, `header`, `meta:GPTBot`);
    `tdm_reservation` maps a source to 0 or 1, `tdm_policy` a source to the policy URL."""

    noai: list[str] = field(default_factory=list)
    noimageai: list[str] = field(default_factory=list)
    tdm_reservation: dict[str, int] = field(default_factory=dict)
    tdm_policy: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.noai or self.noimageai or self.tdm_reservation or self.tdm_policy or self.problems)

    def add_directives(self, text: str, source: str) -> None:
        for word in _SPLIT.split(text.lower()):
            if word in DIRECTIVES:
                found = self.noai if word == "noai" else self.noimageai
                if source not in found:
                    found.append(source)

    def add_tdm(self, name: str, value: str, source: str) -> None:
        value = value.strip()
        if name == "tdm-policy":
            if value:
                self.tdm_policy.setdefault(source, value[:2000])
            return
        if value in ("0", "1"):
            self.tdm_reservation.setdefault(source, int(value))
        else:
            self.problems.append(f"tdm-reservation {source}: {value[:80]!r} is neither 0 nor 1 (ignored)")


class SignalReader:
    """Reads `PageSignals` for a fixed list of crawlers (product tokens such as `GPTBot`)."""

    def __init__(self, agents: Sequence[str]) -> None:
        self.agents = {agent.lower(): agent for agent in agents}
        self.meta_name_set = frozenset(("robots", "tdm-reservation", "tdm-policy", *self.agents))

    def read(self, html: str | None, headers: Mapping[str, str] | None) -> PageSignals:
        signals = PageSignals()
        if headers:
            self._headers(headers, signals)
        if html:
            self._meta(html, signals)
        return signals

    def _headers(self, headers: Mapping[str, str], signals: PageSignals) -> None:
        robots = headers.get("x-robots-tag")
        if robots:
            self._robots_header(robots, signals)
        for name in ("tdm-reservation", "tdm-policy"):
            value = headers.get(name)
            if value is not None:
                signals.add_tdm(name, value, "header")

    def _robots_header(self, value: str, signals: PageSignals) -> None:
        """`X-Robots-Tag`: comma-separated directives; `agent: directive` scopes that directive and
        those after it to the agent, until the next scope."""
        scope: str | None = None
        for item in value.split(","):
            match = _SCOPE.match(item)
            if match is not None and match.group(1).lower() not in _VALUED:
                scope = match.group(1).lower()
                item = match.group(2)
            if scope is None:
                signals.add_directives(item, "header")
            elif scope in self.agents:
                signals.add_directives(item, "header:" + self.agents[scope])

    def _meta(self, html: str, signals: PageSignals) -> None:
        names = self.meta_name_set
        for tag in meta_tags(html):
            named = _NAME.search(tag)  # the first `name=` (a tag that hides one in another value is missed)
            if named is None or named.group(1).lower() not in names:
                continue
            attrs = {m.group(1).lower(): m.group(2) if m.group(2) is not None else
                     m.group(3) if m.group(3) is not None else m.group(4) for m in _ATTR.finditer(tag)}
            name = (attrs.get("name") or "").strip().lower()
            content = attrs.get("content")
            if not name or content is None:
                continue
            if name == "robots":
                signals.add_directives(content, "meta")
            elif name in ("tdm-reservation", "tdm-policy"):
                signals.add_tdm(name, content, "meta")
            elif name in self.agents:
                signals.add_directives(content, "meta:" + self.agents[name])


def meta_tags(html: str) -> list[str]:
    """The `<meta ...>` tags of a page's head in page order (at most `_MAX_META_TAGS`, each at most
    `_MAX_TAG_CHARS`): one regex pass that stops at the first `</head` (else after `_MAX_HEAD_CHARS`);
    the page is never lower-cased or scanned past its head."""
    found: list[str] = []
    for match in _HEAD_SCAN.finditer(html, 0, _MAX_HEAD_CHARS):
        if match.group(1) is None:
            break  # </head
        start = match.start()
        end = html.find(">", start, start + _MAX_TAG_CHARS)
        if end >= 0:
            found.append(html[start:end + 1])
            if len(found) >= _MAX_META_TAGS:
                break
    return found
