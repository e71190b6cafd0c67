"""The built-in main-content extractor (standard library only).

1. Parse iteratively (`tree.parse`) and read the page's declared metadata.
2. Mark boilerplate subtrees: non-text tags, page furniture (`nav`, `aside`, `footer`, a site
   `header`, ARIA landmark roles), hidden elements, class/id vocabulary (comments, share bars, cookie
   banners, related links, ads...), and small `<article>` cards beside the main article. A marked
   subtree that holds most of the page's text or paragraphs is kept: some sites put such classes on
   the wrapper of their main column.
3. Cut the page into blocks and give each a goodness: long, sentence-like, link-poor text is
   positive; link lists, teasers (text under a linked heading, excerpts cut with "…") and stock
   phrases are negative. When the page declares an `articleBody` in JSON-LD about as long as its
   text, agreement with it is the goodness instead.
4. The main content is the subtree with the largest total goodness (a maximum-sum subtree, so text
   split across sibling containers stays together while a link-heavy sidebar does not), with a bonus
   for containers that name themselves as the text; it moves into a child holding nearly all of its
   positive mass, and takes in a lead paragraph set just before it.
5. Inside it, drop link lists, captions, stock phrases and trailing furniture; render text or Markdown.
"""

from __future__ import annotations

import gc
import re
from itertools import compress
from typing import Any, Literal

from thresher.extract.base import Extraction, ExtractionTimeout, cpu_clock
from thresher.extract.blocks import REMOVED, Block, segment
from thresher.extract.comments import comment_metadata, find_threads, thread_blocks
from thresher.extract.hints import (
    BOILER_LINE,
    COMMENTS,
    CONSENT,
    CONTENT_CONTAINER,
    DROP_TAGS,
    FURNITURE_ROLES,
    FURNITURE_SENTENCE,
    FURNITURE_TAGS,
    PANE_SET,
    POSITIVE,
    STRONG_NEGATIVE,
    STRONG_NOT_COMMENTS,
    WEAK_NEGATIVE,
    StringMemo,
    class_id,
    is_caption_line,
    is_hidden,
    role,
    tokens_of,
)
from thresher.extract.metadata import (
    article_body_hint,
    declared_text,
    declared_titles,
    extract_metadata,
    page_description,
)
from thresher.extract.tree import BR, HtmlDocument, Node, parse, release, text_of
from thresher.version import __version__

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
_WORD = re.compile(r"\w+")
_HEADING_TAGS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))
# An excerpt cut short: "... para …", "[…]", "[...]" at the end of a block.
_TRUNCATED = re.compile(r"(?:\s(?:…|\.\.\.)|[\[(](?:…|\.\.\.)[\])])\s*$")
_SENTENCE_END = re.compile(r"[.!?…。！？:;\"”»)]\s*$")
# The most characters a match of `_TRUNCATED` holds before its trailing whitespace ("[...]").
_TRUNCATED_CORE_CHARS = 5


def _ends_sentence(text: str) -> bool:
    """`_SENTENCE_END.search(text)`, started where a match can start: at the last character that is
    not whitespace (`str.rstrip` strips exactly the characters that `re` calls whitespace). A search from the
    start tries the character set at every position of a paragraph."""
    return _SENTENCE_END.search(text, max(0, len(text.rstrip()) - 1)) is not None


def _is_truncated(text: str) -> bool:
    """`_TRUNCATED.search(text)`, started at the latest position a match can start: its core ends
    at the last character that is not whitespace and holds at most `_TRUNCATED_CORE_CHARS`."""
    return _TRUNCATED.search(text, max(0, len(text.rstrip()) - _TRUNCATED_CORE_CHARS)) is not None
_CHECK_EVERY = 4096
# Error output of a server script printed into the page ("Warning: Use of undefined constant ... in
# /path/plugin.php on line 928"), often repeated once per widget: long, sentence-like and link-free,
# so it would outscore a short post, but it is never the page's text.
_SERVER_DIAGNOSTIC = re.compile(
    r"^(?:PHP )?(?:Warning|Notice|Deprecated|Fatal error|Parse error|Strict Standards|Catchable fatal error)"
    r"\s*:.*\bon line \d+\s*$", re.M)
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


