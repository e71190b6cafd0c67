"""The prescan's fast paths (no `<meta` at all; ordinary tags skipped by one regex match) give the
byte loop's answer on every input: checked against the byte-by-byte reference on random markup."""

from __future__ import annotations

import random

from thresher.read import encoding
from thresher.read.encoding import PRESCAN_BYTES, _get_attribute, _is_letter, prescan


def _skip_tag_bytewise(data: bytes, i: int) -> int:
    """Where the byte loop leaves an ordinary tag starting at `i` (the reference)."""
    n = len(data)
    while i < n and data[i] not in b"\t\n\f\r >":
        i += 1
    while True:
        attr, i = _get_attribute(data, i)
        if attr is None:
            return i


def _skip_tag_fast(data: bytes, i: int) -> int:
    """The same through `_PRESCAN_TAG`, as `prescan` does it."""
    n = len(data)
    m = encoding._PRESCAN_TAG.match(data, i)
    i = m.end()
    if i < n and data[i] != 0x3E:
        i = m.end(1)
        while True:
            attr, i = _get_attribute(data, i)
            if attr is None:
                break
    return i


def _reference_prescan(data: bytes, limit: int = PRESCAN_BYTES) -> str | None:
    """The prescan as a byte loop only (the module's code before its fast paths)."""
    data = data[:limit]
    n = len(data)
    i = 0
    while i < n:
        if data[i] != 0x3C:
            i = data.find(b"<", i)
            if i < 0:
                return None
        if data.startswith(b"<!--", i):
            end = data.find(b"-->", i + 2)
            if end < 0:
                return None
            i = end + 3
            continue
        if data[i:i + 5].lower() == b"<meta" and i + 5 < n and data[i + 5] in b"\t\n\f\r /":
            i += 6
            seen: set[bytes] = set()
            got_pragma = False
            need_pragma: bool | None = None
            charset: str | None = None
            while True:
                attr, i = _get_attribute(data, i)
                if attr is None:
                    break
                name, value = attr
                if name in seen:
                    continue
                seen.add(name)
                if name == b"http-equiv":
                    got_pragma = got_pragma or value == b"content-type"
                elif name == b"content" and charset is None:
                    found = encoding.charset_from_content(value)
                    if found is not None:
                        charset, need_pragma = found, True
                elif name == b"charset" and charset is None:
                    charset, need_pragma = encoding.encoding_for_label(value), False
            if need_pragma is not None and (got_pragma or not need_pragma) and charset is not None:
                if charset in ("utf-16be", "utf-16le"):
                    return "utf-8"
                return "windows-1252" if charset == "x-user-defined" else charset
        elif data[i] == 0x3C and i + 1 < n and (_is_letter(data[i + 1]) or (
                data[i + 1] == 0x2F and i + 2 < n and _is_letter(data[i + 2]))):
            i = _skip_tag_bytewise(data, i)
        elif data.startswith((b"<!", b"</", b"<?"), i):
            end = data.find(b">", i + 2)
            if end < 0:
                return None
            i = end
        i += 1
    return None


# Pieces random markup is made of: every byte the attribute rules look at, and whole declarations.
_PIECES = [b"<", b">", b"/", b"=", b'"', b"'", b" ", b"\t", b"\n", b"\f", b"\r", b"a", b"B", b"x1", b"-", b"!",
           b"?", b"<a", b"</p", b"<div", b"<!--", b"-->", b"<meta ", b"<META/", b"charset=", b"CHARSET",
           b"koi8-r", b"utf-8", b"http-equiv", b"content", b"content-type", b"text/html;charset=euc-kr",
           b"\xff", b"\x00"]


def _random_markup(rng: random.Random, size: int) -> bytes:
    return b"".join(rng.choice(_PIECES) for _ in range(size))


def test_tag_skip_stops_where_the_byte_loop_stops():
    rng = random.Random(15)
    for _ in range(20000):
        data = b"<" + rng.choice([b"a", b"/a", b"Div"]) + _random_markup(rng, rng.randrange(1, 40))
        assert _skip_tag_fast(data, 0) == _skip_tag_bytewise(data, 0), data


def test_prescan_matches_the_byte_loop_on_random_markup():
    rng = random.Random(19)
    for _ in range(20000):
        data = _random_markup(rng, rng.randrange(1, 60))
        if rng.random() < 0.5:
            data += b'<meta charset="windows-1251">'
        limit = rng.choice([PRESCAN_BYTES, len(data), max(1, len(data) - rng.randrange(1, 8))])
        assert prescan(data, limit) == _reference_prescan(data, limit), (data, limit)


def test_prescan_matches_the_byte_loop_on_page_heads():
    head = (b'<!DOCTYPE html><html lang="en"><head><link rel=stylesheet href="/a.css?x=1&y=2">'
            b"<script src='x.js' async></script><div class=\"a b\" data-x='\"' title=\"it's\">")
    for tail in (b'<meta name="viewport" content="width=device-width">', b'<meta http-equiv="Content-Type" '
                 b'content="text/html; charset=Shift_JIS">', b"<meta charset=koi8-r>", b""):
        page = head * 20 + tail + b"<p>text</p>"
        for cut in range(len(page) - 200, len(page) + 1):
            assert prescan(page, cut) == _reference_prescan(page, cut)


def test_every_encoding_has_a_codec():
    """`decode_html` asks the prescan only when the declared charset fails: that skips nothing
    observable because the meta lookup cannot fail (every name it can return has a codec)."""
    for name in set(encoding.LABELS.values()):
        assert encoding.python_codec(name)
