"""The generic rules of the built-in extractor, each on a small page that isolates it."""

from __future__ import annotations

from thresher.extract.builtin import BuiltinExtractor

P1 = (
    "The river flooded the lower town twice this spring, and the council has finally agreed a plan to rebuild the "
    "levee."
)
P2 = (
    "Engineers estimate the work will take three summers, during which the towpath will be closed to walkers and "
    "cyclists."
)
P3 = "Residents who lost their homes will be offered temporary housing in the new estate on the hill above the station."


def text(html: str, **kw) -> str:
    return BuiltinExtractor(**kw).extract(html).text


def test_small_article_cards_beside_the_main_article_are_a_feed():
    # a card links to its story (an <article> without a link is a section of the page: test_quality_misses)
    card = "<article class='card'><h3><a href='/other'>Other story</a></h3><p>{}</p></article>"
    html = (
        f"<main><article><p>{P1}</p><p>{P2}</p><p>{P3}</p></article>"
        f"<section>{card.format('A teaser paragraph about a completely different topic that is long enough.')}"
        f"{card.format('Another teaser paragraph about yet another topic, also long enough to count.')}</section></main"
        f">"
    )
    assert text(html) == f"{P1}\n{P2}\n{P3}"


def test_figure_captions_are_not_text():
    html = (
        f"<article><p>{P1}</p><figure><img src=x><figcaption>A photo of the flooded street, taken on Monday."
        f"</figcaption></figure><p>{P2}</p></article>"
    )
    assert text(html) == f"{P1}\n{P2}"


def test_consent_layer_is_removed_even_when_it_is_most_of_the_page():
    vendors = "".join(
        f"<p>Vendor {i} stores cookies for measurement and personalised advertising purposes.</p>" for i in range(15)
    )
    html = f"<div id='cookie-consent'>{vendors}</div><article><p>{P1}</p><p>{P2}</p></article>"
    assert text(html) == f"{P1}\n{P2}"


def test_responsive_hiding_classes_do_not_hide_content():
    html = f"<div class='article-body hidden-xs'><p>{P1}</p><p>{P2}</p></div><div class='hidden'><p>{P3}</p></div>"
    assert text(html) == f"{P1}\n{P2}"


def test_cms_value_classes_do_not_read_as_furniture():
    html = f"<article class='post tag-advertising category-social-media'><p>{P1}</p><p>{P2}</p></article>"
    assert text(html) == f"{P1}\n{P2}"


def test_heading_slug_ids_do_not_read_as_furniture():
    html = (
        f"<div class='body'><p>{P1}</p><div class='section' id='sharing-with-a-single-developer'>"
        f"<h2>Sharing</h2><p>{P2}</p></div></div>"
    )
    assert text(html) == f"{P1}\nSharing\n{P2}"


def test_comments_and_related_links_are_removed():
    html = (f"<article><p>{P1}</p><p>{P2}</p></article><div class='comments'><p>{P3}</p></div>"
            "<ul class='related-posts'><li><a href='/a'>A related story with a long title</a></li></ul>")
    assert text(html) == f"{P1}\n{P2}"


def test_text_under_a_linked_heading_is_a_teaser():
    teasers = "".join(
        f"<h3><a href='/{i}'>Story {i} headline</a></h3><p>A short summary of story {i}, which is about something "
        f"else.</p>"
        for i in range(6)
    )
    html = f"<div><div class='story'><p>{P1}</p><p>{P2}</p></div><div class='more'>{teasers}</div></div>"
    assert text(html) == f"{P1}\n{P2}"


def test_lead_paragraph_outside_the_body_container_is_kept():
    html = f"<div><p class='standfirst'>{P3}</p><div class='article-body'><p>{P1}</p><p>{P2}</p><p>{P1}</p></div></div>"
    assert text(html).startswith(P3)


def test_markdown_nested_and_ordered_lists():
    html = f"<p>{P1}</p><ol><li>first step<ul><li>detail</li></ul></li><li>second step</li></ol>"
    assert text(html, text_format="markdown").endswith("1. first step\n  - detail\n1. second step")
