"""A forgiving, iterative HTML tree builder (standard library only).

Tokens are the WHATWG tokenizer's (`tokenizer.py`: stray quotes, `<` in attributes, unclosed
comments and tags, character references and raw text as browsers read them, in linear time). The
tree builder is not the standard's: it builds the tree with an
explicit stack and applies the few implied-end-tag rules that matter for text extraction (`p`, `li`,
table cells, `dt`/`dd`, `option`, headings). It never recurses, so a page nested 100,000 levels deep
costs the same as a flat one: elements opened beyond `MAX_DEPTH` are not materialized and their text
flows into the deepest open element.

Raw-text elements (`script`, `style`, `svg`, `math`, `template`, `textarea`, `title`) are skipped
in one search for their end tag (script data with its escaped states); NUL characters are dropped,
as the standard's "in body" insertion mode ignores them; `application/ld+json` scripts are kept for metadata. Along the
way the builder records what the page declares in `<head>`: `<title>`, `<meta>`, `<link>` and
`<html lang>`.

`parse` is the compiled tree builder (`_ctree`, built from `_ctree.c` when the package is installed
with a C compiler) when it is importable; it builds exactly the tree of `_parse_python`, the
reference kept here, which `parse` is otherwise. Setting THRESHER_PURE_PYTHON=1 in the environment
makes `parse` the reference for the whole process.

To stay fast in pure Python, elements that extraction never looks at are not materialized: links
(their text becomes `LinkText`, so link density is still known), attribute-less formatting tags
(`<b>`, `<span>`...) and void elements other than `<hr>`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from thresher.compiled import compiled_module
from thresher.extract.base import ExtractionTimeout, cpu_clock
from thresher.extract.tokenizer import TEXT_TOKEN, decode_text, lower_ascii, parse_attributes, raw_text_end

# Deeper elements are flattened into their deepest materialized ancestor. Real pages stay far
# below this (the deepest of the ~1,300 evaluation pages nests about 60 levels).
MAX_DEPTH = 256
# How many tokens between two deadline checks.
_CHECK_EVERY = 2048
# A <br> in the tree: a line break that is not source-formatting whitespace.
BR = "\u2028"
# Node flag set by `parse` on every element with a <table> element below it.
TABLE_INSIDE = 2

VOID = frozenset(
    "area base basefont bgsound br col embed frame hr image img input keygen link meta param source track wbr".split()
)
# Skipped in one search for the end tag; their content is never text of the page.
RAW_SKIP = frozenset("script style svg math template textarea xmp iframe noembed plaintext".split())
IGNORED_STRUCTURE = frozenset(("html", "head", "body", "frameset"))
# Opening one of these closes an open <p> (HTML's "close a p element" rule, simplified).
CLOSES_P = frozenset(
    "address article aside blockquote center details dialog dir div dl fieldset figcaption figure footer form "
    "h1 h2 h3 h4 h5 h6 header hgroup hr li main menu nav ol p pre section summary table ul dd dt".split()
)
# Formatting elements that, without attributes, carry nothing extraction uses: not materialized.
BARE_INLINE = frozenset("b i em strong u s small big abbr cite sup sub mark q tt var kbd samp nobr font span".split())
_HEADINGS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))



def parse_attrs(raw: str) -> dict[str, str]:
    """A tag's attributes from its attribute text, as the standard's tokenizer reads them."""
    return parse_attributes(raw)


class LinkText(str):
    """Text inside a link (`<a>` elements are not materialized; their text carries the mark)."""

    __slots__ = ()


class Node:
    """An element. `children` holds `Node`s and text strings (entities already decoded)."""

    __slots__ = ("tag", "raw_attrs", "_attrs", "children", "parent", "index", "end", "text_len", "link_len", "flags")

    def __init__(self, tag: str, raw_attrs: str, parent: Node | None, index: int) -> None:
        self.tag = tag
        self.raw_attrs = raw_attrs
        self._attrs: dict[str, str] | None = None
        self.children: list[Node | str] = []
        self.parent = parent
        self.index = index  # pre-order position in Document.nodes
        self.end = index + 1  # one past the last descendant's index
        self.text_len = 0  # non-space characters in the subtree (once closed)
        self.link_len = 0  # of which inside <a>
        self.flags = 0

    @property
    def attrs(self) -> dict[str, str]:
        if self._attrs is None:
            self._attrs = parse_attrs(self.raw_attrs)
        return self._attrs

    def get(self, name: str, default: str = "") -> str:
        if not self.raw_attrs:
            return default
        return self.attrs.get(name, default)

    def contains(self, other: Node) -> bool:
        return self.index <= other.index < self.end

    def __repr__(self) -> str:
        return f"<{self.tag} #{self.index}>"


class HtmlDocument:
    """The parsed page: a root node, every element in document order, and what `<head>` declared."""

    __slots__ = ("root", "nodes", "title", "lang", "metas", "links", "json_ld")

    def __init__(self) -> None:
        self.root = Node("#root", "", None, 0)
        self.nodes: list[Node] = [self.root]
        self.title: str | None = None
        self.lang: str | None = None
        self.metas: list[dict[str, str]] = []
        self.links: list[dict[str, str]] = []
        self.json_ld: list[str] = []


def _parse_python(html: str, deadline: float | None = None) -> HtmlDocument:
    """Build the tree of `html`; raise `ExtractionTimeout` past `deadline` (a `cpu_clock()` value).
    The reference: `_ctree.parse` builds exactly this tree, faster."""
    doc = HtmlDocument()
    root = doc.root
    nodes = doc.nodes
    stack: list[Node] = [root]
    open_count: dict[str, int] = {}  # tag -> how many are on the stack
    skipped: dict[str, int] = {}  # tag -> opened beyond MAX_DEPTH and not yet closed
    flattened: dict[str, int] = {}  # tag -> attribute-less inline elements opened and not closed
    cur = root
    link_level = 0  # while a link is open: the stack length when it opened (its parent's depth + 1)
    pre_seen = False  # whether a <pre> was opened (only then can whitespace be kept as written)
    pos = 0
    n = len(html)
    if "\0" in html:
        html = html.replace("\0", "")
        n = len(html)
    scanner = TEXT_TOKEN.scanner  # type: ignore[attr-defined]  # re.Pattern.scanner: CPython's (untyped) token loop
    tag_info = _TAG_INFO
    count = open_count.get
    max_depth = MAX_DEPTH
    raw_end_search = _RAW_END_SEARCH.get
    check_mask = _CHECK_EVERY - 1

    # Tokens are matched anchored, each with the text before it. A match fails where a "<" starts
    # no token (stray text) and where there is no token left; a raw-text element moves `pos` past its
    # end tag. Either way matching resumes from `pos`. This loop runs once per token of every page:
    # it is written for CPython's speed (locals, one dict lookup per tag, the text case inlined).
    while pos < n:
        m = None
        restart = False
        for i, m in enumerate(iter(scanner(html, pos).match, None)):
            space, text, name, raw = m.groups()
            if not i & check_mask and deadline is not None and cpu_clock() > deadline:
                raise ExtractionTimeout("parsing passed the deadline")
            if space is not None:  # whitespace only, from the match's start to group 1
                cur.children.append(html[m.start():m.start(1)] if pre_seen and count("pre") else " ")
            elif text:  # not whitespace only (that would be `space`); `_append_text` inlined
                if "&" in text:
                    text = decode_text(text)
                c = len(text) - text.count(" ") - text.count("\n")
                cur.text_len += c
                if link_level:
                    text = LinkText(text)
                    cur.link_len += c
                cur.children.append(text)
            if name is None:
                continue  # comment, doctype, bogus comment, "</>"
            tag, action, closes_p, implied, marks = tag_info[name]
            if action >= _END:
                if action == _END_LINK:
                    link_level = 0
                elif skipped and skipped.get(tag):
                    skipped[tag] -= 1
                elif action == _END_BARE and flattened.get(tag):
                    flattened[tag] -= 1
                elif cur.tag == tag:  # the common case: closing the current element (never the root)
                    stack.pop()
                    open_count[tag] -= 1
                    cur.end = len(nodes)
                    parent = cur.parent
                    parent.text_len += cur.text_len  # type: ignore[union-attr]  # only the root has none
                    parent.link_len += cur.link_len  # type: ignore[union-attr]
                    cur = parent  # type: ignore[assignment]
                    if link_level > len(stack):
                        link_level = 0
                elif tag == "br":
                    cur.children.append(BR)
                elif count(tag):
                    cur, link_level = _pop_to(stack, open_count, len(nodes), tag, link_level)
                continue
            if action:
                if action == _LINK:
                    # links are not materialized: their text is marked as LinkText. A nested <a>
                    # ends the open one and starts another, as in browsers.
                    link_level = len(stack)
                    continue
                if action == _BARE:
                    if not raw or raw.isspace():
                        flattened[tag] = flattened.get(tag, 0) + 1  # no attributes: text joins the parent
                        continue
                elif action == _VOID:
                    if tag == "br":
                        cur.children.append(BR)
                    elif tag == "meta":
                        doc.metas.append(parse_attrs(raw))
                    elif tag == "link":
                        doc.links.append(parse_attrs(raw))
                    elif tag == "hr":  # a thematic break ends a block; other void elements carry no text
                        node = Node(tag, raw, cur, len(nodes))
                        nodes.append(node)
                        cur.children.append(node)
                    continue
                elif action == _RAW:
                    pos = m.end()
                    # the common case in one search: the end tag closes at once ("</style>") and,
                    # for a script, no "<!--" before it (escaped script data); else the general walk
                    search = raw_end_search(tag)
                    e = search(html, pos) if search is not None else None
                    if e is not None and e.group(1) and (tag != "script" or html.find("<!--", pos, e.start()) < 0):
                        content_end, end = e.start(), e.end()
                    else:
                        content_end, end = raw_text_end(html, pos, tag)
                    if tag == "script" and "ld+json" in raw.lower():
                        doc.json_ld.append(html[pos:content_end])
                    elif tag == "title" and doc.title is None:
                        doc.title = decode_text(html[pos:content_end]).strip()
                    pos = end
                    restart = True
                    break
                else:  # _STRUCTURE
                    if tag == "html" and doc.lang is None and raw:
                        attrs = parse_attrs(raw)
                        lang = attrs.get("lang") or attrs.get("xml:lang")
                        if lang:
                            doc.lang = lang.strip()
                    continue
            # implied end tags
            if closes_p and count("p") and cur.tag not in _P_BOUNDARY:
                cur, link_level = _close_if_open(stack, open_count, len(nodes), "p", _P_BOUNDARY, link_level)
            if implied is not None:
                if implied is _HEADING_RULE:
                    if cur.tag in _HEADINGS:
                        cur, link_level = _pop_to(stack, open_count, len(nodes), cur.tag, link_level)
                else:
                    for closes, boundary in implied:
                        if count(closes) and cur.tag not in boundary:
                            cur, link_level = _close_if_open(stack, open_count, len(nodes), closes, boundary,
                                                             link_level)
            if len(stack) > max_depth:
                skipped[tag] = skipped.get(tag, 0) + 1
                continue
            node = Node(tag, raw, cur, len(nodes))
            nodes.append(node)
            cur.children.append(node)
            if marks:
                if marks == _MARK_TABLE:
                    # mark the ancestors: a table around another is layout (blocks.is_data_table)
                    for anc in reversed(stack):
                        if anc.flags & TABLE_INSIDE:
                            break
                        anc.flags |= TABLE_INSIDE
                else:
                    pre_seen = True
            if raw and raw[-1] == "/":
                continue  # XHTML-style <div/>: nothing inside
            stack.append(node)
            open_count[tag] = count(tag, 0) + 1
            cur = node
        if restart:
            continue
        if m is not None:
            pos = m.end()
        # No complete token at the next "<". Either it starts none ("<" before a space, a digit,
        # the end: text, as in the standard's tag open state), or it starts a tag, comment or
        # declaration that the end of the input cuts short: the standard drops that to the end.
        lt = html.find("<", pos)
        if lt < 0:
            break
        nxt = html[lt + 1 : lt + 2]
        if nxt.isascii() and nxt.isalpha() or nxt in ("!", "?") and nxt or nxt == "/" and lt + 2 < n:
            if lt > pos and not html[pos:lt].isspace():
                _append_text(cur, html[pos:lt], link_level)
            pos = n
            break
        _append_text(cur, html[pos : lt + 1], link_level)
        pos = lt + 1
    if pos < n and not html[pos:].isspace():
        _append_text(cur, html[pos:], link_level)
    while len(stack) > 1:  # elements left open at the end close here
        _close(stack.pop(), len(nodes))
    root.end = len(nodes)
    return doc


def _append_text(cur: Node, text: str, link_level: int) -> None:
    """A text run (not whitespace only) as a child of `cur`: entities decoded, its non-space
    characters counted, and marked as link text inside a link."""
    if "&" in text:
        text = decode_text(text)
    c = len(text) - text.count(" ") - text.count("\n")
    cur.text_len += c
    if link_level:
        text = LinkText(text)
        cur.link_len += c
    cur.children.append(text)


def _close(node: Node, end: int) -> None:
    """Sum the closed element's text and link lengths into its parent and set its subtree end: done
    as the element closes, when its subtree is complete (no second pass over the nodes)."""
    node.end = end
    parent = node.parent
    assert parent is not None  # the root is never closed
    parent.text_len += node.text_len
    parent.link_len += node.link_len


def _pop_to(stack: list[Node], open_count: dict[str, int], end: int, tag: str, link_level: int) -> tuple[Node, int]:
    """Close elements up to the innermost open `tag`; the new current element and link level."""
    while len(stack) > 1:
        node = stack.pop()
        open_count[node.tag] -= 1
        _close(node, end)
        if node.tag == tag:
            break
    if link_level > len(stack):
        link_level = 0  # the link's parent closed, and the link with it
    return stack[-1], link_level


def _close_if_open(stack: list[Node], open_count: dict[str, int], end: int, tag: str, boundary: frozenset[str],
                   link_level: int) -> tuple[Node, int]:
    """Close an open `tag` unless a `boundary` element is nearer (the implied end tags)."""
    for i in range(len(stack) - 1, 0, -1):
        t = stack[i].tag
        if t == tag:
            return _pop_to(stack, open_count, end, tag, link_level)
        if t in boundary:
            break
    return stack[-1], link_level


_P_BOUNDARY = frozenset("div td th li table body section article blockquote button dd dt".split())
_LI_BOUNDARY = frozenset(("ul", "ol", "menu", "table", "div"))
_CELL_BOUNDARY = frozenset(("tr", "table"))
_ROW_BOUNDARY = frozenset(("table", "tbody", "thead", "tfoot"))
_DL_BOUNDARY = frozenset(("dl", "table"))
_SELECT_BOUNDARY = frozenset(("select", "datalist"))
_BARE, _RAW, _VOID, _STRUCTURE, _LINK = 1, 2, 3, 4, 5  # start tags that are not materialized as is
_END, _END_LINK, _END_BARE = 6, 7, 8  # end tags: any, </a>, and a formatting tag's
_KIND: dict[str, int] = {}
for _tag in BARE_INLINE:
    _KIND[_tag] = _BARE
for _tag in RAW_SKIP | {"title"}:
    _KIND[_tag] = _RAW
for _tag in VOID:
    _KIND[_tag] = _VOID
for _tag in IGNORED_STRUCTURE:
    _KIND[_tag] = _STRUCTURE
_KIND["a"] = _LINK
# What the builder does after materializing an element: mark the ancestors of a <table>; note a <pre>.
_MARK_TABLE, _MARK_PRE = 1, 2
_MARKS = {"table": _MARK_TABLE, "pre": _MARK_PRE}
_TagInfo = tuple[str, int, bool, "tuple[tuple[str, frozenset[str]], ...] | None", int]


class _TagTable(dict[str, _TagInfo]):
    """Tag name as the token wrote it ("/" first for an end tag) -> (name lowered, action, closes an
    open <p>, implied end tags, marks): one lookup per tag token. Filled on first sight of a name,
    up to a bound (a page of random names must not grow it without limit)."""

    def __missing__(self, name: str) -> _TagInfo:
        end = name[0] == "/"
        tag = lower_ascii(name[1:] if end else name)
        kind = _KIND.get(tag, 0)
        if end:
            action = _END_LINK if kind == _LINK else _END_BARE if kind == _BARE else _END
        else:
            action = kind
        implied = _IMPLIED_END.get(tag) or (_HEADING_RULE if tag in _HEADINGS else None)
        info = (tag, action, tag in CLOSES_P, implied, _MARKS.get(tag, 0))
        if len(self) < 4096:
            self[name] = info
        return info


_TAG_INFO = _TagTable()
# For each raw-text element that ends (PLAINTEXT never does): a search for its end tag, `tokenizer`'s
# appropriate end tag, with group 1 set when a ">" follows the name at once.
_RAW_END_SEARCH = {
    tag: re.compile(r"</" + tag + r"(?:(>)|(?=[\t\n\f\r /]))", re.I | re.A).search
    for tag in (RAW_SKIP | {"title"}) - {"plaintext"}
}
# Implied end tags of a heading: an open heading that is the current element closes (an <h2> right
# inside an <h1> is its sibling).
_HEADING_RULE: tuple[tuple[str, frozenset[str]], ...] = (("h1-h6", frozenset()),)  # compared by identity


# Opening the key closes an open element of each listed tag, unless a boundary element is nearer.
_IMPLIED_END: dict[str, tuple[tuple[str, frozenset[str]], ...]] = {
    "li": (("li", _LI_BOUNDARY),),
    "td": (("td", _CELL_BOUNDARY), ("th", _CELL_BOUNDARY)),
    "th": (("td", _CELL_BOUNDARY), ("th", _CELL_BOUNDARY)),
    "tr": (("tr", _ROW_BOUNDARY),),
    "dt": (("dt", _DL_BOUNDARY), ("dd", _DL_BOUNDARY)),
    "dd": (("dt", _DL_BOUNDARY), ("dd", _DL_BOUNDARY)),
    "option": (("option", _SELECT_BOUNDARY),),
}


_CTREE = compiled_module("thresher.extract._ctree")
# The compiled tree builder when it is built and not switched off, else the reference.
parse: Callable[..., HtmlDocument] = _CTREE.parse if _CTREE is not None else _parse_python


def release(doc: HtmlDocument) -> None:
    """Cut the parent links, the tree's only reference cycles: the tree is then freed as soon as it is
    no longer referenced, without waiting for the cyclic garbage collector."""
    for node in doc.nodes:
        node.parent = None


def iter_text(node: Node) -> list[str]:
    """Every text string under `node`, in document order, without recursion."""
    out: list[str] = []
    append = out.append
    iters = [iter(node.children)]
    while iters:
        for item in iters[-1]:
            if type(item) is Node:
                iters.append(iter(item.children))
                break
            append(item)  # type: ignore[arg-type]  # not a Node: a text string (`type() is` is the fast test)
        else:
            iters.pop()
    return out


def text_of(node: Node) -> str:
    """The whitespace-collapsed text of a subtree (inline children concatenated as rendered)."""
    return " ".join("".join(iter_text(node)).split())