# -- block goodness (`goodness`, `block_scores`) ---------------------------------------------------
# Each was calibrated by moving it alone to the two values in its "sweep" note and scoring AEB,
# trafilatura-eval and readability with benchmarks/extraction_eval.py's scoring (F1 change against
# the value kept; "no change" = every set within 0.0001). No value tried beats the kept one on every
# set by more than the sets' bootstrap intervals.
# A block whose links hold more than this share of its text is a link list.
_LINK_LIST_DENSITY = 0.5  # sweep: 0.4: -0.0006 on trafilatura-eval; 0.6: no change
# A "heading" longer than this many characters is a styled paragraph: it scores
# `_LONG_HEADING_WEIGHT` per extra character.
_LONG_HEADING_CHARS = 60  # sweep: 40: -0.0001 AEB, -0.0002 trafilatura-eval; 80: no change
_LONG_HEADING_WEIGHT = 0.5
# A data table's text counts at this weight (tables are kept, but should not pull the region).
_TABLE_WEIGHT = 0.3  # sweep: 0.15 and 0.6: no change on any set
# Blocks shorter than this are furniture-like (labels, buttons): they score -_SHORT_BLOCK_PENALTY each char.
_SHORT_BLOCK_CHARS = 25  # sweep: 15: -0.0008 trafilatura-eval; 40: -0.0048 readability
_SHORT_BLOCK_PENALTY = 0.5
# Each character of link text costs this many characters of plain text.
_LINK_PENALTY = 2.0  # sweep: 1.0: -0.0003 AEB; 3.0: -0.0003 trafilatura-eval
# Goodness grows with length up to this many characters (a short paragraph is weak evidence).
_FULL_WEIGHT_CHARS = 150  # sweep: 100: -0.0005 AEB; 250: -0.0010 trafilatura-eval, -0.0030 readability
# A block under this many characters that does not end like a sentence keeps this share of its score.
_FRAGMENT_CHARS = 100
_FRAGMENT_WEIGHT = 0.3  # sweep: 0.15: -0.0032 readability; 0.6: -0.0002 trafilatura-eval
# An excerpt cut with "..." scores this multiple of its goodness (negative: a teaser).
_TRUNCATED_WEIGHT = -0.5  # sweep: -0.25 and -1.0: no change
# ... when the page has at least this many of them: one excerpt alone is a paywalled article's lead
# (its only text), not a list of teasers.
_MIN_TRUNCATED = 2
# Text right after a linked heading, shorter than this, is a teaser and scores `_TEASER_WEIGHT` times
# its goodness.
_TEASER_MAX_CHARS = 500  # sweep: 300: -0.0003, 800: -0.0002 trafilatura-eval
_TEASER_WEIGHT = -0.5  # sweep: -0.25 and -1.0: no change
# Teasers come in lists: below this many linked-heading + short-text pairs on the page, the text
# under a linked title is a lone post. 2 gains 0.0003 F1 on trafilatura-eval; 3 loses 0.0005 on AEB.
_MIN_TEASERS = 2
# A link line inside a `<figure>` ("download the graphic", "enlarge", a photo credit link) is the
# figure's own furniture: it scores 0, not as a link list against the region around it. An article
# illustrated with ten graphics, each with a download link, otherwise loses to its author's bio
# (trafilatura-eval). Owners are looked up this many levels above the block.
_FIGURE_DEPTH = 6
# -- boilerplate marking (`mark_boilerplate`) -------------------------------------------------------
# Characters that make a paragraph count toward a box's protection (`paragraph_mass`).
_MIN_PARAGRAPH_CHARS = 80
# Line breaks that make an element's own text a paragraph (a post written with <br>), for the
# weak-class-word protection only. Measured on the three sets: 2 gives 0.9236 on trafilatura-eval,
# 8 gives 0.9241 (0.9235 without the rule); AEB and readability do not move.
_MIN_LINE_BREAKS = 8
# Paragraph characters that protect a box from its class words, at least (the share
# `_CONTENT_MASS_SHARE` of the page's paragraph mass is the other bound).
_MIN_CONTENT_MASS = 400  # sweep: 250: -0.0006, 600: -0.0010 trafilatura-eval
# Comment threads (removed for their class words alone) are the page's content when they hold at
# least this many characters while the selection beside them keeps fewer than
# `_THREADS_AS_PAGE_MAX_KEPT` characters and less than `_THREADS_AS_PAGE_SHARE` of theirs: a forum
# thread or a live ticker, not an article with comments under it.
_THREADS_AS_PAGE_CHARS = 1000
_THREADS_AS_PAGE_MAX_KEPT = 300
_THREADS_AS_PAGE_SHARE = 0.1
# When the selection keeps fewer than `_DESCRIPTION_RETRY_MAX_KEPT` characters, the page's own
# description (`<meta name=description>`, og:description) of at least `_DESCRIPTION_MIN_CHARS`,
# found as the whole text of an element, marks that element as the page's text: the subtrees around
# it are kept whatever their class words say (but comment and consent words), and the region is
# chosen again. A video page whose only text is its description, in an `item-caption` box, otherwise
# loses to its player's buttons (trafilatura-eval). Only then: on a page with an article, a blog's
# description in its header is not the post, nor an article's standfirst in a furniture box part
# of it (applied to every page, it cost two trafilatura-eval pages their precision). Shorter
# descriptions ("PDF: slides") match too much by chance.
_DESCRIPTION_MIN_CHARS = 100
_DESCRIPTION_RETRY_MAX_KEPT = 300
# Node flag (beside `blocks.REMOVED` 1, `tree.TABLE_INSIDE` 2, `comments._THREAD_SKIP` 8): inside the
# element that holds the page's description.
DESCRIBED = 16
# A consent banner is removed even as a wrapper unless it holds this share of the page's text.
_CONSENT_WRAPPER_SHARE = 0.9
# A box with a furniture word and a content word too is kept above this share of the page's text or
# this many characters.
_MIXED_WORDS_SHARE = 0.15
_MIXED_WORDS_CHARS = 1000
# -- region choice (`best_subtree`) ----------------------------------------------------------------
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
# A page whose selection keeps less than this share of the text its JSON-LD declares (an article's
# `articleBody`, a HowTo's or Recipe's description and steps: `metadata.declared_text`), when that
# is at least `_DECLARED_TEXT_MIN_CHARS` long, renders its text in the browser: the declared text is
# the content (trafilatura-eval: a DIY page whose steps exist only as script data, beside an
# "outdated browser" notice).
_DECLARED_TEXT_SHARE = 0.25
_DECLARED_TEXT_MIN_CHARS = 500
# -- final filtering (`filter_blocks`) -------------------------------------------------------------
# Link density above which a kept block is dropped (tables hold more links legitimately).
_MAX_KEPT_LINK_DENSITY = 0.5  # sweep: 0.4: -0.0024 AEB, -0.0020 readability; 0.6: +0.0007 AEB, +0.0006 readability, -0.0001 trafilatura-eval (inside the bootstrap intervals: not moved)
_MAX_KEPT_TABLE_LINK_DENSITY = 0.6
# A region that names itself the post (`container_bonus`) with at least this many characters, of
# which the link-density filter would keep less than this share, is a post made of links: its
# links are kept.
_LINK_POST_MIN_CHARS = 500
_LINK_POST_KEPT_SHARE = 0.1
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
    # (`text_mass` counts posts written with <br>: it protects a box from weak class words only; a
    # site <header> or a form with address lines is not a standfirst)
    verdicts: dict[str, tuple[bool, bool, bool, bool, bool]] = {}
    group_mass: dict[tuple[int, str, str], int] = {}  # class names repeat: match each once
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
            if positive and (share > _MIXED_WORDS_SHARE or node.text_len > _MIXED_WORDS_CHARS):
                continue
            if mass[node.index] >= content_mass and not protected:
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


