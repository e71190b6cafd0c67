"""Boilerplate marking: flags the subtrees of a page that are not its text `blocks.REMOVED`.

Non-text tags, page furniture (`nav`, `aside`, `footer`, a site `header`, ARIA landmark roles),
hidden elements, class/id vocabulary (comments, share bars, cookie banners, related links, ads...),
and small `<article>` cards beside the main article. A marked subtree that holds most of the page's
text or paragraphs is kept: some sites put such classes on the wrapper of their main column.
"""

from __future__ import annotations

from typing import Literal

from thresher.extract.base import ExtractionTimeout, cpu_clock
from thresher.extract.blocks import REMOVED
from thresher.extract.hints import (
    COMMENTS,
    CONSENT,
    DROP_TAGS,
    FURNITURE_ROLES,
    FURNITURE_TAGS,
    POSITIVE,
    STRONG_NEGATIVE,
    STRONG_NOT_COMMENTS,
    WEAK_NEGATIVE,
    StringMemo,
    class_id,
    is_hidden,
    role,
    tokens_of,
)
from thresher.extract.metadata import page_description
from thresher.extract.region import container_bonus, declared_body_inside
from thresher.extract.tree import BR, HtmlDocument, Node, text_of

# A marked subtree holding more than this share of the page's text is a page wrapper, not furniture.
_WRAPPER_SHARE = 0.5
# Weak class words (sidebar, widget, header...) remove only subtrees holding less than this share.
_WEAK_SHARE = 0.3
_CONTENT_MASS_SHARE = 0.35
# Paragraph characters that make a box with a weak furniture word (or a <header>) content.
_STANDFIRST_CHARS = 150
# An <article> with less than this share of the largest one's text, outside it, is a feed card.
_CARD_SHARE = 0.3
# ... if it has a linked title (a heading that is mostly link text, `_has_linked_heading`), or is
# mostly links: a feed card names and links its item. A landing page's intro section under a plain
# heading is an `<article>` of its own (trafilatura-eval: a product-test page whose only wanted text
# was such an intro beside larger `<article>`s), and so is each content element of a page a CMS
# writes as an `<article>` (TYPO3: a page's lead was lost that way), or a recipe's ingredients box.
_HEADING_TAGS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))
# Nodes marked between two looks at the deadline.
_CHECK_EVERY = 4096
# -- class words and paragraph mass (`mark_boilerplate`) ------------------------------------------
# Constants with a "sweep" note were calibrated as `scoring`'s are (see the note there).
# Characters that make a paragraph count toward a box's protection (`paragraph_mass`).
_MIN_PARAGRAPH_CHARS = 80
# Line breaks that make an element's own text a paragraph (a post written with <br>), for the
# weak-class-word protection only. Measured on the three sets: 2 gives 0.9236 on trafilatura-eval,
# 8 gives 0.9241 (0.9235 without the rule); AEB and readability do not move.
_MIN_LINE_BREAKS = 8
# Paragraph characters that protect a box from its class words, at least (the share
# `_CONTENT_MASS_SHARE` of the page's paragraph mass is the other bound).
_MIN_CONTENT_MASS = 400  # sweep: 250: -0.0006, 600: -0.0010 trafilatura-eval
# When the selection keeps fewer than `builtin._DESCRIPTION_RETRY_MAX_KEPT` characters, the page's own
# description (`<meta name=description>`, og:description) of at least `_DESCRIPTION_MIN_CHARS`,
# found as the whole text of an element, marks that element as the page's text: the subtrees around
# it are kept whatever their class words say (but comment and consent words), and the region is
# chosen again. A video page whose only text is its description, in an `item-caption` box, otherwise
# loses to its player's buttons (trafilatura-eval). Only then: on a page with an article, a blog's
# description in its header is not the post, nor an article's standfirst in a furniture box part
# of it (applied to every page, it cost two trafilatura-eval pages their precision). Shorter
# descriptions ("PDF: slides") match too much by chance.
_DESCRIPTION_MIN_CHARS = 100
# Node flag (beside `blocks.REMOVED` 1, `tree.TABLE_INSIDE` 2, `comments._THREAD_SKIP` 8): inside the
# element that holds the page's description.
DESCRIBED = 16
# A consent banner is removed even as a wrapper unless it holds this share of the page's text.
_CONSENT_WRAPPER_SHARE = 0.9
# A box with a furniture word and a content word too is kept above this share of the page's text or
# this many characters.
_MIXED_WORDS_SHARE = 0.15
_MIXED_WORDS_CHARS = 1000
# The page's article body is its largest run of paragraphs under one parent. When that run holds at
# least `_MIN_CONTENT_MASS` characters and `_DOMINANT_GROUP_RATIO` times the next largest run, no box
# around it is furniture for a class word (but comment and consent words): a news site that opens
# its article in a `render-target-modal` layer over a stream of teasers (Readability's yahoo-2) has
# no other run of paragraphs, while a real pop-up or sign-up box holds one or two short ones. A
# hidden wrapper outside it goes even when it holds most of the page's text (that site's stream,
# `aria-hidden` behind the open article).
_DOMINANT_GROUP_RATIO = 2.0


