"""Region choice: the subtree of a page that holds its main content.

The main content is the subtree with the largest total goodness (a maximum-sum subtree, so text
split across sibling containers stays together while a link-heavy sidebar does not), with a bonus
for containers that name themselves as the text; it moves into a child holding nearly all of its
positive mass, widens to a set of panes it is one of, and takes in a lead paragraph set just before it.
"""

from __future__ import annotations

from itertools import compress

from thresher.extract.blocks import Block
from thresher.extract.hints import CONTENT_CONTAINER, PANE_SET, class_id, tokens_of
from thresher.extract.scoring import ends_sentence
from thresher.extract.tree import HtmlDocument, Node

# Selection moves into a child that holds this share of the positive goodness of its parent.
# Calibrated on AEB and the trafilatura set together: F1 on both is flat from 0.93 to 0.99.
_DESCEND_SHARE = 0.97
# Furniture inside a region is filtered block by block later, so it counts against a region at a
# discount: flat containers (wiki pages, CMS bodies with inline link lists) are still chosen whole.
# (0.3 to 0.7 measure within 0.002 F1 of each other on both sets.)
_NEGATIVE_WEIGHT = 0.5
# A region with less than this share of the page's positive goodness is not the main content.
_MIN_REGION_SHARE = 0.2
# How many paragraphs beside the region may join it on each side.
_MAX_NEIGHBOURS = 3
# Elements that hold a paragraph, not a region: the selection is always a container around them.
_NOT_REGIONS = frozenset(
    "p h1 h2 h3 h4 h5 h6 li pre dt dd figcaption caption tr a b i em strong span small font blockquote q code".split()
)
# -- region choice (`best_subtree`) ----------------------------------------------------------------
# Constants with a "sweep" note were calibrated as `scoring`'s are (see the note there).
# Share of its positive goodness an element declaring itself the article body gains.
_DECLARED_BODY_BONUS = 0.5
# ... an <article>, a <main>, a content-like class or id (added to the tag's).
_ARTICLE_BONUS = 0.15
_MAIN_BONUS = 0.1
_CONTENT_CLASS_BONUS = 0.25
# A container earns its self-naming bonus only when it holds this share of the page's positive
# goodness (a small `<article>` card must not win on its bonus alone).
_BONUS_MIN_SHARE = 0.2  # sweep: 0.1 and 0.3: no change
# A winner below `_MIN_REGION_SHARE` climbs to the smallest ancestor holding this share.
_CLIMB_TO_SHARE = 0.5  # sweep: 0.35 and 0.65: no change
# A region within this many levels below a set of panes shown one at a time (`hints.PANE_SET`:
# tabs, a carousel, an accordion) widens to the whole set: the page shows one pane at a time, but
# each is part of the same item (trafilatura-eval: a product's "details" tab lost to its "prices"
# tab, a recipe's ingredients slide to its steps slide).
_PANE_SET_LEVELS = 4
_BODY_ITEMPROPS = frozenset(("articlebody", "text", "articletext", "reviewbody"))


def declares_body(node: Node) -> bool:
    """The element says it is the main text: `itemprop=articleBody` (one of several itemprop
    tokens, as Blogger writes "description articleBody"), `role=main` or `<main>`."""
    if node.tag == "main":
        return True
    raw = node.raw_attrs
    if not raw or ("itemprop" not in raw and "role" not in raw):
        return False
    attrs = node.attrs
    if any(t in _BODY_ITEMPROPS for t in attrs.get("itemprop", "").lower().split()):
        return True
    return attrs.get("role", "").strip().lower() == "main"


def declared_body_inside(doc: HtmlDocument) -> list[bool]:
    """Per node: whether it or a descendant declares itself the main text (`declares_body`)."""
    inside = [False] * len(doc.nodes)
    for node in doc.nodes:
        raw = node.raw_attrs
        if node.tag == "main" or raw and ("itemprop" in raw or "role" in raw) and declares_body(node):
            # it and its ancestors, up to one already marked (its ancestors are too)
            up: Node | None = node
            while up is not None and not inside[up.index]:
                inside[up.index] = True
                up = up.parent
    return inside