def _sibling_group_mass(node: Node, parent: Node, mass: list[int], cache: dict[tuple[int, str, str], int]) -> int:
    """Paragraph mass of `node` and its siblings of the same tag and first class name: an article
    cut into sections that each carry a furniture word is content as a whole, though no section
    alone holds enough text to be protected. (Only counted inside a container that names itself
    the text, `container_bonus`: a sidebar's row of text widgets is not an article.)"""
    first = _first_class(node)
    if not first:
        return 0
    key = (parent.index, node.tag, first)
    total = cache.get(key)
    if total is None:
        total = 0
        for c in parent.children:
            if c.__class__ is Node and c.tag == node.tag and c.raw_attrs and _first_class(c) == first:  # type: ignore[union-attr]
                total += mass[c.index]  # type: ignore[union-attr]
        cache[key] = total
    return total


def mark_article_cards(doc: HtmlDocument) -> None:
    """Several `<article>` elements: the small ones beside the main one are cards of a feed
    ("more stories", "related"), each an independent item by the element's own definition."""
    articles = [n for n in doc.nodes if n.tag == "article" and not n.flags & REMOVED]
    if len(articles) < 2:
        return
    main = max(articles, key=lambda n: n.text_len)
    nodes = doc.nodes
    for node in articles:
        if node is main or node.contains(main) or main.contains(node):
            continue
        if node.text_len < _CARD_SHARE * main.text_len and node.link_len and _has_linked_heading(nodes, node):
            node.flags |= REMOVED
            for i in range(node.index + 1, node.end):
                doc.nodes[i].flags |= REMOVED