def paragraph_mass(doc: HtmlDocument) -> tuple[list[int], list[int]]:
    """Per node: characters of link-poor paragraphs in its subtree, twice: `<p>` elements of
    `_MIN_PARAGRAPH_CHARS`+ characters; and those plus that much text written directly in an
    element between `<br>`s (posts written that way, as Blogger writes them, have no `<p>`)."""
    nodes = doc.nodes
    mass = [0] * len(nodes)
    with_breaks = [0] * len(nodes)
    for node in reversed(nodes):
        i = node.index
        m = mass[i]
        w = with_breaks[i]
        if node.text_len >= _MIN_PARAGRAPH_CHARS:
            if node.tag == "p":
                if node.link_len * 3 < node.text_len:
                    m += node.text_len - node.link_len
                    w += node.text_len - node.link_len
            elif BR in node.children:
                own = breaks = 0
                for c in node.children:
                    if type(c) is str:
                        if c == BR:
                            breaks += 1
                        else:
                            own += len(c)
                if breaks >= _MIN_LINE_BREAKS and own >= _MIN_PARAGRAPH_CHARS:
                    w += own
        if w:
            mass[i] = m
            with_breaks[i] = w
            parent = node.parent
            if parent is not None:
                j = parent.index
                mass[j] += m
                with_breaks[j] += w
    return mass, with_breaks



def dominant_group(doc: HtmlDocument) -> Node | None:
    """The parent of the page's dominant run of paragraphs (`_DOMINANT_GROUP_RATIO`), or None when
    no run dominates."""
    groups: dict[int, int] = {}
    for node in doc.nodes:
        if node.tag == "p" and node.text_len >= _MIN_PARAGRAPH_CHARS and node.link_len * 3 < node.text_len:
            parent = node.parent
            if parent is not None:
                groups[parent.index] = groups.get(parent.index, 0) + node.text_len - node.link_len
    if not groups:
        return None
    ranked = sorted(groups.items(), key=lambda kv: (-kv[1], kv[0]))
    top, top_mass = ranked[0]
    if top_mass < _MIN_CONTENT_MASS or len(ranked) > 1 and top_mass < _DOMINANT_GROUP_RATIO * ranked[1][1]:
        return None
    return doc.nodes[top]


def dominant_group_inside(doc: HtmlDocument) -> list[bool] | None:
    """Per node: whether it holds the page's dominant run of paragraphs (`dominant_group`); None
    when no run dominates."""
    up = dominant_group(doc)
    if up is None:
        return None
    inside = [False] * len(doc.nodes)
    while up is not None:
        inside[up.index] = True
        up = up.parent
    return inside


def described_inside(doc: HtmlDocument) -> list[bool] | None:
    """Per node: whether it holds an element whose whole text is the page's declared description
    (`_DESCRIPTION_MIN_CHARS`+); None when there is no such element. That element's subtree is
    flagged `DESCRIBED`."""
    description = page_description(doc)
    if description is None or len(description) < _DESCRIPTION_MIN_CHARS:
        return None
    want = len(description) - description.count(" ")
    target = " ".join(description.split())
    found = None
    for node in doc.nodes[1:]:
        # text_len counts what is not a space or a newline: a cheap test before the text compare
        if node.text_len == want and node.tag not in DROP_TAGS and text_of(node) == target:
            found = node
            break
    if found is None:
        return None
    for i in range(found.index, found.end):
        doc.nodes[i].flags |= DESCRIBED
    inside = [False] * len(doc.nodes)
    up: Node | None = found
    while up is not None:
        inside[up.index] = True
        up = up.parent
    return inside


def _class_verdict(ci: str) -> tuple[bool, bool, bool, bool, bool]:
    """(strong furniture word, weak furniture word, content word, never content, a comment thread
    and nothing else) for a class+id; remembered, a pure function of a string that repeats."""
    return _VERDICT_MEMO[ci]  # type: ignore[no-any-return]


