"""The `extract` transform: HTML in `doc.html` becomes main-content text in `doc.text`.

Drops (stage `extract`):
- `too_large`: the page is larger than `max_html_bytes` (value: its UTF-8 size, limit: the cap);
- `binary_content`: the first 8 KiB is mostly control or undecodable characters (an image or archive
  labelled as HTML; value: that share, rounded to 3 places);
- `timeout`: extraction passed `timeout_s` (limit: the time limit);
- `empty_text`: the extracted text is shorter than `min_text_chars` (value: its length).

Sets `doc.text`, `doc.title` (an existing title is kept when the page declares none), merges the
page's metadata into `doc.metadata["page"]`, stores split tables in `doc.annotations["extract.tables"]`
and clears `doc.html`. A document without html already has its text and passes through untouched.
"""

from __future__ import annotations

import re

from thresher.core.document import Document, Drop
from thresher.extract.base import ExtractionTimeout, Extractor, cpu_clock
from thresher.extract.config import ExtractConfig
from thresher.extract.registry import get_extractor

_SNIFF_CHARS = 8192
# Control characters other than tab, newlines and form feeds, DEL, and U+FFFD (undecodable bytes).
_BINARY_CHAR = re.compile("[\x00-\x08\x0e-\x1f\x7f\ufffd]")
# The same control characters as Latin-1 bytes (U+FFFD has none: a head holding it is not Latin-1).
_BINARY_BYTES = bytes([*range(0x00, 0x09), *range(0x0E, 0x20), 0x7F])


def control_char_ratio(html: str) -> float:
    """Share of control characters and U+FFFD (bytes that did not decode) at the start of a page."""
    head = html[:_SNIFF_CHARS]
    if not head:
        return 0.0
    try:
        # most heads are Latin-1 (ASCII markup): counted as bytes, one C pass without the regex
        data = head.encode("latin-1")
    except UnicodeEncodeError:
        return len(_BINARY_CHAR.findall(head)) / len(head)
    return (len(data) - len(data.translate(None, _BINARY_BYTES))) / len(head)


class Extract:
    """Main-content extraction as a pipeline transform (see the module docstring for its drops)."""

    name = "extract"

    def __init__(self, config: ExtractConfig | None = None, extractor: Extractor | None = None) -> None:
        self.config = config or ExtractConfig()
        self.extractor = extractor or get_extractor(self.config)

    def transform(self, doc: Document) -> Drop | None:
        html = doc.html
        if html is None:
            return None
        cfg = self.config
        if cfg.max_html_bytes is not None and len(html) > cfg.max_html_bytes // 4:
            size = len(html.encode("utf-8", "surrogatepass"))
            if size > cfg.max_html_bytes:
                doc.html = None
                return Drop(self.name, "too_large", value=size, limit=cfg.max_html_bytes)
        if cfg.max_control_char_ratio is not None:
            ratio = control_char_ratio(html)
            if ratio > cfg.max_control_char_ratio:
                doc.html = None
                return Drop(self.name, "binary_content", value=round(ratio, 3), limit=cfg.max_control_char_ratio)
        deadline = cpu_clock() + cfg.timeout_s if cfg.timeout_s is not None else None
        try:
            result = self.extractor.extract(html, url=doc.url, deadline=deadline)
        except ExtractionTimeout:
            doc.html = None
            return Drop(self.name, "timeout", limit=cfg.timeout_s)
        doc.html = None
        doc.text = result.text
        if result.title:
            doc.title = result.title
        if result.metadata:
            page = doc.metadata.get("page")
            merged = dict(page) if isinstance(page, dict) else {}
            merged.update(result.metadata)
            doc.metadata["page"] = merged
        if result.tables:
            doc.annotations["extract.tables"] = list(result.tables)
        if cfg.min_text_chars is not None and len(result.text.strip()) < cfg.min_text_chars:
            return Drop(self.name, "empty_text", value=len(result.text.strip()), limit=cfg.min_text_chars)
        return None
