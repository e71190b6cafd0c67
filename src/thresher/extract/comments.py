"""Comment threads, for `--comments keep` (standard library only).

The main-content selection removes comment threads (their class/id words are strong furniture
words). In keep mode they are found again after the selection: the outermost elements outside the
chosen region whose class or id names a comment thread (`comments`, `disqus`, `replies`,
`discussion`...) or whose `itemprop`/`itemtype` marks a comment, holding enough text to be a
thread rather than a "3 comments" link. Their text is rendered after the main content and each
comment's author and date are kept as metadata where the page marks them (an `author`/`fn`/`cite`
element, a `<time>` or a date-like class, schema.org `itemprop`).
"""

from __future__ import annotations

import re
from typing import Any

from thresher.extract.blocks import REMOVED, Block, segment
from thresher.extract.hints import BOILER_LINE, DROP_TAGS, class_id, is_hidden, tokens_of
from thresher.extract.tree import HtmlDocument, Node, text_of

# A thread holds at least this many characters: less is a comment count or a "leave a reply" link.
# (The shortest real threads of the trafilatura-eval pages that count comments hold one comment of
# about 100 characters.)
MIN_THREAD_CHARS = 80
# Flag set on nodes inside a thread that are not comment text (forms, buttons, hidden parts).
_THREAD_SKIP = 8
_THREAD_WORDS = re.compile(r"comment|disqus|repl(?:y|ies)|respon[ds]|discussion|kommentar|commentaire|comentario",
                           re.I)
# Not threads, though they carry the words: counts, links, the reply form, feeds and widgets.
_NOT_THREAD_WORDS = re.compile(r"count|link|form|respond-?form|reply-?title|rss|feed|widget|recent|number|btn|button",
                               re.I)
# One comment: a class name that is exactly "comment" (or "comment-item", "comment_123"...), an id
# like "comment-123", or a schema.org Comment.
_ITEM_CLASS = re.compile(r"(?:\w+-)?comment(?:[-_](?:item|entry|\d+))?|reply|post-reply|answer", re.I)
_ITEM_ID = re.compile(r"(?:comment|reply|answer)[-_]?\d+", re.I)
_AUTHOR_WORDS = re.compile(r"author|\bfn\b|user-?name|commenter|nickname|comment-meta-?author", re.I)
_DATE_WORDS = re.compile(r"date|time|published|posted|meta", re.I)
_COMMENT_ITEMTYPE = re.compile(r"schema\.org/(?:Comment|Answer)\b", re.I)


def _is_thread(node: Node) -> bool:
    if not node.raw_attrs or node.tag in DROP_TAGS or node.tag == "form":
        return False
    attrs = node.attrs
    if _COMMENT_ITEMTYPE.search(attrs.get("itemtype", "")) or attrs.get("itemprop", "").lower() == "comment":
        return True
    ci = class_id(node)
    if not ci or not _THREAD_WORDS.search(ci):
        return False
    low, tokens = tokens_of(ci)
    return not any(_NOT_THREAD_WORDS.search(t) for t in tokens if _THREAD_WORDS.search(t))


def find_threads(doc: HtmlDocument, region: Node) -> list[Node]:
    """The outermost comment threads outside `region` (and not around it), in document order."""
    threads: list[Node] = []
    end_of_last = -1
    for node in doc.nodes[1:]:
        if node.index < end_of_last:
            continue  # inside a thread already taken
        if node.contains(region):
            continue  # a wrapper of the main content is not a thread
        if region.contains(node) and not node.flags & REMOVED:
            continue  # already in the main text
        if node.text_len >= MIN_THREAD_CHARS and _is_thread(node):
            threads.append(node)
            end_of_last = node.end
    return threads


def _comment_items(doc: HtmlDocument, thread: Node) -> list[Node]:
    """The individual comments of a thread: elements marked as a comment, innermost marks dropped
    when an outer one holds them (a comment's body inside its item)."""
    items: list[Node] = []
    for i in range(thread.index + 1, thread.end):
        node = doc.nodes[i]
        if not node.raw_attrs:
            continue
        attrs = node.attrs
        marked = _COMMENT_ITEMTYPE.search(attrs.get("itemtype", "")) or attrs.get("itemprop", "").lower() == "comment"
        if not marked and node.tag in ("li", "article", "div", "section"):
            marked = any(_ITEM_CLASS.fullmatch(c) for c in attrs.get("class", "").split()) or bool(
                _ITEM_ID.fullmatch(attrs.get("id", "")))
        if marked and node.text_len > 0:
            items.append(node)  # nested replies are items of their own
    return items


def _first_marked(doc: HtmlDocument, item: Node, pattern: re.Pattern[str], itemprop: str) -> Node | None:
    for i in range(item.index + 1, item.end):
        node = doc.nodes[i]
        if node.tag == "cite" and itemprop == "author":
            return node
        if node.raw_attrs:
            if node.attrs.get("itemprop", "").lower() in (
                itemprop,
                "date" + itemprop if itemprop == "published" else "",
            ):
                return node
            ci = class_id(node)
            if ci and pattern.search(ci):
                return node
    return None


def _author(doc: HtmlDocument, item: Node) -> str | None:
    node = _first_marked(doc, item, _AUTHOR_WORDS, "author")
    text = text_of(node) if node is not None else ""
    return text[:200] or None


def _date(doc: HtmlDocument, item: Node) -> str | None:
    for i in range(item.index + 1, item.end):
        node = doc.nodes[i]
        if node.tag == "time":
            return (node.get("datetime") or text_of(node))[:100] or None
    marked = _first_marked(doc, item, _DATE_WORDS, "published")
    if marked is None:
        return None
    return (marked.get("datetime") or marked.get("content") or text_of(marked))[:100] or None


def thread_blocks(doc: HtmlDocument, thread: Node, deadline: float | None = None) -> list[Block]:
    """The text blocks of a thread: its comments' text, without forms, buttons, hidden parts,
    link lists and stock lines ("Reply", "Leave a comment")."""
    for i in range(thread.index + 1, thread.end):
        node = doc.nodes[i]
        if node.tag in DROP_TAGS or node.tag == "form" or is_hidden(node):
            node.flags |= _THREAD_SKIP
        elif node.parent is not None and node.parent.flags & _THREAD_SKIP:
            node.flags |= _THREAD_SKIP
    blocks = segment(thread, deadline, skip_flags=_THREAD_SKIP)
    return [b for b in blocks if b.link_density <= 0.5 and not (
        b.text_len < 80 and BOILER_LINE.match(b.text.strip(" .:!|»›>-–—")))]


def comment_metadata(doc: HtmlDocument, threads: list[Node]) -> list[dict[str, Any]]:
    """Per comment: its author and date where the page marks them (None where it does not)."""
    out: list[dict[str, Any]] = []
    for thread in threads:
        kept: list[tuple[Node, dict[str, Any]]] = []
        for item in _comment_items(doc, thread):
            meta = {"author": _author(doc, item), "date": _date(doc, item)}
            # a comment's body or header inside its item repeats the item's marks: one comment
            if kept and kept[-1][0].contains(item) and kept[-1][1] == meta:
                continue
            kept.append((item, meta))
        out.extend(meta for _, meta in kept if meta["author"] or meta["date"])
    return out