def _class_verdict_of(ci: str) -> tuple[bool, bool, bool, bool, bool]:
    low, tokens = tokens_of(ci)
    strong = STRONG_NEGATIVE.search(low, tokens)
    weak = not strong and WEAK_NEGATIVE.search(low, tokens)
    if not (strong or weak):
        return False, False, False, False, False
    comments = COMMENTS.search(low, tokens)
    comment_only = comments and not STRONG_NOT_COMMENTS.search(low, tokens) and not weak
    return strong, weak, POSITIVE.search(low, tokens), comments or CONSENT.search(low, tokens), comment_only


_VERDICT_MEMO = StringMemo(_class_verdict_of)


def mark_boilerplate(doc: HtmlDocument, deadline: float | None = None, keep_noscript: bool = False,
                     keep_threads: bool = False, described: list[bool] | None = None) -> int:
    """Flag boilerplate subtrees `REMOVED`. Returns the characters of the outermost subtrees
    removed only for naming a comment thread; `keep_threads` keeps those instead (a forum or a
    live ticker whose posts are the page). Nodes flagged in `described` (`described_inside`) are not
    removed for class words other than comment and consent words."""
    total = doc.root.text_len or 1
    thread_chars = 0
    mass, text_mass = paragraph_mass(doc)
    # A subtree holding this much of the page's paragraph text is content whatever its class says
    # (`banners-contenido-nota`, a "sticky sidebar" plugin on the main column).
    content_mass = max(_MIN_CONTENT_MASS, _CONTENT_MASS_SHARE * mass[0])
    # a structured-data hint outranks weak class words: Blogger's `date-outer` wrapper holds the
    # post whose body says itemprop=articleBody
    body_inside = declared_body_inside(doc)
    dominant = dominant_group_inside(doc)
    # (`text_mass` counts posts written with <br>: it protects a box from weak class words only; a
    # site <header> or a form with address lines is not a standfirst)
    verdicts: dict[str, tuple[bool, bool, bool, bool, bool]] = {}
    group_mass: dict[int, dict[tuple[str, str], int]] = {}  # parent -> (tag, first class) -> mass
    by_raw: dict[str, str | Literal[False]] = {}  # attribute text -> False (hidden or a furniture role) or its class_id
    ticks = 0
    for node in doc.nodes[1:]:
        ticks += 1
        if ticks >= _CHECK_EVERY:
            ticks = 0
            if deadline is not None and cpu_clock() > deadline:
                raise ExtractionTimeout("cleaning passed the deadline")
        parent = node.parent
        if parent is not None and parent.flags & REMOVED:
            node.flags |= REMOVED
            continue
        tag = node.tag
        if tag in DROP_TAGS:
            if not (keep_noscript and tag == "noscript"):
                node.flags |= REMOVED
            continue
        share = node.text_len / total
        if share > _WRAPPER_SHARE and tag == "aside" and not body_inside[node.index] and role(node) == "complementary":
            # a sidebar that says so twice (tag and role) is no wrapper, even when its live ticker
            # holds more text than the article (liberation.fr); an <aside> alone is, now and then
            node.flags |= REMOVED
            continue
        if share > _WRAPPER_SHARE and dominant is not None and not dominant[node.index] and is_hidden(node):
            # the page behind a layer that holds the article (a stream marked aria-hidden while the
            # article is open over it): hidden, and the page's dominant run of paragraphs is elsewhere
            node.flags |= REMOVED
            continue
        if share > _WRAPPER_SHARE:
            if share < _CONSENT_WRAPPER_SHARE and node.raw_attrs and CONSENT.search(*tokens_of(class_id(node))):
                node.flags |= REMOVED
            continue
        if tag == "form" and mass[node.index] < content_mass:
            node.flags |= REMOVED  # sign-up, search and comment forms (a page-wide form is a wrapper, kept above)
            continue
        if tag in FURNITURE_TAGS:
            # an article's own <header> carries its standfirst: a real paragraph, unlike a site header
            if not (tag == "header" and mass[node.index] >= _STANDFIRST_CHARS):
                node.flags |= REMOVED
            continue
        raw = node.raw_attrs
        if not raw:
            continue
        # hidden, role and class/id depend on the attribute text alone, which repeats: judge each once
        ci = by_raw.get(raw)
        if ci is None:
            ci = by_raw[raw] = False if is_hidden(node) or role(node) in FURNITURE_ROLES else class_id(node)
        if ci is False:
            node.flags |= REMOVED
            continue
        if not ci:
            continue
        verdict = verdicts.get(ci)
        if verdict is None:
            verdict = verdicts[ci] = _class_verdict(ci)
        strong, weak, positive, protected, comment_only = verdict
        if described is not None and described[node.index] and not protected:
            continue  # holds the page's declared description: the text, whatever the box is called
        if weak and (text_mass[node.index] >= _STANDFIRST_CHARS or body_inside[node.index]):
            continue  # a weak word (widget, header, read-more) on a box that holds real paragraphs
        if strong or (weak and share <= _WEAK_SHARE):
            if positive and not comment_only and (share > _MIXED_WORDS_SHARE or node.text_len > _MIXED_WORDS_CHARS):
                continue
            if not protected and (mass[node.index] >= content_mass or dominant is not None and dominant[node.index]):
                continue
            if not protected and parent is not None and _sibling_group_mass(
                    node, parent, mass, group_mass) >= content_mass and container_bonus(parent) > 0:
                continue  # one of the sections of the article (`TestReport__Section--Ads` on each)
            if comment_only:
                if keep_threads:
                    continue
                thread_chars += node.text_len
            node.flags |= REMOVED
    return thread_chars