def _has_linked_heading(nodes: list[Node], node: Node) -> bool:
    """`node` holds a heading that is mostly link text (a card's title, linking to its item), or
    is mostly link text itself."""
    if node.link_len * 2 > node.text_len:
        return True
    for i in range(node.index + 1, node.end):
        n = nodes[i]
        if n.tag in _HEADING_TAGS and n.link_len * 2 > n.text_len:
            return True
    return False


def _threads_are_the_page(chosen: list[Block], thread_chars: int) -> bool:
    """The selection beside the removed comment threads is no article: a few lines (a "log in to
    comment" form, a match timeline) next to thousands of characters of posts."""
    kept = sum(b.text_len for b in chosen)
    return kept < _THREADS_AS_PAGE_MAX_KEPT and kept < _THREADS_AS_PAGE_SHARE * thread_chars


def goodness(b: Block) -> float:
    """How much a block looks like main-content text (positive) or furniture (negative)."""
    n = b.text_len
    ld = b.link_density
    if ld > _LINK_LIST_DENSITY:
        return -float(n)
    if b.kind == "heading":
        return _LONG_HEADING_WEIGHT * (n - _LONG_HEADING_CHARS) if n > _LONG_HEADING_CHARS else 0.0
    if b.kind == "table":
        return _TABLE_WEIGHT * n * (1.0 - ld)
    if " on line " in b.text and is_server_diagnostic(b.text):
        return -float(n)
    if n < _SHORT_BLOCK_CHARS:
        return -_SHORT_BLOCK_PENALTY * n
    score = n * (1.0 - _LINK_PENALTY * ld)
    if n < _FULL_WEIGHT_CHARS:
        score *= n / _FULL_WEIGHT_CHARS
    if not _ends_sentence(b.text) and n < _FRAGMENT_CHARS:
        score *= _FRAGMENT_WEIGHT
    return score


def is_server_diagnostic(text: str) -> bool:
    """Every line of the block is a script's error message (`_SERVER_DIAGNOSTIC`)."""
    lines = [line for line in text.split("\n") if line.strip()]
    return bool(lines) and len(_SERVER_DIAGNOSTIC.findall(text)) >= len(lines)


def _in_figure(node: Node) -> bool:
    """`node` is a `<figure>` or lies within `_FIGURE_DEPTH` levels below one."""
    for _ in range(_FIGURE_DEPTH):
        if node.tag == "figure":
            return True
        parent = node.parent
        if parent is None:
            return False
        node = parent
    return False


def block_scores(blocks: list[Block]) -> list[float]:
    """Goodness of every block, in context: text right after a linked heading is a teaser, when
    the page has a list of them (a lone post under its linked title is the post)."""
    scores = [goodness(b) for b in blocks]
    for i, s in enumerate(scores):
        if s < 0 and _in_figure(blocks[i].owner):
            scores[i] = 0.0
    # excerpts cut with "...": teasers when the page lists several, a paywalled article's lead alone
    cut = [i for i, b in enumerate(blocks) if scores[i] > 0 and b.kind not in ("table", "heading") and _is_truncated(b.text)]
    if len(cut) >= _MIN_TRUNCATED:
        for i in cut:
            scores[i] *= _TRUNCATED_WEIGHT
    teasers = []
    after_linked_heading = False
    for i, b in enumerate(blocks):
        if b.kind == "heading":
            after_linked_heading = b.link_density > _LINK_LIST_DENSITY
        elif after_linked_heading:
            if b.text_len < _TEASER_MAX_CHARS and scores[i] > 0:
                teasers.append(i)
            after_linked_heading = False
    if len(teasers) >= _MIN_TEASERS:
        for i in teasers:
            scores[i] *= _TEASER_WEIGHT
    return scores


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


