"""The prescan's fast paths (no `<meta` at all; ordinary tags skipped by one regex match) give the
byte loop's answer on every input: checked against the byte-by-byte reference on random markup."""

from __future__ import annotations

import random

from thresher.read import encoding
from thresher.read.encoding import PRESCAN_BYTES, prescan, prescan_loop, skip_tag_bytewise


def _reference_prescan(data: bytes, limit: int = PRESCAN_BYTES) -> str | None:
    """The prescan as a byte loop only: no "<meta" shortcut, tags skipped byte by byte."""
    return prescan_loop(data[:limit], skip_tag_bytewise)


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
        assert encoding._skip_tag(data, 0) == skip_tag_bytewise(data, 0), data


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
