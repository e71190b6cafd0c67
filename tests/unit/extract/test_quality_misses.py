"""Region rules from the last all-or-nothing misses on trafilatura-eval, each on a small constructed
page. Every test also switches its rule off (the rule's constant, monkeypatched) and checks the page
is then lost, so a test cannot pass without the rule it is about."""

from __future__ import annotations

import json

import pytest

from thresher.extract import assemble, boilerplate, builtin, region, scoring
from thresher.extract.builtin import BuiltinExtractor

SENTENCES = [
    "Because there are so many of them, and many only stand in a few states, we kept to the largest ones.",
    "The committee met on Tuesday to discuss the new budget for the coming year in some detail.",
    "Several members asked for more time to read the report before the final vote takes place.",
    "The chair agreed and moved the vote to the next meeting, which is planned for early March.",
]
BIO = ("Born in 1983, he has been an editor here since 2015, working mostly as a layouter, designer and "
       "proofreader. He studied German, art history and German as a foreign language at the university.")


def text_of(page: str) -> str:
    return BuiltinExtractor().extract(page).text


def test_link_lines_inside_figures_do_not_sink_a_short_article(monkeypatch: pytest.MonkeyPatch) -> None:
    figures = "".join(f'<figure><img src="/g{i}.png"><div class="figure-link"><a href="/g{i}.png">Download the '
                      f'graphic</a></div></figure>' for i in range(10))
    page = (f'<html><body><main><article><h1>Registered parties</h1><section class="article-text">'
            f'<p>{SENTENCES[0]}</p>{figures}</section><div class="authors"><h2>Authors</h2>'
            f'<div class="content"><p>{BIO}</p></div></div></article></main></body></html>')
    assert SENTENCES[0] in text_of(page)
    monkeypatch.setattr(scoring, "_FIGURE_DEPTH", 0)
    assert SENTENCES[0] not in text_of(page)


def card_page(intro_heading: str) -> tuple[str, str]:
    intro = "Welcome! " + " ".join(SENTENCES) + " We look forward to hearing from you."
    explained = "".join(f"<p>{s} {t}</p>" for s in SENTENCES for t in SENTENCES)
    faq = "".join(f"<h3>Question {i}?</h3><p>{s} {s}</p>" for i, s in enumerate(SENTENCES))
    page = (f'<html><body><div class="page"><article class="box"><h1>{intro_heading}</h1>'
            f'<p>{intro}</p><a href="/join">Join now</a></article>'
            f'<article class="box"><h2>How it works</h2>{explained}</article>'
            f'<article class="box"><h2>Questions</h2>{faq}</article></div></body></html>')
    return page, intro


def test_an_article_under_a_plain_heading_is_not_a_feed_card(monkeypatch: pytest.MonkeyPatch) -> None:
    page, intro = card_page("Become a product tester")
    assert intro in text_of(page)
    monkeypatch.setattr(boilerplate, "_has_linked_heading", lambda nodes, node: True)
    assert intro not in text_of(page)


def test_an_article_under_a_linked_title_is_a_feed_card() -> None:
    page, intro = card_page('<a href="/tester">Become a product tester</a>')
    assert intro not in text_of(page) and SENTENCES[3] in text_of(page)


def test_sections_without_links_are_not_feed_cards(monkeypatch: pytest.MonkeyPatch) -> None:
    # a CMS that writes each content element of one page as an <article> of its own
    lead = "One of the big problems we face is air pollution. But where does the thick air come from?"
    body = "".join(f"<p>{s} {t}</p>" for s in SENTENCES for t in SENTENCES)
    page = (f'<html><body><div class="content"><article id="c1"><h1>Where does the smog come from?</h1>'
            f'<p>{lead}</p></article><article id="c2">{body}</article></div></body></html>')
    monkeypatch.setattr(boilerplate, "_has_linked_heading", lambda nodes, node: True)
    assert lead in text_of(page)  # no link at all: a section, not a card
    page_with_links = page.replace(f"<p>{lead}</p>", f'<p><a href="/more">{lead}</a> More.</p>')
    assert lead not in text_of(page_with_links)


def product_page() -> str:
    rows = "".join(f'<div class="row"><div class="label">{k}</div><div class="value"><p>{v}</p></div></div>'
                   for k, v in [("Marks", "-"), ("Leaflet", "No leaflet provided by the maker"), ("Form", "Tablet"),
                                ("Substances", "Quinine"), ("Pack sizes", "80 tablets"), ("Code", "V60A")])
    return ('<html><body><div class="container"><h1>Quinine D4 tablets</h1><ul class="nav-tabs">'
            '<li><a href="#a">Product</a></li><li><a href="#b">Prices</a></li></ul>'
            f'<div class="tab-content"><div class="tab-pane active" id="a">{rows}</div>'
            f'<div class="tab-pane" id="b"><h2>Prices</h2><p>{SENTENCES[1]}</p></div></div></div>'
            '<footer><a href="/imprint">Imprint</a></footer></body></html>')


def test_a_region_that_is_one_tab_widens_to_all_tabs(monkeypatch: pytest.MonkeyPatch) -> None:
    text = text_of(product_page())
    assert "No leaflet provided by the maker" in text and SENTENCES[1] in text
    monkeypatch.setattr(region, "_PANE_SET_LEVELS", 0)
    assert "No leaflet provided by the maker" not in text_of(product_page())


