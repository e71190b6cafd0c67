"""Structural hints that mark boilerplate: tags, ARIA roles, class/id vocabulary, hidden elements,
and the short stock phrases of share bars and teasers. Generic web vocabulary, no site rules."""

from __future__ import annotations

import re

from thresher.extract.tree import Node

# Never page text.
DROP_TAGS = frozenset(
    "head script style noscript template svg math iframe object embed canvas button select option input "
    "textarea dialog map audio video picture source frame".split()
)
# Page furniture by definition, unless it holds most of the page's text (some sites wrap everything).
FURNITURE_TAGS = frozenset(("nav", "aside", "footer", "header", "menu"))
FURNITURE_ROLES = frozenset(
    "navigation banner contentinfo complementary menu menubar search dialog alertdialog toolbar tablist".split()
)

# class/id vocabulary of boilerplate containers (matched on the lower-cased class + id string).
NEGATIVE = re.compile(
    r"comment|disqus|cookie|consent|gdpr|onetrust|\bshare|sharing|sharethis|social|newsletter|related|recommend"
    r"|breadcrumb|sidebar|side-bar|navbar|\bnav\b|navigation|\bmenu|footer|pagination|\bpager\b|popup|modal"
    r"|advert|\bads?\b|\bad[-_]|[-_]ads?\b|adsbygoogle|sponsor|\bpromo|outbrain|taboola|subscri|signup|sign-up"
    r"|paywall|\brating|\btags?\b|tag-?list|tag-?cloud|\bwidget|masthead|skip-?link|\bprint\b|toolbar|byline"
    r"|\bauthor|post-?meta|entry-?meta|article-?meta|\bmeta\b|dateline|\bdate\b|\btimestamp"
    r"|\bhidden\b|\bhide\b|sr-only|visually-?hidden|screen-?reader|\bbanner|\bfollow|read-?more|more-?stories"
    r"|trending|most-?popular|most-?read|\bteaser|app-?promo|\bcta\b|call-?to-?action|\blogin|\bsearch"
    r"|site-?header|\bheader\b|top-?bar|\bcredits?\b|\bshop\b|newsletter|\bjump-?link|\bskip\b|\bsocial",
    re.I,
)
POSITIVE = re.compile(
    r"article|\bcontent|\bmain\b|main-?content|\bpost\b|post-?(?:body|content|text)|\bentry\b|entry-?content"
    r"|\bstory\b|story-?body|\bbody\b|\btext\b|\bprose\b|\bblog",
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


def class_id(node: Node) -> str:
    if not node.raw_attrs:
        return ""
    attrs = node.attrs
    c = attrs.get("class", "")
    i = attrs.get("id", "")
    if not c and not i:
        return ""
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
