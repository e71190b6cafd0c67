"""Issue 15's bad inputs through the extract stage: each gives text or a named drop, in bounded CPU
time and bounded memory (peak traced allocation a small multiple of the page), and a `<meta>` that
lies about the encoding does not turn the text into mojibake."""

from __future__ import annotations

import time
import tracemalloc

import pytest

from thresher.core.document import Document, Drop
from thresher.extract.config import ExtractConfig
from thresher.extract.stage import Extract
from thresher.read.decode import decode_html

PARA = "This paragraph is the real content of the page and it is long enough to be kept by the extractor."
# Peak traced memory over the page's size: the tree and the text are a few copies of the page at most.
MAX_PEAK_PER_PAGE_CHAR = 12

BAD = {
    "attribute_value_10mb": f'<div data-x="{"y" * 10_000_000}"><p>{PARA}</p></div>',
    "unclosed_quotes_1e6": f"<p>{PARA}</p><p class=\"" + '"' * 1_000_000,
    "script_never_closed": f"<p>{PARA}</p><script>" + "var x = '<p>no</p>';" * 20_000,
    "nul_and_surrogate_references": f"<p>{PARA}</p><p>" + "&#xD800;&#0;\x00&#x110000;&#xDFFF;" * 20_000 + "</p>",
    "ninety_nine_percent_br": f"<p>{PARA}</p>" + "<br>" * 100_000,
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_gives_text_or_a_named_drop_in_bounded_time_and_memory(name: str) -> None:
    html = BAD[name]
    doc = Document(id=name, html=html)
    tracemalloc.start()
    t0 = time.process_time()
    try:
        drop = Extract(ExtractConfig()).transform(doc)
        seconds = time.process_time() - t0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert seconds < 10, name  # traced allocation slows the run several times over
    assert peak < MAX_PEAK_PER_PAGE_CHAR * len(html), (name, peak)
    assert (drop is None and PARA in (doc.text or "")) or isinstance(drop, Drop) and drop.reason


def test_a_page_that_is_only_line_breaks_is_a_named_drop() -> None:
    drop = Extract(ExtractConfig()).transform(Document(id="br", html="<br>" * 100_000))
    assert isinstance(drop, Drop) and drop.reason == "empty_text"


@pytest.mark.parametrize("declared", ["utf-8", "shift_jis", "iso-2022-jp"])
def test_a_meta_charset_that_lies_about_legacy_bytes(declared: str) -> None:
    page = (f'<html><head><meta charset="{declared}"></head><body><p>Größere Städte wie München und Köln '
            "haben ihre Pläne für das kommende Jahr veröffentlicht, schön.</p></body></html>")
    text, _, _ = decode_html(page.encode("cp1252"))
    assert "Größere Städte wie München" in text


def test_a_meta_charset_that_lies_about_utf8_bytes() -> None:
    page = ('<html><head><meta charset="windows-1252"></head><body><p>Größere Städte wie München und Köln.'
            "</p></body></html>")
    assert decode_html(page.encode("utf-8"))[0] == page
