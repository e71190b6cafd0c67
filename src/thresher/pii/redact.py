"""The PII transform: replaces detected personal data in `doc.text` and counts what it replaced.

Writes `pii.<type>` annotations (matches replaced, 0 included, for every enabled type, so output
records share one schema) and counts `event/pii.<type>` and `event/pii.documents` (documents with at
least one replacement) in the run's stats. Never drops a document. The title is left as it is.

Replacement is a typed token (`<EMAIL>`, `<IP>`, `<PHONE>`, `<CARD>`, `<IBAN>`; an obfuscated
address becomes `<EMAIL>` too) or, with `replacement = "hash"`, the token with a salted digest of
the canonical value (`<EMAIL:1a2b3c4d5e6f>`): the same address gives the same token everywhere in a
build, so co-reference survives while the value does not. 48 bits of BLAKE2b keyed by the salt;
deterministic, so shards stay byte-identical across engines and resumes.
"""

from __future__ import annotations

import hashlib
import ipaddress
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

    def bind_stats(self, stats: Stats) -> None:
        """The chain's stats, where replacement counts go as events."""
        self.stats = stats

    def transform(self, doc: Document) -> Drop | None:
        text, counts = self.redact(doc.text)
        doc.text = text
        for t, key in self.annotation_keys.items():
            doc.annotations[key] = counts.get(t, 0)
        if self.stats is not None and counts:
            for t, n in counts.items():
                self.stats.count(f"event/pii.{t}", n)
            self.stats.count("event/pii.documents")
        return None

    def redact(self, text: str) -> tuple[str, dict[str, int]]:
        """The text with personal data replaced, and the number of replacements per type."""
        c = self.config
        matches = [m for m in detect(text, self.types, ip_scope=c.ip_scope, phone_regions=c.phone_regions)
                   if not self.allow.allows(m)]
        if not matches:
            return text, {}
        parts: list[str] = []
        counts: dict[str, int] = {}
        pos = 0
        for m in matches:
            parts.append(text[pos : m.start])
            parts.append(self.replacement(m))
            counts[m.type] = counts.get(m.type, 0) + 1
            pos = m.end
        parts.append(text[pos:])
        return "".join(parts), counts

    def replacement(self, match: Match) -> str:
        token = TOKENS[match.type]
        if self.config.replacement == "token":
            return f"<{token}>"
        digest = hashlib.blake2b(f"{token}\x00{match.key}".encode(), digest_size=6, key=self.key).hexdigest()
        return f"<{token}:{digest}>"


def build_pii_stages(config: PiiConfig) -> list[Any]:
    return [RedactPii(config)] if config.enabled else []
