"""A robots.txt parser with the semantics of RFC 9309 (the Robots Exclusion Protocol), stdlib only.

What it implements, by section of the RFC:

- 2.1 / 2.2.1: a *group* is one or more `user-agent` lines followed by rules; a `user-agent` line
  after a rule starts a new group; rules before the first `user-agent` line belong to no group.
  Other lines (`sitemap`, `crawl-delay`, unknown keys, HTML served as robots.txt) are ignored and
  neither start nor end a group. Keys are case-insensitive; a few common misspellings are accepted
  (2.2.4 lets a crawler be lenient), listed in `_KEYS`.
- 2.2.1: the product token of a `user-agent` line is its leading run of letters, `-` and `_`
  (`GPTBot/1.0` is `gptbot`), matched case-insensitively and exactly against the crawler's token.
  Every group naming the crawler is combined into one; with none, the `*` groups are; with none of
  those either, everything is allowed.
- 2.2.2: the most specific rule wins: the matching rule with the most octets; `allow` wins a tie.
  An empty `allow` or `disallow` value is no rule. `/robots.txt` is always allowed (2.2.2).
  Paths and patterns are compared percent-normalised (`normalise_path`).
- 2.2.3: `*` matches any sequence of characters and `$` at the end of a pattern anchors it at the
  end of the path; elsewhere `$` is an ordinary character.
- 2.5: only the first `MAX_BYTES` (500 KiB) are parsed; a line cut by the limit is dropped.
- 2.3.1: what a fetch's status means (`status_verdict`): 2xx parse, 4xx allow all, 5xx (and 429,
  as the fetcher treats it) or unreachable disallow all.

Robustness: `parse` never raises and runs in time linear in its (capped) input; matching one path
against a pattern is a greedy left-to-right scan (`match_pattern`), linear in the path per pattern piece.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

MAX_BYTES = 500 * 1024  # RFC 9309 2.5: a parsing limit of at least 500 kibibytes

# Keys by what they mean; the misspellings are ones seen in the wild (2.2.4: crawlers MAY be lenient).
_KEYS = {
    "user-agent": "user-agent", "useragent": "user-agent", "user agent": "user-agent",
    "allow": "allow",
    "disallow": "disallow", "dissallow": "disallow", "dissalow": "disallow", "disalow": "disallow",
    "diasllow": "disallow", "disallaw": "disallow",
}
_TOKEN = re.compile(r"[A-Za-z_-]*")
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_HEX = frozenset(b"0123456789abcdefABCDEF")
# bytes kept as they are when a path is normalised: RFC 3986's unreserved and reserved characters
# (`*` and `$` among them); anything else (`<`, `"`, `{`, spaces, controls, non-ASCII) is percent-encoded,
# as a browser sends it
_PLAIN = _UNRESERVED | frozenset(b":/?#[]@!$&'()*+,;=")

_CLEAN = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]*")

Status = Literal["parse", "allow_all", "disallow_all"]


def product_token(value: str) -> str:
    """The product token a user-agent value names, lower-cased: its leading run of letters, `-` and
    `_` (RFC 9309 2.2.1), so `GPTBot/1.0` is `gptbot` (empty when it starts with anything else)."""
    found = _TOKEN.match(value)
    return found.group().lower() if found else ""


def status_verdict(status: int | None) -> Status:
    """What a robots.txt fetch that ended with HTTP `status` (None: unreachable) means (RFC 9309
    2.3.1): 2xx parse the body; 4xx "unavailable", allow all; 5xx, 429 and unreachable disallow
    all. A 3xx that was not followed to its end counts as unavailable (2.3.1.2 lets a crawler give
    up after five redirects and treat the file as unavailable)."""
    if status is None:
        return "disallow_all"
    if 200 <= status < 300:
        return "parse"
    if status == 429 or status >= 500:
        return "disallow_all"
    return "allow_all"


def normalise_path(path: str) -> str:
    """A path (with its query) or pattern in the form both sides are compared in (RFC 9309 2.2.2):
    percent-encoded unreserved characters decoded (`%62` is `b`), other percent escapes upper-cased,
    and characters that may not appear in a URI as they are (non-ASCII as UTF-8, spaces, controls,
    `<`, `"`, `{`...) percent-encoded, as a browser sends them.
    A `%` not followed by two hex digits is kept as `%25`."""
    if _CLEAN.fullmatch(path):
        return path
    data = path.encode("utf-8", "surrogatepass")
    out: list[str] = []
    i, n = 0, len(data)
    while i < n:
        b = data[i]
        if b == 0x25:
            if i + 2 < n and data[i + 1] in _HEX and data[i + 2] in _HEX:
                value = int(data[i + 1:i + 3], 16)
                out.append(chr(value) if value in _UNRESERVED else "%" + data[i + 1:i + 3].decode().upper())
                i += 3
                continue
            out.append("%25")
        elif b in _PLAIN:
            out.append(chr(b))
        else:
            out.append(f"%{b:02X}")
        i += 1
    return "".join(out)


def match_pattern(pattern: str, path: str) -> bool:
    """Whether `pattern` (normalised; `*` any run, a final `$` the end) matches `path` from its start.

    Greedy: each piece between `*`s is found at its leftmost place after the previous one, which
    is correct for patterns whose only operator is `*`; the last piece of an anchored pattern must
    end the path."""
    anchored = pattern.endswith("$")
    if anchored:
        pattern = pattern[:-1]
    if "*" not in pattern:
        return path == pattern if anchored else path.startswith(pattern)
    pieces = pattern.split("*")
    first, last = pieces[0], pieces[-1]
    if not path.startswith(first):
        return False
    pos = len(first)
    for piece in pieces[1:-1]:
        if not piece:
            continue
        found = path.find(piece, pos)
        if found < 0:
            return False
        pos = found + len(piece)
    if anchored:
        return len(path) - len(last) >= pos and path.endswith(last)
    return not last or path.find(last, pos) >= 0


@dataclass(frozen=True, slots=True)
class Rule:
    allow: bool
    pattern: str  # normalised
    line: int  # 1-based line number in the file
    text: str  # the line as written (stripped of its comment), for attribution

    @property
    def specificity(self) -> int:
        return len(self.pattern)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The answer for one agent and path: allowed or not, and the rule that decided (None: no rule
    matched, or the file's status decided)."""

    allowed: bool
    rule: Rule | None = None


