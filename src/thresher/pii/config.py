"""PII redaction settings (off by default: redaction changes the text)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from thresher.core.config import setting
from thresher.pii.names import REGIONS, TYPES

# the document fields redaction can act on (`Document` attributes; metadata is walked)
FIELDS = ("text", "url", "title", "metadata")
# RFC 2606 example domains and the RFC 5737 / RFC 3849 documentation address ranges.
DEFAULT_ALLOW = ("example.com", "example.org", "example.net", "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24",
                 "2001:db8::/32")


@dataclass(frozen=True, slots=True, kw_only=True)
class PiiConfig:
    types: tuple[str, ...] = setting(
        (), f"personal data to redact, comma-separated: {', '.join(TYPES)} (empty: no redaction)", flag="--pii"
    )
    replacement: Literal["token", "hash"] = setting(
        "token", "token: a typed placeholder (<EMAIL>); hash: <EMAIL:1a2b3c4d5e6f>, the same for the same value",
        flag="--pii-replacement",
    )
    salt: str = setting(
        "", "salt of hashed replacements (recorded in the manifest like every setting)", flag="--pii-salt"
    )
    ip_scope: Literal["public", "all"] = setting(
        "public", "public: redact only globally routable addresses (as datatrove); all: private ones too"
    )
    phone_regions: tuple[str, ...] = setting(
        REGIONS, f"national phone formats recognised besides international +CC numbers ({', '.join(REGIONS)})"
    )
    fields: tuple[str, ...] = setting(
        ("text",),
        f"document fields redacted, comma-separated: {', '.join(FIELDS)} (metadata: every string in it, nested "
        "ones too; url: percent-encoded addresses in query strings too); the title only when listed",
        flag="--pii-fields",
    )
    allow: tuple[str, ...] = setting(
        DEFAULT_ALLOW, "never redacted: e-mail domains (subdomains too), addresses, IP addresses or CIDR ranges"
    )

    def __post_init__(self) -> None:
        unknown = [t for t in self.types if t not in TYPES]
        if unknown:
            raise ValueError(f"unknown pii type {unknown[0]!r} (known: {', '.join(TYPES)})")
        odd = [f for f in self.fields if f not in FIELDS]
        if odd:
            raise ValueError(f"unknown pii field {odd[0]!r} (known: {', '.join(FIELDS)})")
        bad = [r for r in self.phone_regions if r not in REGIONS]
        if bad:
            raise ValueError(f"unknown phone region {bad[0]!r} (known: {', '.join(REGIONS)})")

    @property
    def enabled(self) -> bool:
        return bool(self.types)
