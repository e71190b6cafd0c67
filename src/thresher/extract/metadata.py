"""Page metadata as the page declares it: `<meta>` (Open Graph, Dublin Core, article:*, schema.org
itemprop), `<link rel=canonical>`, `<html lang>` and JSON-LD. Only what is present is returned."""

from __future__ import annotations

import json
import re
from typing import Any

from thresher.extract.tree import HtmlDocument

# Looked up in this order; the first non-empty value wins.
_AUTHOR_KEYS = ("author", "article:author", "dc.creator", "dcterms.creator", "sailthru.author", "parsely-author",
                "byl", "twitter:creator")
_DATE_KEYS = ("article:published_time", "datepublished", "dc.date", "dcterms.created", "dc.date.issued",
              "date", "pubdate", "publishdate", "og:published_time", "sailthru.date", "parsely-pub-date",
              "article.published", "published_time", "dcterms.date")
_DESCRIPTION_KEYS = ("description", "og:description", "twitter:description", "dc.description")
_SITENAME_KEYS = ("og:site_name", "application-name", "twitter:site")
_TITLE_KEYS = ("og:title", "twitter:title", "dc.title", "headline", "sailthru.title", "parsely-title")
_ARTICLE_TYPES = re.compile(r"article|posting|report|blog|news|review|recipe|webpage", re.I)


def meta_map(doc: HtmlDocument) -> dict[str, str]:
    """`name`/`property`/`itemprop` -> `content` of every `<meta>`, keys lower-cased, first wins."""
    out: dict[str, str] = {}
    for attrs in doc.metas:
        content = attrs.get("content")
        if content is None:
            continue
        content = " ".join(content.split())
        if not content:
            continue
        for key_attr in ("property", "name", "itemprop"):
            key = attrs.get(key_attr)
            if key:
                out.setdefault(key.strip().lower(), content)
    return out


def _json_ld_objects(doc: HtmlDocument) -> list[dict[str, Any]]:
    objs: list[dict[str, Any]] = []
    for blob in doc.json_ld[:20]:
        blob = blob.strip()
        if blob.startswith("<!--"):
            blob = blob[4:].rstrip().removesuffix("-->")
        try:
            data = json.loads(blob, strict=False)
        except (ValueError, RecursionError):
            continue
        todo = [data]
        seen = 0
        while todo and seen < 200:
            item = todo.pop()
            seen += 1
            if isinstance(item, list):
                todo.extend(item)
            elif isinstance(item, dict):
                objs.append(item)
                graph = item.get("@graph")
                if isinstance(graph, list):
                    todo.extend(graph)
                main = item.get("mainEntity")
                if isinstance(main, (dict, list)):
                    todo.extend(main if isinstance(main, list) else [main])
    return objs


def _name_of(value: Any) -> str | None:
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, dict):
        return _name_of(value.get("name"))
    if isinstance(value, list):
        names = [n for n in (_name_of(v) for v in value[:5]) if n]
        return ", ".join(names) or None
    return None


def _is_article(obj: dict[str, Any]) -> bool:
    kind = obj.get("@type")
    if isinstance(kind, list):
        kind = " ".join(str(k) for k in kind)
    return isinstance(kind, str) and bool(_ARTICLE_TYPES.search(kind))


def json_ld_article(doc: HtmlDocument) -> dict[str, Any]:
    """The first article-like JSON-LD object (NewsArticle, BlogPosting, ...), or {}."""
    for obj in _json_ld_objects(doc):
        if _is_article(obj) and ("articleBody" in obj or "headline" in obj or "author" in obj):
            return obj
    return {}


def article_body_hint(doc: HtmlDocument) -> str | None:
    """`articleBody` declared in JSON-LD, when it is long enough to guide content selection."""
    for obj in _json_ld_objects(doc):
        body = obj.get("articleBody") or obj.get("text") if _is_article(obj) else None
        if isinstance(body, str) and "<" in body:
            from thresher.extract.tree import iter_text, parse

            body = " ".join(iter_text(parse(body).root))
        if isinstance(body, str) and len(body.split()) >= 40:
            return body
    return None


_HOW_TO_TYPES = re.compile(r"howto|recipe", re.I)