ALLOW = Verdict(True)
DISALLOW = Verdict(False)


class RobotsTxt:
    """A parsed robots.txt. `RobotsTxt.parse(body)` never raises; `verdict(agent, path)` answers."""

    __slots__ = ("groups", "wildcard", "truncated", "lines", "_combined")

    def __init__(self, groups: dict[str, list[Rule]], wildcard: list[Rule] | None, truncated: bool,
                 lines: int) -> None:
        self.groups = groups  # product token (lower case) -> the rules of every group naming it
        self.wildcard = wildcard  # the rules of every `*` group (None: no `*` group)
        self.truncated = truncated  # the body was longer than MAX_BYTES
        self.lines = lines  # lines read

    @classmethod
    def parse(cls, body: bytes | str) -> RobotsTxt:
        """Parse a robots.txt body (bytes are decoded as UTF-8, undecodable bytes replaced)."""
        truncated = False
        if isinstance(body, str):
            body = body.encode("utf-8", "surrogatepass")
        if len(body) > MAX_BYTES:
            truncated = True
            body = body[:MAX_BYTES]
            cut = max(body.rfind(b"\n"), body.rfind(b"\r"))
            body = body[:cut + 1] if cut >= 0 else b""
        text = body.decode("utf-8", "replace")
        if text.startswith("\ufeff"):
            text = text[1:]
        groups: dict[str, list[Rule]] = {}
        wildcard: list[Rule] | None = None
        current: list[str] = []  # the agents of the group being read
        in_rules = False  # a rule was read since the last user-agent line
        lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        for number, raw in enumerate(lines, 1):
            line = raw.split("#", 1)[0].strip()
            key, sep, value = line.partition(":")
            if not sep:
                continue
            kind = _KEYS.get(" ".join(key.lower().split()))
            if kind is None:
                continue
            value = value.strip()
            if kind == "user-agent":
                if in_rules:
                    current, in_rules = [], False
                token = "*" if value == "*" or value[:2].rstrip() == "*" else product_token(value)
                if token and token not in current:
                    current.append(token)
                    if token == "*":
                        wildcard = wildcard if wildcard is not None else []
                    else:
                        groups.setdefault(token, [])
                continue
            in_rules = True
            if not current or not value:
                continue  # a rule outside any group, or an empty one (no rule, 2.2.2)
            rule = Rule(kind == "allow", normalise_path(value), number, line)
            for token in current:
                if token == "*":
                    assert wildcard is not None
                    wildcard.append(rule)
                else:
                    groups[token].append(rule)
        return cls(groups, wildcard, truncated, len(lines))

    def rules_for(self, agent: str) -> list[Rule] | None:
        """The combined rules that apply to `agent` (a product token such as `GPTBot`), or None when
        no group applies (everything allowed)."""
        rules = self.groups.get(product_token(agent))
        return rules if rules is not None else self.wildcard

    def named(self, agent: str) -> bool:
        """Whether a group names `agent` itself (not only through `*`)."""
        return product_token(agent) in self.groups

    def verdict(self, agent: str, path: str) -> Verdict:
        """Whether `agent` may fetch `path` (the URL's path and query, e.g. `/a/b?c=d`)."""
        rules = self.rules_for(agent)
        if not rules:
            return ALLOW
        path = normalise_path(path or "/")
        if path == "/robots.txt":
            return ALLOW
        best: Rule | None = None
        for rule in rules:
            if best is not None and (rule.specificity < best.specificity
                                     or (rule.specificity == best.specificity and not rule.allow)):
                continue
            if match_pattern(rule.pattern, path):
                best = rule
        if best is None:
            return ALLOW
        return Verdict(best.allow, best)

    def allowed(self, agent: str, path: str) -> bool:
        return self.verdict(agent, path).allowed
