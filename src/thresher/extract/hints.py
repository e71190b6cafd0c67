"""Structural hints that mark boilerplate: tags, ARIA roles, class/id vocabulary, hidden elements,
and the short stock phrases of share bars and teasers. Generic web vocabulary, no site rules."""

from __future__ import annotations

import re

from thresher.extract.tree import Node

# Never page text.
DROP_TAGS = frozenset(
    "head script style noscript template svg math iframe object embed canvas button select option input rt rp "
    "textarea dialog map audio video picture source frame".split()
)
# Page furniture by definition, unless it holds most of the page's text (some sites wrap everything).
FURNITURE_TAGS = frozenset(("nav", "aside", "footer", "header", "menu"))
FURNITURE_ROLES = frozenset(
    "navigation banner contentinfo complementary menu menubar search dialog alertdialog toolbar tablist".split()
)

# class/id vocabulary of boilerplate containers (matched on the lower-cased class + id string).
# Strong words name furniture unambiguously; weak ones also appear on content wrappers
# (`theiaStickySidebar` on the main column, `has-sidebar` on the page), so they remove less.
STRONG_NEGATIVE = re.compile(
    r"comment|disqus|cookie|consent|gdpr|onetrust|\bshare|sharing|sharethis|social|newsletter|related|recommend"
    r"|breadcrumb|footer|advert|\bads?\b|\bad[-_]|[-_]ads?\b|adsbygoogle|sponsor|outbrain|taboola|\bpromo"
    r"|subscri|signup|sign-up|popup|modal|\bbanner|\bcta\b|call-?to-?action|skip-?link|\bprint\b|jump-?link"
    r"|sr-only|visually-?hidden|screen-?reader|\bhidden\b|\bhide\b",
    re.I,
)
COMMENTS = re.compile(r"comment|disqus|repl(?:y|ies)|respond|discussion|forum", re.I)
# Consent and cookie layers can hold more text than the page itself (per-vendor descriptions).
CONSENT = re.compile(r"cookie|consent|gdpr|dsgvo|onetrust|\bcmp\b|cmp[-_]|privacy-?(?:popup|banner|overlay|notice)", re.I)
WEAK_NEGATIVE = re.compile(
    r"sidebar|side-bar|\baside\b|navbar|\bnav\b|navigation|\bmenu|pagination|\bpager\b|\brating|\btags?\b|tag-?list"
    r"|tag-?cloud|\bwidget|masthead|toolbar|byline|\bauthor|post-?meta|entry-?meta|article-?meta|\bmeta\b"
    r"|dateline|\bdate\b|\btimestamp|\bfollow|read-?more|more-?stories|trending|most-?popular|most-?read"
    r"|\bteaser|app-?promo|\blogin|\bsearch|site-?header|\bheader\b|top-?bar|\bcredits?\b|\bshop\b|\bskip\b",
    re.I,
)
POSITIVE = re.compile(
    r"article|\bcontent|\bmain\b|main-?content|\bpost\b|post-?(?:body|content|text)|\bentry\b|entry-?content"
    r"|\bstory\b|story-?body|\bbody\b|\btext\b|\bprose\b|\bblog",
    re.I,
)
# Containers that name themselves as the main text (CMS conventions across the web).
CONTENT_CONTAINER = re.compile(
    r"(?:article|post|entry|story|blog|news|page|main|single|node)[-_]?(?:body|content|text|entry|detail|main|copy)"
    r"|(?:content|body|rich|story)[-_]?(?:body|main|article|text)|articlebody|\bprose\b|markdown-?body|\bbodytext"
    r"|\bcontent\b|\bentry\b|\bpost\b|\barticle\b|\bstory\b",
    re.I,
)
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
# Stock lines of share bars, teasers and widgets, compared against whole short blocks.
BOILER_LINE = re.compile(
    r"^(?:advertisement|advertising|anzeige|publicité|publicidad|sponsored(?: content)?|share(?: this(?: article| story| post)?)?"
    r"|share on \w+|tweet|print|email|e-mail|read more|continue reading|read the full (?:story|article)|more\b.{0,20}"
    r"|related(?: articles| stories| posts| content)?|you (?:may|might) also like.*|recommended(?: for you)?"
    r"|sign up.*|subscribe.*|follow us.*|click here.*|comments?|leave a (?:comment|reply)|\d+ comments?|back to top"
    r"|skip to (?:main )?content|show more|load more|see more|view (?:all|more)|next|previous|prev|top"
    r"|weiterlesen|mehr (?:zum thema|lesen)|lire la suite|leer más|czytaj (?:więcej|także)|zobacz (?:też|także)"
    r"|copyright.*|©.*|all rights reserved.*)$",
    re.I,
)


# Class names that carry a value, not a role: CMS taxonomy and post-type classes such as
# `tag-advertising`, `category-social-media`, `post-1234`, `format-standard`.
_VALUE_CLASS = re.compile(r"^(?:tag|tags|category|cat|postid|post|term|type|status|format|page-id|parent-pageid|topic|section)[-_]\S")


def class_id(node: Node) -> str:
    """The element's class names and id as one string, value-carrying class names left out."""
    if not node.raw_attrs:
        return ""
    attrs = node.attrs
    c = attrs.get("class", "")
    i = attrs.get("id", "")
    if not c and not i:
        return ""
    if c and ("-" in c or "_" in c):
        c = " ".join(name for name in c.split() if not _VALUE_CLASS.match(name))
    return c + " " + i


def is_hidden(node: Node) -> bool:
    raw = node.raw_attrs
    if not raw:
        return False
    attrs = node.attrs
    if "hidden" in attrs:
        return True
    if attrs.get("aria-hidden", "").lower() == "true":
        return True
    style = attrs.get("style")
    return bool(style and _HIDDEN_STYLE.search(style))


def role(node: Node) -> str:
    if not node.raw_attrs or "role" not in node.raw_attrs:
        return ""
    return node.attrs.get("role", "").lower()
