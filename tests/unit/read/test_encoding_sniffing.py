"""Encoding sniffing against the html5lib encoding suite (../shared/data/html5lib-tests/encoding)."""

from __future__ import annotations

import pytest
from tests.conftest import shared_path

from thresher.read.encoding import charset_from_content, encoding_for_label, prescan, sniff


def _cases(name: str) -> list[tuple[bytes, str]]:
    raw = shared_path("html5lib-tests", "encoding", name).read_bytes()
    cases = []
    for chunk in raw.split(b"#data\n")[1:]:
        data, _, rest = chunk.partition(b"\n#encoding\n")
        cases.append((data, rest.split(b"\n", 1)[0].decode().strip().lower()))
    return cases


@pytest.mark.parametrize("name", ["tests1.dat", "tests2.dat", "test-yahoo-jp.dat"])
def test_sniffing_matches_the_html5lib_encoding_suite(name):
    cases = _cases(name)
    assert cases
    failures = [(data[:80], want, sniff(data)[0]) for data, want in cases if sniff(data)[0] != want]
    assert failures == []


def test_labels_follow_the_encoding_standard():
    assert encoding_for_label(" ISO-8859-1 ") == "windows-1252"
    assert encoding_for_label("gb2312") == "gbk"
    assert encoding_for_label("utf8") == "utf-8"
    assert encoding_for_label("no-such-label") is None


def test_content_attribute_charset_extraction():
    assert charset_from_content(b"text/html; charset=utf-8") == "utf-8"
    assert charset_from_content(b"text/html; charset='koi8-r'") == "koi8-r"
    assert charset_from_content(b'text/html; charset="utf-8') is None  # unmatched quote
    assert charset_from_content(b"text/html") is None


def test_order_is_bom_then_transport_then_prescan():
    page = b'<meta charset="windows-1251"><p>x</p>'
    assert sniff(b"\xef\xbb\xbf" + page, transport="koi8-r")[0] == "utf-8"
    assert sniff(page, transport="koi8-r")[0] == "koi8-r"
    assert sniff(page)[0] == "windows-1251"
    assert prescan(b"<!-- <meta charset=koi8-r> --><meta charset=euc-kr>") == "euc-kr"
    assert prescan(b'<meta charset="utf-16le">') == "utf-8"  # the standard's rule: a meta cannot mean UTF-16


def test_undeclared_legacy_pages_decode_through_the_reader():
    from thresher.read.decode import decode_html

    text = "<html><body><p>今天的天气很好，我们一起去公园散步吧。这是一个关于中国历史的文章。</p></body></html>"
    decoded, codec, fell_back = decode_html(text.encode("gbk"))
    assert (decoded, codec, fell_back) == (text, "gb18030", True)
    russian = "<p>Сегодня хорошая погода, и мы пойдём гулять в парк вместе с друзьями.</p>"
    assert decode_html(russian.encode("koi8-r"))[0] == russian
    assert decode_html(russian.encode("cp1251"))[0] == russian


def test_utf16_without_bom_and_a_lying_meta():
    from thresher.read.decode import decode_html

    page = "<html><body><p>Grüße aus Köln, und noch ein wenig mehr Text für die Erkennung.</p></body></html>"
    assert decode_html(page.encode("utf-16-le"))[0] == page
    assert decode_html(page.encode("utf-16-be"))[0] == page
    # a UTF-8 page whose <meta> says windows-1252: valid UTF-8 wins, as the reader has always done
    lying = '<meta charset="windows-1252">' + page
    assert decode_html(lying.encode("utf-8"))[0] == lying


def test_ascii_utf16_without_bom_is_sniffed_by_its_nul_pattern():
    from thresher.read.decode import decode_html, sniff_utf16

    page = '<html><head><meta charset="utf-8"><title>Plain</title></head><body><p>Hello, world.</p></body></html>'
    for codec in ("utf-16-le", "utf-16-be"):
        data = page.encode(codec)
        assert sniff_utf16(data) == codec
        # the bytes are "ASCII" (NUL is), valid UTF-8 and the transport and <meta> both say utf-8
        assert decode_html(data, "utf-8") == (page, codec, False)
    # an odd trailing byte (a truncated payload) still decodes, with a replacement character
    assert decode_html(page.encode("utf-16-le") + b"<")[0].startswith(page)


def test_stray_nuls_in_an_ascii_page_are_not_utf16():
    from thresher.read.decode import decode_html, sniff_utf16

    page = b"<html><body><p>binary junk \0\0 inside an otherwise ordinary page of text</p></body></html>"
    assert sniff_utf16(page) is None
    assert decode_html(page)[1] != "utf-16-le"
    assert sniff_utf16(b"\0" * 64) is None  # NUL on both sides: no pattern
