"""Bytes to text for HTML payloads: declared charset → `<meta>` charset → UTF-8 → a safe fallback.

One deliberate refinement of that order: bytes that are valid UTF-8 and not plain ASCII are read as
UTF-8 even when a legacy single- or double-byte charset is declared. Legacy-encoded text is almost
never valid UTF-8 by accident, while pages that declare a legacy charset but are UTF-8 are common in
crawls; trusting the declaration there turns every accented letter into mojibake. A declared UTF-16
or UTF-32 is always trusted (its ASCII-range text is also valid UTF-8).

UTF-16 without a BOM is recognised by its NUL bytes before anything else: markup is ASCII, and
ASCII in UTF-16 puts a NUL in every other byte (the odd ones little-endian, the even ones
big-endian), a pattern no ASCII-compatible encoding produces. The WHATWG algorithm has no such step
(it never detects UTF-16 without a BOM), but it leaves the last guess to the user agent, and a
browser shown such a page reads UTF-16 (Chromium's detector does); reading it as UTF-8 instead
would give text with a NUL between every letter.

The fallback is cp1252 with undecodable bytes replaced: every byte sequence decodes, and Western
pages mislabelled as UTF-8 (the most common mistake) come out right. The charset used and whether
a fallback happened are recorded on the document (`source.charset`, event counters).
"""

from __future__ import annotations

import codecs

from thresher.read.encoding import guess_legacy, prescan, python_codec

_BOM = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


def normalize_charset(name: str | None) -> str | None:
    """A Python codec name for a declared charset, or None when it is unknown."""
    if not name:
        return None
    name = name.strip().strip("\"'").lower()
    # WHATWG: iso-8859-1 and ascii labels mean windows-1252 on the web
    if name in ("iso-8859-1", "latin1", "latin-1", "us-ascii", "ascii", "iso8859-1"):
        name = "cp1252"
    try:
        return codecs.lookup(name).name
    except (LookupError, ValueError):  # ValueError: a NUL in the label (codecs.lookup refuses it)
        return None


def meta_charset(data: bytes) -> str | None:
    """The codec a `<meta>` declares, found by the HTML standard's prescan (`read.encoding`)."""
    encoding = prescan(data)
    return python_codec(encoding) if encoding else None


# Bytes looked at for the UTF-16 NUL pattern, and the share of the NUL side's bytes that must be NUL
# (a page's head is ASCII markup; a few non-ASCII letters in a title are all that lowers the
# share) while at most `_UTF16_MAX_OTHER_NULS` of the other side's are.
_UTF16_SNIFF_BYTES = 1024
_UTF16_MIN_NULS = 0.9
_UTF16_MAX_OTHER_NULS = 0.1


def sniff_utf16(data: bytes) -> str | None:
    """"utf-16-le" or "utf-16-be" for a BOM-less page whose first bytes have UTF-16's NUL
    pattern (ASCII text, one NUL per character), else None."""
    head = data[:_UTF16_SNIFF_BYTES]
    pairs = len(head) // 2
    if pairs < 2 or b"\0" not in head:
        return None
    even = head[0:2 * pairs:2].count(0) / pairs
    odd = head[1:2 * pairs:2].count(0) / pairs
    if odd >= _UTF16_MIN_NULS and even <= _UTF16_MAX_OTHER_NULS:
        return "utf-16-le"
    if even >= _UTF16_MIN_NULS and odd <= _UTF16_MAX_OTHER_NULS:
        return "utf-16-be"
    return None


def decode_html(data: bytes, declared: str | None = None) -> tuple[str, str, bool]:
    """Decode an HTML payload. Returns (text, charset used, fell_back)."""
    for bom, enc in _BOM:
        if data.startswith(bom):
            return data[len(bom):].decode(enc, "replace"), enc, False
    utf16 = sniff_utf16(data)
    if utf16:
        return data.decode(utf16, "replace"), utf16, False
    declared_codec = normalize_charset(declared)
    tried: list[str] = []
    if not (declared_codec or "").startswith(("utf-16", "utf-32")) and not data.isascii():
        try:
            return data.decode("utf-8"), "utf-8", False
        except UnicodeDecodeError:
            tried.append("utf-8")
    # the `<meta>` prescan runs only when the declared charset does not decode the page (it reads up
    # to `PRESCAN_BYTES` tag by tag, and most pages that reach here declare one that does)
    for step in range(3):
        candidate = declared_codec if step == 0 else meta_charset(data) if step == 1 else "utf-8"
        if candidate is None or candidate in tried:
            continue
        tried.append(candidate)
        try:
            return data.decode(candidate), candidate, False
        except (UnicodeDecodeError, LookupError):
            continue
    guessed = guess_legacy(data)  # undeclared legacy page: GBK, Shift_JIS, windows-1251...
    codec = python_codec(guessed) if guessed else "cp1252"
    return data.decode(codec, "replace"), codec, True