def _tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _hint_scores(blocks: list[Block], hint: str) -> tuple[list[float], list[float]]:
    """Per block: goodness from agreement with the declared article body, and the agreeing share."""
    vocab = set(_tokens(hint))
    scores: list[float] = []
    shares: list[float] = []
    for b in blocks:
        toks = _tokens(b.text)
        if not toks:
            scores.append(0.0)
            shares.append(0.0)
            continue
        hit = sum(1 for t in toks if t in vocab)
        share = hit / len(toks)
        shares.append(share)
        scores.append(hit - 2.0 * (len(toks) - hit) if b.kind != "heading" else 0.0)
    return scores, shares


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
                    1 for c in node.children if c.__class__ is Node and c.text_len) >= 2:  # type: ignore[union-attr]
                return node
    return region


def _is_lead(b: Block) -> bool:
    return b.kind in ("p", "quote") and b.text_len >= 50 and b.link_density < 0.3 and _ends_sentence(b.text)


def _extend_to_neighbours(blocks: list[Block], inside: list[bool], region: Node) -> None:
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


def _norm(text: str) -> str:
    return " ".join(_tokens(text))


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
        b.kind in ("p", "caption") and b.text_len < _TRAILING_LINE_CHARS and not _ends_sentence(b.text))


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
        if b.kind == "p" and b.text_len < _CAPTION_LINE_MAX_CHARS and (
                is_caption_line(b.text) or FURNITURE_SENTENCE.search(b.text)):
            continue  # a caption written as a paragraph, a post footer, a rights notice
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


