"""IP addresses in text: IPv4 dotted quads and IPv6 (RFC 4291 text forms, `::` compression),
parsed by the standard library, and the public-or-not decision.

A candidate is found by a linear regular expression and accepted only when `ipaddress` parses it.
"Public" is what a person's connection could have: globally routable (`is_global`), not multicast,
reserved or unspecified. Private (10/8, 172.16/12, 192.168/16, fc00::/7), loopback, link-local,
CGNAT (100.64/10) and the documentation ranges (192.0.2/24, 198.51.100/24, 203.0.113/24,
2001:db8::/32) are not public; by default only public addresses are redacted, as datatrove does.
"""

from __future__ import annotations

import ipaddress
import re

_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
# Not inside a longer dotted number or word on either side (a fifth component makes it a version
# or an OID, not an address); a sentence's full stop after the address is fine.
IPV4 = re.compile(rf"(?<![\w.\-]){_OCTET}(?:\.{_OCTET}){{3}}(?![\w\-]|\.\d)")
# Groups of up to four hex digits joined by colons, `::` allowed; ipaddress decides validity (a
# clock time 12:30:45 or a MAC address 00:1a:2b:3c:4d:5e is not a valid IPv6 address).
IPV6 = re.compile(r"(?<![\w:.])(?:[0-9A-Fa-f]{1,4}|:)(?::[0-9A-Fa-f]{0,4}){2,7}(?![\w:])")

# Four-part version and section numbers (`version 1.2.3.4`, `build 10.0.0.1`, `Section 5.2.7.5`) look
# like IPv4 addresses; a version- or outline-word just before the number decides.
_VERSION_CONTEXT = re.compile(
    r"(?:\b(?:version|ver\.?|v\.|release|build|firmware|driver|kernel|update|patch|section|sect\.|sec\.|chapter|"
    r"ch\.|clause|paragraph|para\.|article|art\.|item|step|table|figure|fig\.|rule|appendix|annex)|§)\s*:?\s*$",
    re.I,
)


def ipv4_is_version(text: str, start: int) -> bool:
    return _VERSION_CONTEXT.search(text[max(0, start - 20) : start]) is not None


def parse_ip(candidate: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(candidate)
    except ValueError:
        return None


def is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return address.is_global and not (address.is_multicast or address.is_reserved or address.is_unspecified)
