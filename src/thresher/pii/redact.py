"""The PII transform: replaces detected personal data in `doc.text` and counts what it replaced.

Acts on the fields named in `pii.fields` (default the text; the title only when listed; `url` in its
percent-decoded form too; `metadata`: every string value, nested ones included). Writes
`pii.<type>` annotations (matches replaced over those fields, 0 included, for every enabled type, so
output records share one schema) and counts `event/pii.<type>` and `event/pii.documents` (documents
with at least one replacement) in the run's stats. Never drops a document.

Replacement is a typed token (`<EMAIL>`, `<IP>`, `<PHONE>`, `<CARD>`, `<IBAN>`; an obfuscated
address becomes `<EMAIL>` too) or, with `replacement = "hash"`, the token with a salted digest of
the canonical value (`<EMAIL:1a2b3c4d5e6f>`): the same address gives the same token everywhere in a
build, so co-reference survives while the value does not. 48 bits of BLAKE2b keyed by the salt;
deterministic, so shards stay byte-identical across engines and resumes.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from typing import Any

from thresher.core.document import Document, Drop
from thresher.core.stats import Stats
from thresher.pii.config import PiiConfig
from thresher.pii.detection import Match, detect

TOKENS = {"email": "EMAIL", "obfuscated_email": "EMAIL", "ip": "IP", "phone": "PHONE", "card": "CARD", "iban": "IBAN"}


class AllowList:
    """Values never redacted: e-mail domains (and their subdomains), exact addresses, IP addresses
    and networks. Other entries are compared with a match's canonical key."""

    def __init__(self, entries: tuple[str, ...]) -> None:
        self.domains: set[str] = set()
        self.exact: set[str] = set()
        self.networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for entry in entries:
            value = entry.strip().lower()
            if not value:
                continue
            try:
                self.networks.append(ipaddress.ip_network(value, strict=False))
                continue
            except ValueError:
                pass
            if "@" in value:
                self.exact.add(value)
            elif "." in value:
                self.domains.add(value.lstrip("*."))
            else:
                self.exact.add(value)

    def allows(self, match: Match) -> bool:
        key = match.key
        if key in self.exact:
            return True
        if match.type in ("email", "obfuscated_email"):
            host = key.rpartition("@")[2]
            while host:
                if host in self.domains:
                    return True
                host = host.partition(".")[2]
            return False
        if match.type == "ip" and self.networks:
            address = ipaddress.ip_address(key)
            return any(address.version == n.version and address in n for n in self.networks)
        return False


class RedactPii:
    """Replaces personal data of the configured types (module doc)."""

    name = "pii"

    def __init__(self, config: PiiConfig) -> None:
        self.config = config
        self.types = frozenset(config.types)
        self.allow = AllowList(config.allow)
        # any salt length: the BLAKE2b key is a digest of it
        self.key = hashlib.blake2b(config.salt.encode("utf-8"), digest_size=32).digest() if config.salt else b""
        self.stats: Stats | None = None
        self.annotation_keys = {t: f"pii.{t}" for t in config.types}
        self.fields = frozenset(config.fields)

    def bind_stats(self, stats: Stats) -> None:
        """The chain's stats, where replacement counts go as events."""
        self.stats = stats

    def transform(self, doc: Document) -> Drop | None:
        counts: dict[str, int] = {}
        fields = self.fields
        if "text" in fields:
            doc.text = self._redact_into(doc.text, counts)
        if "title" in fields and doc.title:
            doc.title = self._redact_into(doc.title, counts)
        if "url" in fields and doc.url:
            doc.url = self._redact_url(doc.url, counts)
        if "metadata" in fields and doc.metadata:
            doc.metadata = self._redact_value(doc.metadata, counts)
        for t, key in self.annotation_keys.items():
            doc.annotations[key] = counts.get(t, 0)
        if self.stats is not None and counts:
            for t, n in counts.items():
                self.stats.count(f"event/pii.{t}", n)
            self.stats.count("event/pii.documents")
        return None

    def redact(self, text: str) -> tuple[str, dict[str, int]]:
        """The text with personal data replaced, and the number of replacements per type."""
        counts: dict[str, int] = {}
        return self._redact_into(text, counts), counts

    def _matches(self, text: str) -> list[Match]:
        c = self.config
        return [m for m in detect(text, self.types, ip_scope=c.ip_scope, phone_regions=c.phone_regions)
                if not self.allow.allows(m)]

    def _redact_into(self, text: str, counts: dict[str, int]) -> str:
        matches = self._matches(text)
        if not matches:
            return text
        parts: list[str] = []
        pos = 0
        for m in matches:
            parts.append(text[pos : m.start])
            parts.append(self.replacement(m))
            counts[m.type] = counts.get(m.type, 0) + 1
            pos = m.end
        parts.append(text[pos:])
        return "".join(parts)

    def _redact_url(self, url: str, counts: dict[str, int]) -> str:
        """A URL with personal data replaced, found in its percent-decoded form too
        (`?mail=ann%40acme.de`): each match replaces the encoded characters it was decoded from."""
        if "%" not in url:
            return self._redact_into(url, counts)
        decoded, spans = percent_decoded(url)
        matches = self._matches(decoded)
        if not matches:
            return url
        parts: list[str] = []
        pos = 0
        for m in matches:
            start, end = spans[m.start][0], spans[m.end - 1][1]
            parts.append(url[pos:start])
            parts.append(self.replacement(m))
            counts[m.type] = counts.get(m.type, 0) + 1
            pos = end
        parts.append(url[pos:])
        return "".join(parts)

    def _redact_value(self, value: Any, counts: dict[str, int]) -> Any:
        """Every string in a metadata value (dicts and lists walked; keys left), as a new value."""
        if isinstance(value, str):
            return self._redact_into(value, counts)
        if isinstance(value, dict):
            return {k: self._redact_value(v, counts) for k, v in value.items()}
        if isinstance(value, list):
            return [self._redact_value(v, counts) for v in value]
        return value

    def replacement(self, match: Match) -> str:
        token = TOKENS[match.type]
        if self.config.replacement == "token":
            return f"<{token}>"
        digest = hashlib.blake2b(f"{token}\x00{match.key}".encode(), digest_size=6, key=self.key).hexdigest()
        return f"<{token}:{digest}>"


_PERCENT_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def percent_decoded(url: str) -> tuple[str, list[tuple[int, int]]]:
    """`url` with its percent-escapes decoded (UTF-8), and for each decoded character the span of
    `url` it came from. A run that is not UTF-8 maps each of its characters to the whole run."""
    chars: list[str] = []
    spans: list[tuple[int, int]] = []
    pos = 0
    for m in _PERCENT_RUN.finditer(url):
        for i in range(pos, m.start()):
            chars.append(url[i])
            spans.append((i, i + 1))
        raw = bytes.fromhex(m.group(0).replace("%", ""))
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("utf-8", "replace")
            chars.extend(text)
            spans.extend([(m.start(), m.end())] * len(text))
        else:
            at = m.start()
            for ch in text:
                width = 3 * len(ch.encode("utf-8"))
                chars.append(ch)
                spans.append((at, at + width))
                at += width
        pos = m.end()
    for i in range(pos, len(url)):
        chars.append(url[i])
        spans.append((i, i + 1))
    return "".join(chars), spans


def build_pii_stages(config: PiiConfig) -> list[Any]:
    return [RedactPii(config)] if config.enabled else []