def container_bonus(node: Node) -> float:
    """Share of its own positive goodness a node gains (not passed to ancestors) for naming itself
    as the main text: itemprop=articleBody, content-like class/id, <article>, <main>."""
    bonus = 0.0
    if node.tag == "article":
        bonus = _ARTICLE_BONUS
    elif node.tag == "main":
        bonus = _MAIN_BONUS
    if node.raw_attrs:
        attrs = node.attrs
        if any(t in _BODY_ITEMPROPS for t in attrs.get("itemprop", "").lower().split()):
            return _DECLARED_BODY_BONUS
        ci = class_id(node)
        if ci and CONTENT_CONTAINER.search(ci):
            bonus += _CONTENT_CLASS_BONUS
    return bonus



def best_subtree(doc: HtmlDocument, blocks: list[Block], scores: list[float], use_bonus: bool = True) -> Node:
    """The node whose subtree has the largest total block score (the deepest one on ties)."""
    nodes = doc.nodes
    acc = [0.0] * len(nodes)
    pos = [0.0] * len(nodes)
    for b, s in zip(blocks, scores, strict=True):
        i = b.owner.index
        if s > 0:
            acc[i] += s
            pos[i] += s
        else:
            acc[i] += _NEGATIVE_WEIGHT * s
    # subtree sums, children before parents (adding 0.0 changes no sum, so it is skipped)
    for node in reversed(nodes):
        i = node.index
        a = acc[i]
        p = pos[i]
        if a or p:
            parent = node.parent
            if parent is not None:
                j = parent.index
                acc[j] += a
                pos[j] += p
    best = doc.root
    best_score = acc[0]
    floor = _BONUS_MIN_SHARE * pos[0]
    # only nodes with a non-zero sum can win (most nodes hold no block): picked out in C
    for i in compress(range(len(nodes)), acc):
        s = acc[i]
        node = nodes[i]
        if s <= 0 or node.tag in _NOT_REGIONS:
            continue
        p = pos[i]
        if use_bonus and p > floor:
            s += container_bonus(node) * p
        if s >= best_score:
            best, best_score = node, s
    # Descend while one child holds nearly all of the positive mass: a stray positive block far
    # from the content (a notice, a footer sentence) should not pull the selection up to <body>.
    # A winner holding little of the page's text-like mass lost to furniture inside the real
    # container (a long link list of show notes): climb to the smallest container with half of it.
    if pos[best.index] < _MIN_REGION_SHARE * pos[0]:
        while best.parent is not None and pos[best.index] < _CLIMB_TO_SHARE * pos[0]:
            best = best.parent
    while True:
        total = pos[best.index]
        child = max((c for c in best.children if not isinstance(c, str) and c.tag not in _NOT_REGIONS),
                    key=lambda c: pos[c.index], default=None)
        if child is None or total <= 0 or pos[child.index] < _DESCEND_SHARE * total:
            return best
        best = child


def widen_to_pane_set(doc: HtmlDocument, region: Node) -> Node:
    """The set of tabs, slides or accordion panes the region is one pane of (`_PANE_SET_LEVELS`),
    else the region."""
    node = region
    for _ in range(_PANE_SET_LEVELS):
        node = node.parent  # type: ignore[assignment]
        if node is None or node.parent is None:
            return region
        if node.raw_attrs:
            ci = class_id(node)
            if ci and PANE_SET.search(*tokens_of(ci)) and sum(
                    1 for c in node.children if c.__class__ is Node and c.text_len) >= 2:
                return node
    return region


def _is_lead(b: Block) -> bool:
    return b.kind in ("p", "quote") and b.text_len >= 50 and b.link_density < 0.3 and ends_sentence(b.text)


def extend_to_neighbours(blocks: list[Block], inside: list[bool], region: Node) -> None:
    """Take in the paragraphs just before the region, within its parent: a lead or standfirst set
    apart from the body container. Captions are stepped over; anything else (a heading, a link
    list, a short line) stops. (Extending forward too measured slightly worse on both sets: what
    follows an article body is more often a bio or teaser than more article.)"""
    parent = region.parent
    if parent is None or not any(inside):
        return
    j = inside.index(True) - 1
    taken = 0
    while j >= 0 and taken < _MAX_NEIGHBOURS:
        b = blocks[j]
        if not parent.contains(b.owner):
            break
        if _is_lead(b):
            inside[j] = True
            taken += 1
        elif b.kind != "caption":
            break
        j -= 1
