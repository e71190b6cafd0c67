"""Every bad input of issue 6 gives text or a named drop, quickly."""

from __future__ import annotations

import time

import pytest

from thresher.core.document import Document, Drop
from thresher.extract.builtin import BuiltinExtractor
from thresher.extract.config import ExtractConfig
from thresher.extract.stage import Extract

PARA = "This paragraph is the real content of the page and it is long enough to be kept by the extractor."


def run(html: str, **cfg) -> tuple[Drop | None, Document]:
    d = Document(id="x", html=html)
    t0 = time.monotonic()
    drop = Extract(ExtractConfig(**cfg)).transform(d)
    assert time.monotonic() - t0 < 10
    return drop, d


def test_empty_document_is_empty_text():
    assert run("")[0] == Drop("extract", "empty_text", value=0, limit=1)


def test_whitespace_only_document_is_empty_text():
    assert run(" \n\t ")[0] == Drop("extract", "empty_text", value=0, limit=1)


def test_document_without_body_or_html_tags():
    drop, d = run(f"<title>T</title><p>{PARA}")
    assert drop is None and d.text == PARA and d.title == "T"


def test_bare_text_is_text():
    drop, d = run(PARA)
    assert drop is None and d.text == PARA


def test_frameset_without_fallback_is_empty_text():
    html = '<html><frameset cols="50%,50%"><frame src="a.html"><frame src="b.html"></frameset></html>'
    assert run(html)[0] == Drop("extract", "empty_text", value=0, limit=1)


def test_frameset_noframes_fallback_is_text():
    html = f'<html><frameset><frame src="a.html"><noframes><p>{PARA}</p></noframes></frameset></html>'
    drop, d = run(html)
    assert drop is None and d.text == PARA


def test_one_giant_pre_is_kept_verbatim():
    body = "\n".join(f"    line {i}: some log output here" for i in range(20_000))
    drop, d = run(f"<html><body><pre>{body}</pre></body></html>")
    assert drop is None and d.text == body.strip("\n")


def test_invalid_nesting_and_unclosed_tags():
    html = (
        f"<html><body><div><p><b>{PARA}<i></b></i><table><tr><td>"
        "<p>second part of the text, also long and worth keeping.<div>"
    )
    drop, d = run(html)
    assert drop is None
    assert PARA in d.text and "second part of the text" in d.text


def test_script_only_page_is_empty_text():
    assert run(
        "<html><head><script>document.write('<p>hi</p>')</script></head><body><script>x()</script></body></html>"
    )[0] == Drop("extract", "empty_text", value=0, limit=1)


def test_noscript_fallback_is_used_when_it_is_all_there_is():
    html = f"<html><body><div id=app></div><noscript><p>{PARA}</p></noscript><script>boot()</script></body></html>"
    drop, d = run(html)
    assert drop is None and d.text == PARA


def test_noscript_is_ignored_beside_real_content():
    html = f"<body><p>{PARA}</p><noscript>Please enable JavaScript to view the comments.</noscript></body>"
    assert run(html)[1].text == PARA


def test_misdeclared_charset_mojibake_still_gives_text():
    # UTF-8 bytes decoded as cp1252 by a reader that trusted a wrong declaration
    mojibake = (
        "Größere Städte wie München und Köln haben ihre Pläne für das kommende Jahr veröffentlicht.".encode().decode(
            "cp1252"
        )
    )
    drop, d = run(f'<meta charset="windows-1252"><p>{mojibake}</p>')
    assert drop is None and d.text == mojibake


def test_50mb_page_is_too_large_by_default():
    html = "<p>" + "a" * (50 * 1024 * 1024)
    assert run(html)[0] == Drop("extract", "too_large", value=50 * 1024 * 1024 + 3, limit=16 * 1024 * 1024)


def test_50mb_page_with_no_cap_is_bounded_by_the_time_limit():
    html = ("<div><p>" + PARA + "</p><a href='/x'>link</a></div>\n") * 330_000  # ~50 MB of tags and text
    # the limit counts CPU time: 0.25 s is far below what 50 MB takes to parse, on any machine
    drop, d = run(html, max_html_bytes=None, timeout_s=0.25)
    assert drop == Drop("extract", "timeout", limit=0.25)


def test_100k_deep_nesting_gives_text():
    depth = 100_000
    drop, d = run("<html><body>" + "<div>" * depth + PARA + "</div>" * depth + "</body></html>")
    assert drop is None and d.text == PARA


def test_100k_deep_unclosed_inline_nesting_gives_text():
    drop, d = run("<body>" + "<span><a href='#'>" * 50_000 + PARA)
    assert drop is None or drop.reason == "empty_text"


def test_binary_labelled_as_html_is_a_named_drop():
    payload = bytes(range(256)).decode("latin-1") * 40
    drop, _ = run(payload)
    assert drop is not None and drop.reason == "binary_content"


def test_huge_attribute_and_unbalanced_quotes_do_not_hang():
    html = '<div data-x="' + "y" * 3_000_000 + '"><p title="unclosed>' + PARA + "</p></div>" + '<a b="' * 2000
    t0 = time.monotonic()
    BuiltinExtractor().extract(html)
    assert time.monotonic() - t0 < 5


@pytest.mark.parametrize("html", ["<", "<<<>>>", "</", "<!--", "<!DOCTYPE", "<p", "<table><td>", "&", "&#xffffffff;"])
def test_fragments_do_not_crash(html):
    drop, _ = run(html)
    assert drop is None or drop.reason == "empty_text"