def how_to_page(extra: dict[str, object] | None = None) -> str:
    data = {"@context": "https://schema.org", "@type": "HowTo", "name": "A round tablecloth",
            "description": "<p>" + " ".join(SENTENCES) + "</p>",
            "step": [{"@type": "HowToStep", "name": f"Step {i}", "itemListElement": {
                "@type": "HowToDirection", "text": f"<p>{s} {SENTENCES[(i + 1) % 4]}</p>"}}
                for i, s in enumerate(SENTENCES)], **(extra or {})}
    return ('<html><head><script type="application/ld+json">' + json.dumps(data) + '</script></head><body>'
            '<div class="notice"><p>Your browser is out of date. Download a newer one for a better experience, '
            'it is free!</p></div><div id="app" data-props="{}"></div><footer><p>Imprint</p></footer>'
            '</body></html>')


def test_a_page_rendered_in_the_browser_gives_its_declared_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    text = text_of(how_to_page())
    assert SENTENCES[0] in text and SENTENCES[3] in text and "browser is out of date" not in text
    monkeypatch.setattr(builtin, "_DECLARED_TEXT_SHARE", 0.0)
    assert SENTENCES[3] not in text_of(how_to_page())


def test_declared_text_behind_a_paywall_is_not_the_page() -> None:
    text = text_of(how_to_page({"isAccessibleForFree": "False"}))
    assert "browser is out of date" in text and SENTENCES[3] not in text


def video_page() -> str:
    description = SENTENCES[1] + " " + SENTENCES[2]
    menu = "".join(f'<li><a href="/s{i}">Section number {i}</a></li>' for i in range(40))
    return (
        f'<html><head><meta name="description" content="{description}"></head><body><nav><ul>{menu}</ul>'
        f'</nav><div class="cookie-consent"><p>{" ".join(SENTENCES * 2)}</p></div><main><div class="player"><div '
        f'class="buttons"><p>Saved to your list! Saving ended. Rated! Rating removed. '
        "Embed code copied to the clipboard.</p><p>Please note the terms of use.</p></div></div>"
        f'<div class="item-caption"><h2>US sport in times of crisis</h2><p>{description}</p></div>'
        "</main></body></html>"
    )


def test_a_near_empty_selection_gives_way_to_the_page_description(monkeypatch: pytest.MonkeyPatch) -> None:
    assert SENTENCES[1] in text_of(video_page())
    monkeypatch.setattr(builtin, "_DESCRIPTION_RETRY_MAX_KEPT", 0)
    assert SENTENCES[1] not in text_of(video_page())


def test_a_description_does_not_widen_a_selection_that_has_text() -> None:
    post = "".join(f"<p>{s} {s}</p>" for s in SENTENCES)
    blurb = ("This blog is about the small things in life: food, walks, and the weather, written down "
             "by one person since 2008.")
    page = (f'<html><head><meta name="description" content="{blurb}"></head><body>'
            f'<div class="header widget"><h1>My blog</h1><p>{blurb}</p></div>'
            f'<div class="post"><h2>Tuesday</h2>{post}</div></body></html>')
    text = text_of(page)
    assert SENTENCES[0] in text and "small things in life" not in text


def test_a_heading_over_dropped_links_goes_with_them(monkeypatch: pytest.MonkeyPatch) -> None:
    body = "".join(f"<p>{s} {t}</p>" for s in SENTENCES for t in SENTENCES[:2])
    page = (f'<html><body><article><h1>Flint tools</h1>{body}<h3>Explore further</h3>'
            '<p><a href="/n1">Neanderthal tool-making was simpler than thought</a></p>'
            f'<p>More information: {SENTENCES[2]}</p></article></body></html>')
    text = text_of(page)
    assert "More information" in text and "Explore further" not in text
    monkeypatch.setattr(assemble, "_LABELLED_LINK_LIST_ITEMS", 10**9)
    assert "Explore further" in text_of(page)


@pytest.mark.parametrize("line", ["Ähnliche Beiträge", "Über den Autor", "Möchten Sie den Artikel teilen?",
                                  "Valora esta noticia", "(Noch keine Bewertungen)", "Rezept drucken",
                                  "Veja Também:", "Join our Newsletter", "Permalien", "Was denkst du?"])
def test_stock_lines_of_other_languages_are_furniture(line: str) -> None:
    paragraphs = [f"<p>{s} {t}</p>" for s in SENTENCES for t in SENTENCES[:2]]
    page = (f"<html><body><article><h1>Title</h1>{''.join(paragraphs[:4])}<p>{line}</p>{''.join(paragraphs[4:])}"
            "</article></body></html>")
    text = text_of(page)
    assert SENTENCES[3] in text and line not in text


@pytest.mark.parametrize("caption", [
    "Abbildung: Vergleich auf dem Gletscher. Die Variationen der Schneehöhe passen gut zusammen.",
    "Roman Prymula, photo: Archives du Gouvernement tchèque",
    "Fig. 2: The flint flake with the birch tar still on it, seen from above.",
    "Große Beckenkreise (links) stabilisieren, kleine Beckenkreise (rechts) mobilisieren. © Pferderevue",
    "Vergrößern Eine kleine runde Aussparung für die Kamera im Display des neuen Telefons.",
    "This entry was posted in General. Bookmark the permalink.",
    "Der Beitrag wurde am Mittwoch, den 27. November 2019 um 15:21 Uhr veröffentlicht.",
])
def test_captions_written_as_paragraphs_are_not_text(caption: str, monkeypatch: pytest.MonkeyPatch) -> None:
    paragraphs = [f"<p>{s} {t}</p>" for s in SENTENCES for t in SENTENCES[:2]]
    page = (f"<html><body><article><h1>Title</h1>{''.join(paragraphs[:4])}<div class='imginline'><span>{caption}"
            f"</span></div>{''.join(paragraphs[4:])}</article></body></html>")
    assert SENTENCES[3] in text_of(page) and caption not in text_of(page)
    monkeypatch.setattr(assemble, "_CAPTION_LINE_MAX_CHARS", 0)
    assert caption in text_of(page)