def _step_texts(value: Any, out: list[str], depth: int = 0) -> None:
    """Texts of HowTo steps and recipe instructions: strings, `HowToStep.text`, and the steps of
    `HowToSection.itemListElement` (nested at most a few levels)."""
    if depth > 4:
        return
    if isinstance(value, str):
        if value.strip():
            out.append(value)
    elif isinstance(value, list):
        for v in value[:200]:
            _step_texts(v, out, depth + 1)
    elif isinstance(value, dict):
        text = value.get("text")
        if isinstance(text, str) and text.strip():
            out.append(text)
        else:
            _step_texts(value.get("itemListElement"), out, depth + 1)


def declared_text(doc: HtmlDocument) -> list[str]:
    """The page's text as its JSON-LD declares it, for pages that render it in the browser only: an
    article's `articleBody`, or a HowTo's or Recipe's description, ingredients and steps. Each item
    is plain text or an HTML fragment, in reading order. An object marked `isAccessibleForFree:
    false` declares text behind a paywall, which the page does not show: it gives none."""
    for obj in _json_ld_objects(doc):
        if str(obj.get("isAccessibleForFree", "")).strip().lower() == "false":
            continue
        kind = obj.get("@type")
        if isinstance(kind, list):
            kind = " ".join(str(k) for k in kind)
        if not isinstance(kind, str):
            continue
        out: list[str] = []
        if _HOW_TO_TYPES.search(kind):
            description = obj.get("description")
            if isinstance(description, str) and description.strip():
                out.append(description)
            _step_texts(obj.get("recipeIngredient"), out)
            _step_texts(obj.get("step"), out)
            _step_texts(obj.get("recipeInstructions"), out)
        elif _ARTICLE_TYPES.search(kind):
            body = obj.get("articleBody") or obj.get("text")
            if isinstance(body, str) and body.strip():
                out.append(body)
        if out:
            return out
    return []


def page_description(doc: HtmlDocument) -> str | None:
    """The description the page declares (`<meta name=description>`, Open Graph, Twitter, Dublin
    Core), white space collapsed."""
    metas = meta_map(doc)
    for k in _DESCRIPTION_KEYS:
        v = metas.get(k)
        if v:
            return v
    return None


def extract_metadata(doc: HtmlDocument, url: str | None = None) -> dict[str, Any]:
    metas = meta_map(doc)
    article = json_ld_article(doc)
    out: dict[str, Any] = {}

    def first(keys: tuple[str, ...]) -> str | None:
        for k in keys:
            v = metas.get(k)
            if v:
                return v
        return None

    author = _name_of(article.get("author")) or first(_AUTHOR_KEYS)
    if author and not author.startswith("http") and not author.startswith("@"):
        out["author"] = author[:200]
    date = article.get("datePublished") if isinstance(article.get("datePublished"), str) else None
    date = date or first(_DATE_KEYS)
    if date:
        out["date"] = date.strip()[:64]
    if doc.lang:
        out["lang"] = doc.lang[:35]
    description = first(_DESCRIPTION_KEYS)
    if description:
        out["description"] = description[:1000]
    canonical = None
    for link in doc.links:
        rel = link.get("rel", "").lower().split()
        if "canonical" in rel and link.get("href", "").strip():
            canonical = link["href"].strip()
            break
    canonical = canonical or metas.get("og:url")
    if canonical:
        out["canonical_url"] = canonical
    sitename = first(_SITENAME_KEYS)
    if not sitename:
        publisher = article.get("publisher")
        sitename = _name_of(publisher) if publisher else None
    if sitename:
        out["sitename"] = sitename[:200]
    return out


def declared_titles(doc: HtmlDocument) -> list[str]:
    """Titles the page declares, most specific first: og/twitter/dc titles, JSON-LD headline, <title>."""
    metas = meta_map(doc)
    titles: list[str] = []
    for k in _TITLE_KEYS:
        v = metas.get(k)
        if v:
            titles.append(v)
    headline = json_ld_article(doc).get("headline")
    if isinstance(headline, str) and headline.strip():
        titles.append(" ".join(headline.split()))
    if doc.title:
        titles.append(" ".join(doc.title.split()))
    return titles
