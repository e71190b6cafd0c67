"""Line and paragraph dedup, the pure part: how a text splits into units (lines, or paragraphs between
blank lines), when two units are the same (`unit_key`, at the levels exact dedup uses), whose host a
document is, the fixed-size records the stage's tasks hand on, and the text left once units are
removed. The phases that count units over the corpus are `thresher.dedup.line_stage`.

A unit's span covers its text and the line break(s) after it, so removing spans never joins two
kept lines; offsets are character offsets into the text before the edit.
"""

from __future__ import annotations

import hashlib
import re
import struct
from typing import Literal
from urllib.parse import urlsplit

from thresher.dedup.exact import exact_key_text

Level = Literal["raw", "normalized", "structural"]
Unit = Literal["line", "paragraph"]

# (unit key, host key, ordinal, unit index): sorting the raw bytes sorts by key, then host, then document
KEY_RECORD = struct.Struct(">8s8sQI")
# (ordinal, unit index, documents, hosts, most pages of one host): one removal, for the edit task
REMOVAL = struct.Struct(">QIIII")
KEY_BUCKETS = 256
NO_HOST = bytes(8)
_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n\s*")


def unit_spans(text: str, unit: Unit) -> list[tuple[int, int, int]]:
    """(start, end of the content, end with the break after it) of every unit of `text`, in order;
    a blank line is no unit (it is part of the break before the next one)."""
    spans: list[tuple[int, int, int]] = []
    if unit == "paragraph":
        start = 0
        for m in _PARAGRAPH_BREAK.finditer(text):
            if text[start : m.start()].strip():
                spans.append((start, m.start(), m.end()))
            start = m.end()
        if text[start:].strip():
            spans.append((start, len(text), len(text)))
        return spans
    start = 0
    n = len(text)
    while start < n:
        nl = text.find("\n", start)
        end = n if nl < 0 else nl
        after = n if nl < 0 else nl + 1
        if text[start:end].strip():
            spans.append((start, end, after))
        start = after
    return spans


def unit_key(content: str, level: Level) -> bytes | None:
    """The 8-byte key two units share when they are the same at `level`; None for a unit with
    nothing left to compare (only punctuation or spacing)."""
    folded = exact_key_text(content.strip(), level)
    if not folded:
        return None
    return hashlib.blake2b(folded.encode("utf-8", "surrogatepass"), digest_size=8).digest()


def host_of(url: object) -> str:
    """The lower-cased host of a URL, without a leading `www.`; empty when there is none."""
    if not isinstance(url, str) or not url:
        return ""
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""
    return host[4:] if host.startswith("www.") else host


def host_key(url: object) -> bytes:
    host = host_of(url)
    return hashlib.blake2b(host.encode("utf-8", "surrogatepass"), digest_size=8).digest() if host else NO_HOST


def key_bucket(key: bytes) -> int:
    return key[0]  # KEY_BUCKETS = 256: the first byte of a BLAKE2b digest


def without_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with the character spans removed (sorted, not overlapping); surrounding blank lines
    trimmed, since a removed first or last unit leaves its break behind."""
    parts = []
    at = 0
    for start, end in spans:
        parts.append(text[at:start])
        at = end
    parts.append(text[at:])
    return "".join(parts).strip("\n")
