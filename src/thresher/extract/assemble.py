"""The text of the chosen blocks: the title, furniture filtered out inside the region, rendering.

Inside the region, link lists, captions, stock phrases and trailing furniture are dropped, and the
title repeated as a heading at the top; the rest renders as plain text or Markdown.
"""

from __future__ import annotations

from thresher.extract.blocks import REMOVED, Block
from thresher.extract.hints import BOILER_LINE, DROP_TAGS, FURNITURE_SENTENCE, is_caption_line
from thresher.extract.metadata import declared_titles
from thresher.extract.scoring import ends_sentence, is_server_diagnostic, word_tokens
from thresher.extract.tree import HtmlDocument, text_of

# Constants with a "sweep" note were calibrated as `scoring`'s are (see the note there).
# Link density above which a kept block is dropped (tables hold more links legitimately).
# sweep: 0.4: -0.0024 AEB, -0.0020 readability; 0.6: +0.0007 AEB, +0.0006 readability, -0.0001 trafilatura-eval
# (inside the bootstrap intervals: not moved)
_MAX_KEPT_LINK_DENSITY = 0.5
_MAX_KEPT_TABLE_LINK_DENSITY = 0.6
# Paragraphs shorter than this that read as a caption or photo credit (`hints.CAPTION_LINE`) are one;
# a post footer or rights notice (`hints.FURNITURE_SENTENCE`) that short is furniture.
_CAPTION_LINE_MAX_CHARS = 300
# Stock phrases ("Share this", "Read more") are recognised only in blocks shorter than this.
_BOILER_LINE_MAX_CHARS = 80  # sweep: 60: no change
# Trailing headings shorter than this and trailing non-sentences shorter than
# `_TRAILING_LINE_CHARS` are furniture after the text.
_TRAILING_HEADING_CHARS = 60
_TRAILING_LINE_CHARS = 40
# A short heading right before this many blocks dropped as link lists names those links ("Explore
# further", "More homestories") and goes with them. (Short lines that are no heading too: +0.0009
# F1 on trafilatura-eval and +0.0004 on AEB, but -0.0004 on readability, whose expected output keeps
# such labels as Readability.js keeps link lists; 2 blocks instead of 1: the same trade.)
_LABELLED_LINK_LIST_ITEMS = 1


def _norm(text: str) -> str:
    return " ".join(word_tokens(text))


def choose_title(doc: HtmlDocument) -> str | None:
    declared = declared_titles(doc)
    h1s = []
    for node in doc.nodes:
        if node.tag == "h1" and not (node.flags & REMOVED and node.parent and node.parent.tag in DROP_TAGS):
            t = text_of(node)
            if t:
                h1s.append(t)
            if len(h1s) >= 5:
                break
    norm_declared = [_norm(d) for d in declared]
    for h in h1s:
        nh = _norm(h)
        if nh and any(nh in d or (d and d in nh) for d in norm_declared):
            return h
    if declared:
        return declared[0]
    return h1s[0] if h1s else None


def _is_label(b: Block) -> bool:
    """A short heading or a short line that is no sentence: what names the block after it."""
    return (b.kind == "heading" and b.text_len < _TRAILING_HEADING_CHARS) or (
        b.kind in ("p", "caption") and b.text_len < _TRAILING_LINE_CHARS and not ends_sentence(b.text))


def filter_blocks(chosen: list[Block], title: str | None, keep_links: bool = False) -> list[Block]:
    out: list[Block] = []
    labelled = False  # the last block kept is a label (`_is_label`) with nothing kept after it yet
    dropped_after_label = 0  # link lists dropped since that label
    for b in chosen:
        if not keep_links and b.link_density > (
                _MAX_KEPT_TABLE_LINK_DENSITY if b.kind == "table" else _MAX_KEPT_LINK_DENSITY):
            if labelled and out[-1].kind == "heading":
                dropped_after_label += 1
                if dropped_after_label >= _LABELLED_LINK_LIST_ITEMS:
                    out.pop()  # "Explore further", "More homestories": the name of the links just dropped
                    labelled = False
            continue
        if b.kind == "caption":
            continue  # figure captions and credits describe an image, not the text
        if " on line " in b.text and is_server_diagnostic(b.text):
            continue
        if b.kind == "p" and b.text_len < _CAPTION_LINE_MAX_CHARS and is_caption_line(b.text):
            continue  # a caption written as a paragraph
        if b.kind in ("p", "heading") and b.text_len < _CAPTION_LINE_MAX_CHARS and FURNITURE_SENTENCE.search(b.text):
            continue  # a post footer, a "log in to take part" prompt (a forum writes it as a heading)
        if b.text_len < _BOILER_LINE_MAX_CHARS and BOILER_LINE.match(b.text.strip(" .:!|»›>-–—")):
            continue
        out.append(b)
        labelled = _is_label(b)
        dropped_after_label = 0
    # the title repeated as a heading at the top
    if title:
        nt = _norm(title)
        for k, b in enumerate(out[:3]):
            if b.kind == "heading" and _norm(b.text) == nt:
                del out[k]
                break
    # trailing furniture: headings with nothing under them, short non-sentences
    while out and _is_label(out[-1]):
        out.pop()
    return out



def render(blocks: list[Block], text_format: str, tables_mode: str) -> tuple[str, list[str]]:
    markdown = text_format == "markdown"
    pieces: list[tuple[str, str]] = []
    tables: list[str] = []
    for b in blocks:
        kind = b.kind
        if kind == "table":
            if tables_mode == "split":
                tables.append(b.text)
            elif tables_mode == "keep":
                pieces.append((kind, b.text))
            continue
        if kind == "heading":
            pieces.append((kind, ("#" * b.level + " " + b.text) if markdown else b.text))
        elif kind == "li":
            indent = "  " * max(0, b.level - 1) if markdown else ""
            bullet = "1. " if b.ordered and markdown else "- "
            pieces.append((kind, indent + bullet + b.text.replace("\n", " ")))
        elif kind == "pre":
            pieces.append((kind, "```\n" + b.text + "\n```" if markdown else b.text))
        elif kind == "quote" and markdown:
            pieces.append((kind, "\n".join("> " + line for line in b.text.split("\n"))))
        else:
            pieces.append((kind, b.text))
    if not pieces:
        return "", tables
    sep = "\n\n" if markdown else "\n"
    out = [pieces[0][1]]
    for (prev, _), (kind, text) in zip(pieces, pieces[1:], strict=False):
        out.append("\n" if kind == "li" and prev == "li" else sep)
        out.append(text)
    return "".join(out), tables
