"""The pure parts of URL dedup (`thresher.dedup.url_stage`): when two URLs name the same page
(`normalize_url`), when a document was fetched (`document_date`, `parse_date`) and how a date is
shown in a drop (`date_text`).

Normalization is deliberately conservative, since a false match drops a page that is not a
re-fetch: only what RFC 3986 (section 6.2.2, 6.2.3) says cannot change the resource is folded:

- the scheme and the host are lower-cased (the user info, path and query keep their case);
- a port that is the scheme's default (`http:80`, `https:443`, ...) or empty is removed;
- an empty path of an http(s) URL becomes `/`;
- the fragment is removed (it is never sent to the server).

Nothing else: the query string is kept as it is and in its order (`?a=1&b=2` is not `?b=2&a=1`),
percent-encodings are not decoded, and a leading `www.` is kept, since `www.example.com` and
`example.com` are different hosts that may serve different pages.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

DEFAULT_PORTS = {"http": "80", "https": "443", "ws": "80", "wss": "443", "ftp": "21"}
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):(.*)$", re.S)
_COMPACT = re.compile(r"^\d{14}$")  # WARC/ARC: YYYYMMDDhhmmss
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
MICROSECOND = dt.timedelta(microseconds=1)


def normalize_url(url: str) -> str:
    """The form of `url` two fetches of the same page share (see the module docstring). A string
    that is no absolute URL comes back stripped of surrounding space and its fragment only."""
    url = url.strip()
    url, _, _ = url.partition("#")
    match = _SCHEME.match(url)
    if match is None:
        return url
    scheme, rest = match.group(1).lower(), match.group(2)
    if not rest.startswith("//"):  # mailto:, urn:, ... no authority to fold
        return f"{scheme}:{rest}"
    rest = rest[2:]
    cut = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    authority, tail = rest[:cut], rest[cut:]
    userinfo, at, hostport = authority.rpartition("@")
    host, port = _split_port(hostport)
    if port == "" or DEFAULT_PORTS.get(scheme) == port:
        port = None
    if not tail.startswith("/") and scheme in ("http", "https"):
        tail = "/" + tail
    netloc = f"{userinfo}{at}{host.lower()}" + ("" if port is None else f":{port}")
    return f"{scheme}://{netloc}{tail}"


def _split_port(hostport: str) -> tuple[str, str | None]:
    """(host, port) of `host[:port]`; an IPv6 literal keeps its brackets; None: no port given."""
    if hostport.startswith("["):
        end = hostport.find("]")
        if end >= 0:
            after = hostport[end + 1 :]
            if after.startswith(":"):
                return hostport[: end + 1], after[1:]
            return hostport, None
    host, colon, port = hostport.rpartition(":")
    if colon and (port == "" or port.isdigit()):
        return host, port
    return hostport, None


def parse_date(value: Any) -> int | None:
    """A fetch date as microseconds since 1970-01-01 UTC, or None when `value` is none this reads:

    - ISO 8601 text (`2024-05-01`, `2024-05-01T12:00:00Z`, `...+02:00`; no offset: UTC);
    - WARC/ARC compact dates (`20240501120000`, UTC) and ISO basic dates (`20240501`);
    - HTTP dates (`Wed, 01 May 2024 12:00:00 GMT`);
    - epoch seconds, as a number or as decimal text (other than 8 digits).
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return _from_seconds(value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    when: dt.datetime | None
    try:
        if _COMPACT.match(text):
            when = dt.datetime.strptime(text, "%Y%m%d%H%M%S")
        elif _NUMBER.match(text) and len(text) != 8:  # 8 digits: ISO 8601 basic YYYYMMDD
            return _from_seconds(float(text) if "." in text else int(text))
        else:
            when = _iso_or_http(text)
    except (ValueError, OverflowError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    try:
        return (when - EPOCH) // MICROSECOND
    except OverflowError:
        return None


def _iso_or_http(text: str) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(text)
    except ValueError:
        pass
    try:
        return email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None


def _from_seconds(seconds: float) -> int | None:
    if isinstance(seconds, float) and not math.isfinite(seconds):
        return None
    micros = int(seconds) * 1_000_000 if isinstance(seconds, int) else round(seconds * 1_000_000)
    if abs(micros) >= 2**62:  # beyond any calendar date: not a fetch date
        return None
    return micros


def date_text(micros: int | None) -> str | None:
    """A date of `parse_date` as ISO 8601 UTC text (`2024-05-01T12:00:00Z`), None for none."""
    if micros is None:
        return None
    try:
        when = EPOCH + dt.timedelta(microseconds=micros)
    except OverflowError:
        return f"{micros / 1_000_000:.6f} s"
    return when.isoformat(timespec="microseconds" if when.microsecond else "seconds").replace("+00:00", "Z")


def document_date(record: Mapping[str, Any], fields: Sequence[str]) -> int | None:
    """When the document of the output `record` was fetched: the first of `fields` the record has
    (a reader's own `fetched_at`, the WARC-Date, at the top; an input field of a JSONL or Parquet
    record under `metadata`), parsed by `parse_date`. None when the first one present does not
    parse or none is present."""
    metadata = record.get("metadata")
    for name in fields:
        value = record.get(name) if name in record else None
        if value is None and isinstance(metadata, Mapping):
            value = metadata.get(name)
        if value is not None:
            return parse_date(value)
    return None
