"""`alltext`: every visible text of a page, one paragraph per block element, nothing judged.

The built-in extractor decides what the main content is and removes navigation, footers and
comment threads. For pages that hold nothing else (documentation, e-books, exported wikis, pages a
crawler already cut down) that judgement can only lose text; this extractor keeps all of it. It runs
on Python's own `html.parser`, which reads a page as a flat stream of tags (so no nesting depth can
exhaust the stack), and skips what a browser does not show: scripts, styles, templates, `<head>`
(except the title), and elements marked `hidden`.

Options from the extract settings: `--text-format markdown` writes headings as `#` lines and list
items as `- ` lines; `--tables drop` leaves tables out (`keep` and `split` keep their cells, one row
per line). The page's `<title>` becomes the document title.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from thresher.extract.base import Extraction, ExtractionTimeout, cpu_clock
from thresher.extract.config import ExtractConfig

__version__ = "0.1.0"

# elements whose content is never shown; void elements (br, img, ...) have no content to skip
_INVISIBLE = frozenset({"script", "style", "template", "noscript", "head", "svg", "math", "iframe", "object"})
_BLOCKS = frozenset({
    "address", "article", "aside", "blockquote", "br", "dd", "details", "div", "dl", "dt", "fieldset",
    "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li",
    "main", "nav", "ol", "p", "pre", "section", "summary", "table", "tr", "ul",
})
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
                   "wbr"})
_SPACES = re.compile(r"\s+")
_DEADLINE_EVERY = 256  # tags between two looks at the clock


class _Text(HTMLParser):
    def __init__(self, markdown: bool, tables: bool, deadline: float | None) -> None:
        super().__init__(convert_charrefs=True)
        self.markdown = markdown
        self.tables = tables
        self.deadline = deadline
        self.tags = 0
        self.skip: list[str] = []  # the open elements whose content is not shown (innermost last)
        self.blocks: list[str] = []
        self.line: list[str] = []
        self.prefix = ""
        self.in_title = False
        self.title: list[str] = []

    def _flush(self) -> None:
        text = _SPACES.sub(" ", "".join(self.line)).strip()
        if text:
            self.blocks.append(self.prefix + text)
        self.line = []
        self.prefix = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags += 1
        if self.deadline is not None and self.tags % _DEADLINE_EVERY == 0 and cpu_clock() > self.deadline:
            raise ExtractionTimeout("alltext passed the deadline")
        if tag == "title":
            self.in_title = True
            return
        if tag == "body":  # a <head> left open ends here
            self.skip.clear()
        if self.skip:
            if tag not in _VOID:
                self.skip.append(tag)
            return
        hidden = any(name == "hidden" or (name == "aria-hidden" and value == "true") for name, value in attrs)
        if tag in _INVISIBLE or (tag == "table" and not self.tables) or (hidden and tag not in _VOID):
            self.skip.append(tag)
            return
        if tag in _BLOCKS:
            self._flush()
            if self.markdown and tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
                self.prefix = "#" * int(tag[1]) + " "
            elif self.markdown and tag == "li":
                self.prefix = "- "
        elif tag in ("td", "th"):  # a table row is one line, its cells apart
            self.line.append(" | " if self.line else "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
            return
        if self.skip:
            # close up to the matching open element (HTML lets end tags go missing)
            if tag in self.skip:
                while self.skip and self.skip.pop() != tag:
                    pass
            return
        if tag in _BLOCKS:
            self._flush()

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        elif not self.skip:
            self.line.append(data)


class AllTextExtractor:
    name = "alltext"

    def __init__(self, text_format: str = "text", tables: str = "keep") -> None:
        self.text_format = text_format
        self.tables = tables

    def version(self) -> str:
        return __version__

    def extract(self, html: str, url: str | None = None, deadline: float | None = None) -> Extraction:
        parser = _Text(self.text_format == "markdown", self.tables != "drop", deadline)
        parser.feed(html)
        parser.close()
        parser._flush()
        title = _SPACES.sub(" ", "".join(parser.title)).strip() or None
        return Extraction(text="\n\n".join(parser.blocks), title=title)


def from_config(config: ExtractConfig) -> AllTextExtractor:
    """The factory the `thresher.extractors` entry point names: the extractor with the build's options."""
    return AllTextExtractor(text_format=config.text_format, tables=config.tables)