def _first_class(node: Node) -> str:
    names = class_id(node).split(None, 1) if node.raw_attrs else None
    return names[0] if names else ""


def _sibling_group_mass(node: Node, parent: Node, mass: list[int],
                        cache: dict[int, dict[tuple[str, str], int]]) -> int:
    """Paragraph mass of `node` and its siblings of the same tag and first class name: an article
    cut into sections that each carry a furniture word is content as a whole, though no section
    alone holds enough text to be protected. (Only counted inside a container that names itself
    the text, `container_bonus`: a sidebar's row of text widgets is not an article.)"""
    first = _first_class(node)
    if not first:
        return 0
    groups = cache.get(parent.index)
    if groups is None:
        # every group of the parent's children in one pass: a page of thousands of boxes with
        # thousands of distinct first class names would otherwise rescan the siblings per name
        groups = cache[parent.index] = {}
        for c in parent.children:
            if c.__class__ is Node and c.raw_attrs:
                c_first = _first_class(c)
                if c_first:
                    key = (c.tag, c_first)
                    groups[key] = groups.get(key, 0) + mass[c.index]
    return groups.get((node.tag, first), 0)


def mark_article_cards(doc: HtmlDocument) -> None:
    """Several `<article>` elements: the small ones beside the main one are cards of a feed
    ("more stories", "related"), each an independent item by the element's own definition."""
    articles = [n for n in doc.nodes if n.tag == "article" and not n.flags & REMOVED]
    if len(articles) < 2:
        return
    main = max(articles, key=lambda n: n.text_len)
    nodes = doc.nodes
    series = _series_of(nodes, main)
    reference = main.text_len
    body = dominant_group(doc)
    # the page's article body is no <article> at all: every <article> is a card beside it (a blog
    # post followed by a "more posts" row of linked titles), measured against that body
    body_outside = body is not None and not body.flags & REMOVED and not any(a.contains(body) for a in articles)
    if body_outside:
        series = ""
        reference = max(reference, body.text_len)  # type: ignore[union-attr]
    for node in articles:
        if not body_outside and (node is main or node.contains(main) or main.contains(node)):
            continue
        if series and node.parent is main.parent and _first_class(node) == series:
            continue  # another post of the thread the main one opens
        if node.text_len < _CARD_SHARE * reference and node.link_len and _has_linked_heading(nodes, node):
            node.flags |= REMOVED
            for i in range(node.index + 1, node.end):
                doc.nodes[i].flags |= REMOVED


def _series_of(nodes: list[Node], main: Node) -> str:
    """The first class name that makes the `<article>`s beside the main one more items of its kind,
    or "": when the main article itself sits under a linked heading (a forum post under its author's
    linked name: trafilatura-eval's XenForo thread lost its shorter replies as feed cards), a linked
    heading marks no card, and its siblings of the same first class are the thread's other posts."""
    return _first_class(main) if _holds_linked_heading(nodes, main) else ""


def _has_linked_heading(nodes: list[Node], node: Node) -> bool:
    """`node` holds a heading that is mostly link text (a card's title, linking to its item), or
    is mostly link text itself."""
    return node.link_len * 2 > node.text_len or _holds_linked_heading(nodes, node)


def _holds_linked_heading(nodes: list[Node], node: Node) -> bool:
    """`node` holds a heading that is mostly link text."""
    for i in range(node.index + 1, node.end):
        n = nodes[i]
        if n.tag in _HEADING_TAGS and n.link_len * 2 > n.text_len:
            return True
    return False
