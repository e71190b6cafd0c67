"""URL hygiene: one canonical spelling per page, and a counted reason for every line that is not one.

Canonical form: scheme and host in lower case, IDNs in punycode, IPv4 hosts in dotted decimal
(`0x7f.1` and `2130706433` spell 127.0.0.1: the safety check must see the address a resolver would
connect to), default ports dropped, dot segments removed, percent-encoding normalised (unreserved
characters decoded, hex digits upper case, spaces and non-ASCII encoded as UTF-8), tracking query
parameters removed, the fragment dropped. Only http and https are fetched.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_HOST_LABEL = re.compile(r"[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_PCT = re.compile(rb"%([0-9A-Fa-f]{2})")
# characters kept as they are in both paths and queries (unreserved plus the shared sub-delims)
_ALREADY_CLEAN = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/]*")


@dataclass(frozen=True, slots=True)
class Rejected:
    """Why an input line is not a fetchable URL."""

    reason: str  # blank | too_long | no_scheme | scheme | bad_host | bad_port | userinfo | non_page_extension
    detail: str = ""


def _quote(part: str, safe: bytes) -> str:
    """Percent-encoding normalised: %XX of an unreserved byte decoded, other %XX upper-cased, bytes
    outside `safe` and the unreserved set encoded."""
    if "%" not in part and _ALREADY_CLEAN.fullmatch(part):  # the common case: nothing to change
        return part
    raw = part.encode("utf-8", "surrogatepass")
    out = bytearray()
    i = 0
    n = len(raw)
    while i < n:
        b = raw[i]
        if b == 0x25 and _PCT.match(raw, i):
            value = int(raw[i + 1:i + 3], 16)
            if value in _UNRESERVED:
                out.append(value)
            else:
                out += b"%%%02X" % value
            i += 3
            continue
        if b in _UNRESERVED or b in safe:
            out.append(b)
        else:
            out += b"%%%02X" % b
        i += 1
    return out.decode("ascii")


_PATH_SAFE = b"!$&'()*+,;=:@/"
_QUERY_SAFE = b"!$'()*+,;:@/?="


def _remove_dot_segments(path: str) -> str:
    out: list[str] = []
    segments = path.split("/")
    for i, seg in enumerate(segments):
        last = i == len(segments) - 1
        if seg == ".":
            if last:
                out.append("")
            continue
        if seg == "..":
            if len(out) > 1:
                out.pop()
            if last:
                out.append("")
            continue
        out.append(seg)
    result = "/".join(out)
    return result if result.startswith("/") else "/" + result


def _ipv4_number(part: str) -> int | None:
    """One part of a WHATWG IPv4 host: decimal, 0x-hex or 0-prefixed octal; None when not a number."""
    if part[:2].lower() == "0x":
        digits, base = part[2:], 16
        if digits == "":
            return 0
    elif len(part) > 1 and part[0] == "0":
        digits, base = part[1:], 8
    else:
        digits, base = part, 10
    try:
        return int(digits, base) if digits and digits.isascii() and digits.isalnum() else None
    except ValueError:
        return None


def parse_ipv4_host(host: str) -> str | None | Rejected:
    """The dotted-decimal address a numeric host spells (`0177.0.0.1`, `0x7f000001`, `127.1`), None
    when the host is a name, Rejected when it is numeric but no valid address (as browsers do)."""
    parts = host.split(".")
    if parts and parts[-1] == "" and len(parts) > 1:
        parts.pop()
    if not parts or _ipv4_number(parts[-1]) is None:
        return None
    if len(parts) > 4:
        return Rejected("bad_host", host)
    numbers = [_ipv4_number(p) for p in parts]
    if any(n is None for n in numbers):
        return Rejected("bad_host", host)
    nums = [n for n in numbers if n is not None]
    if any(n > 255 for n in nums[:-1]) or nums[-1] >= 256 ** (5 - len(nums)):
        return Rejected("bad_host", host)
    value = nums[-1]
    for i, n in enumerate(nums[:-1]):
        value += n * 256 ** (3 - i)
    return str(ipaddress.IPv4Address(value))


def normalize_host(host: str) -> str | Rejected:
    """Lower-case, punycode, dotted-decimal or bracketed canonical IPv6."""
    if host.startswith("["):
        if not host.endswith("]"):
            return Rejected("bad_host", host)
        try:
            addr = ipaddress.IPv6Address(host[1:-1].split("%", 1)[0])
        except ValueError:
            return Rejected("bad_host", host)
        return f"[{addr.compressed}]"
    host = host.rstrip(".").lower()
    if not host:
        return Rejected("bad_host", "empty host")
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except (UnicodeError, ValueError):
            return Rejected("bad_host", "not a valid international domain name")
    if "%" in host:
        return Rejected("bad_host", host[:100])
    numeric = parse_ipv4_host(host)
    if numeric is not None:
        return numeric
    labels = host.split(".")
    if len(host) > 253 or not all(_HOST_LABEL.fullmatch(label) for label in labels):
        return Rejected("bad_host", host[:100])
    return host


@lru_cache(maxsize=16)
def _tracking_rules(tracking: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    """(exact names, prefixes) of a tracking list; a pure function of the list, cached because the
    list is the same for every URL of a run."""
    exact = frozenset(t.lower() for t in tracking if not t.endswith("*"))
    return exact, tuple(t[:-1].lower() for t in tracking if t.endswith("*"))


def _drop_tracking(query: str, tracking: Sequence[str]) -> str:
    if not query:
        return ""
    exact, prefixes = _tracking_rules(tuple(tracking))
    kept = []
    for pair in query.split("&"):
        if not pair:
            continue
        name = pair.split("=", 1)[0].lower()
        if name in exact or (prefixes and name.startswith(prefixes)):
            continue
        kept.append(pair)
    return "&".join(kept)


def normalize_url(
    text: str, *, tracking_params: Sequence[str] = (), skip_extensions: Sequence[str] = (), max_chars: int = 2048
) -> str | Rejected:
    """The canonical spelling of `text`, or why it cannot be fetched."""
    text = text.strip()
    if not text:
        return Rejected("blank")
    if len(text) > max_chars:
        return Rejected("too_long", f"{len(text)} characters")
    if not _SCHEME.match(text):
        return Rejected("no_scheme", text[:100])
    scheme = text.split(":", 1)[0].lower()
    if scheme not in _DEFAULT_PORTS:
        return Rejected("scheme", scheme)
    if any(c in text for c in "\x00\r\n\t"):
        return Rejected("bad_characters", text[:100])
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        reason = "bad_port" if "port" in str(exc).lower() else "bad_host"
        return Rejected(reason, str(exc))
    netloc = parts.netloc
    if "@" in netloc:
        return Rejected("userinfo", "credentials in the URL")
    raw_host = netloc.rsplit(":", 1)[0] if not netloc.endswith("]") and ":" in netloc else netloc
    if not raw_host:
        return Rejected("bad_host", "no host")
    host = normalize_host(raw_host)
    if isinstance(host, Rejected):
        return host
    if port is not None and port == _DEFAULT_PORTS[scheme]:
        port = None
    if port == 0:
        return Rejected("bad_port", "0")
    path = _remove_dot_segments(_quote(parts.path or "/", _PATH_SAFE))
    if skip_extensions:
        last = path.rsplit("/", 1)[-1].lower()
        dot = last.rfind(".")
        if dot > 0 and last[dot:] in skip_extensions:
            return Rejected("non_page_extension", last[dot:])
    query = _drop_tracking(_quote(parts.query, _QUERY_SAFE + b"&"), tracking_params)
    url = f"{scheme}://{host}" + (f":{port}" if port is not None else "") + path + (f"?{query}" if query else "")
    if len(url) > max_chars:
        return Rejected("too_long", f"{len(url)} characters once normalised")
    return url


def host_key(url: str) -> str:
    """The host:port a normalised URL is fetched from: the unit of politeness."""
    rest = url.split("://", 1)[1]
    return rest.split("/", 1)[0].split("?", 1)[0]


def origin(url: str) -> str:
    """scheme://host[:port] of a normalised URL (robots.txt is per origin)."""
    scheme, rest = url.split("://", 1)
    return f"{scheme}://{rest.split('/', 1)[0].split('?', 1)[0]}"