class BuiltinExtractor:
    """Main content, title and metadata of a page, standard library only. See the module docstring."""

    name = "builtin"

    def __init__(self, text_format: str = "text", tables: str = "keep", comments: str = "drop") -> None:
        self.text_format = text_format
        self.tables = tables
        self.comments = comments

    def version(self) -> str:
        return __version__

    def extract(self, html: str, url: str | None = None, deadline: float | None = None) -> Extraction:
        # A page's tree is thousands of objects that live only for this call. The cyclic garbage
        # collector would scan them again and again while they are built (its passes are triggered
        # by allocation counts, ~20% of extraction time); it is paused for the call instead, and the
        # tree's only cycles (parent links) are cut at the end so reference counting frees it at once.
        gc_was_enabled = gc.isenabled()
        if gc_was_enabled:
            gc.disable()
        doc = None
        try:
            doc = parse(html, deadline)
            metadata = extract_metadata(doc, url)
            thread_chars = mark_boilerplate(doc, deadline)
            mark_article_cards(doc)
            title = choose_title(doc)
            blocks = segment(doc.root, deadline)
            chosen, region = self._select(doc, blocks, title)
            if thread_chars >= _THREADS_AS_PAGE_CHARS and _threads_are_the_page(chosen, thread_chars):
                # what is left beside the threads is a form or a timeline: the posts are the page
                chosen, region = self._reselect(doc, deadline, title, keep_threads=True)
            if sum(b.text_len for b in chosen) < _DESCRIPTION_RETRY_MAX_KEPT:
                described = described_inside(doc)
                if described is not None and not any(b.owner.flags & DESCRIBED for b in chosen):
                    # the page's description is outside a near-empty selection: it is the page's text
                    chosen, region = self._reselect(doc, deadline, title, described=described)
            if not chosen:
                chosen, region = self._fallback(doc, deadline), doc.root
            declared = self._declared_instead(doc, chosen, deadline)
            if declared:
                chosen, region = declared, doc.root
            text, tables = render(chosen, self.text_format, self.tables)
            if self.comments == "keep":
                text = self._append_comments(doc, region, text, metadata, deadline)
            return Extraction(text=text, title=title, metadata=metadata, tables=tables)
        finally:
            if doc is not None:
                release(doc)
            if gc_was_enabled:
                gc.enable()

    def _append_comments(self, doc: HtmlDocument, region: Node, text: str, metadata: dict[str, Any],
                         deadline: float | None) -> str:
        """The comment threads' text after the main content; their authors and dates in
        `metadata["comments"]`."""
        threads = find_threads(doc, region)
        blocks = [b for thread in threads for b in thread_blocks(doc, thread, deadline)]
        comment_text, _ = render(blocks, self.text_format, "keep")
        if not comment_text:
            return text
        metadata["comments"] = comment_metadata(doc, threads)
        if not text:
            return comment_text
        return text + ("\n\n## Comments\n\n" if self.text_format == "markdown" else "\n") + comment_text

    def _reselect(self, doc: HtmlDocument, deadline: float | None, title: str | None,
                  **boilerplate: Any) -> tuple[list[Block], Node]:
        """Select again after undoing the boilerplate marks and redoing them with `boilerplate`'s
        options (`mark_boilerplate`'s keywords)."""
        for node in doc.nodes:
            node.flags &= ~REMOVED
        mark_boilerplate(doc, deadline, **boilerplate)
        mark_article_cards(doc)
        return self._select(doc, segment(doc.root, deadline), title)

    def _select(self, doc: HtmlDocument, blocks: list[Block], title: str | None) -> tuple[list[Block], Node]:
        if not blocks:
            return [], doc.root
        hint = article_body_hint(doc)
        shares: list[float] | None = None
        root = best_subtree(doc, blocks, block_scores(blocks))
        if hint:
            # Trusted only when it is about as long as what the page shows (not a teaser).
            generic = sum(len(_tokens(b.text)) for b in blocks if root.contains(b.owner))
            if len(_tokens(hint)) >= 0.6 * generic:
                scores, shares = _hint_scores(blocks, hint)
                root = best_subtree(doc, blocks, scores, use_bonus=False)
                covered = sum(len(_tokens(b.text)) for b in blocks if root.contains(b.owner))
                if covered == 0:
                    shares = None
                    root = best_subtree(doc, blocks, block_scores(blocks))
                elif len(_tokens(hint)) < 0.7 * covered:
                    shares = None
        if shares is None:
            root = widen_to_pane_set(doc, root)
        inside = [root.contains(b.owner) for b in blocks]
        if shares is None:
            _extend_to_neighbours(blocks, inside, root)
        chosen = []
        for i, b in enumerate(blocks):
            if not inside[i]:
                continue
            if shares is not None and b.kind not in ("heading", "table") and len(b.text) > 20 and shares[i] < 0.5:
                continue
            chosen.append(b)
        kept = filter_blocks(chosen, title)
        region_chars = sum(b.text_len for b in chosen)
        if (region_chars >= _LINK_POST_MIN_CHARS and sum(b.text_len for b in kept) < _LINK_POST_KEPT_SHARE * region_chars
                and container_bonus(root) > 0):
            # the region names itself the post and is nearly all links: a post that is a link
            # roll (a bookmark digest, a reading list), not a sidebar
            kept = filter_blocks(chosen, title, keep_links=True)
        return kept, root

    @staticmethod
    def _declared_instead(doc: HtmlDocument, chosen: list[Block], deadline: float | None) -> list[Block]:
        """The JSON-LD's declared text when the selection keeps less than `_DECLARED_TEXT_SHARE` of
        it (`declared_blocks`), else []."""
        if not doc.json_ld:
            return []
        kept = sum(b.text_len for b in chosen)
        items = declared_text(doc)
        # the markup's length bounds its text's: most pages stop here without parsing anything
        if not items or kept >= _DECLARED_TEXT_SHARE * sum(len(t) for t in items):
            return []
        declared = declared_blocks(items, doc.root, deadline)
        if sum(b.text_len for b in declared) < _DECLARED_TEXT_MIN_CHARS or kept >= _DECLARED_TEXT_SHARE * sum(
                b.text_len for b in declared):
            return []
        return declared

    def _fallback(self, doc: HtmlDocument, deadline: float | None) -> list[Block]:
        """Nothing looked like main content: keep every link-poor block, noscript fallbacks included."""
        for node in doc.nodes:
            node.flags &= ~REMOVED
        for node in doc.nodes[1:]:
            if node.parent is not None and node.parent.flags & REMOVED or node.tag in DROP_TAGS and node.tag != "noscript":
                node.flags |= REMOVED
        blocks = segment(doc.root, deadline)
        kept = [b for b in blocks if b.link_density <= 0.5 or b.text_len > 200]
        return kept or blocks  # a page that is all links is still its links


def declared_blocks(items: list[str], owner: Node, deadline: float | None = None) -> list[Block]:
    """Blocks of the text a page's JSON-LD declares (`metadata.declared_text`; markup in it is
    parsed as HTML), each owned by `owner`."""
    out: list[Block] = []
    for item in items:
        if "<" in item:
            fragment = parse(item, deadline)
            try:
                found = segment(fragment.root, deadline)
            finally:
                release(fragment)
        else:
            text = " ".join(item.split())
            found = [Block("p", text, owner, len(text) - text.count(" "), 0)]
        for b in found:
            b.owner = owner
        out.extend(found)
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
