"""The built-in extractor: main content kept, furniture removed, structure rendered, metadata read."""

from __future__ import annotations

import pytest

from thresher.extract.base import ExtractionTimeout
from thresher.extract.builtin import BuiltinExtractor

PARA = (
    "The committee met on Tuesday to discuss the proposal for the new library, which has been debated "
    "for several years by residents of the northern districts."
)
PARA2 = (
    "Supporters argued that the building would serve thousands of students, while critics pointed to the "
    "cost overruns of earlier projects and asked for an independent review."
)

PAGE = f"""<!doctype html>
<html lang="en-GB"><head>
<title>Library vote delayed | The Daily Example</title>
<meta property="og:title" content="Library vote delayed">
<meta name="author" content="Jane Doe">
<meta property="article:published_time" content="2024-03-05T10:00:00Z">
<meta name="description" content="The council postponed its decision.">
<meta property="og:site_name" content="The Daily Example">
<link rel="canonical" href="https://example.org/news/library">
</head><body>
<header><a href="/">Home</a> <a href="/news">News</a> <a href="/sport">Sport</a></header>
<nav><ul><li><a href="/a">Politics</a></li><li><a href="/b">Business</a></li></ul></nav>
<div id="cookie-banner">We use cookies to improve your experience. Accept all cookies?</div>
<main><article>
<h1>Library vote delayed</h1>
<div class="share-bar"><a href="#">Share on Facebook</a> <a href="#">Tweet</a></div>
<p>{PARA}</p>
<h2>What happens next</h2>
<p>{PARA2}</p>
<ul><li>A review will be commissioned in April.</li><li>The council votes again in June.</li></ul>
<pre>line one
  line two</pre>
<table><tr><th>Year</th><th>Cost</th></tr><tr><td>2022</td><td>4.1m</td></tr><tr><td>2023</td><td>5.3m</td></tr></table>
<div class="advertisement">Advertisement: buy the best shoes now at a discount price today.</div>
<p>Read more</p>
</article>
<section id="comments"><h3>12 comments</h3>\
<p>I think this is a terrible idea and the council should resign, honestly I do.</p></section>
<aside class="related-articles"><h3>Related</h3><ul><li><a href="/x">Council tax rises again this year</a></li>
<li><a href="/y">New park opens in the northern district</a></li></ul></aside>
</main>
<footer><p>Copyright 2024 The Daily Example. All rights reserved. Contact us for licensing.</p></footer>
</body></html>"""


def test_main_content_is_kept_and_furniture_removed():
    r = BuiltinExtractor().extract(PAGE)
    assert PARA in r.text and PARA2 in r.text
    assert "What happens next" in r.text
    assert "- A review will be commissioned in April." in r.text
    for junk in ("Politics", "cookies", "Share on Facebook", "Advertisement", "terrible idea", "Council tax",
                 "Copyright", "Read more", "Sport"):
        assert junk not in r.text, junk


def test_title_prefers_the_heading_the_page_declares():
    assert BuiltinExtractor().extract(PAGE).title == "Library vote delayed"


def test_title_heading_is_not_repeated_in_the_text():
    assert not BuiltinExtractor().extract(PAGE).text.startswith("Library vote delayed")


def test_metadata_is_read_when_present():
    assert BuiltinExtractor().extract(PAGE).metadata == {
        "author": "Jane Doe",
        "date": "2024-03-05T10:00:00Z",
        "lang": "en-GB",
        "description": "The council postponed its decision.",
        "canonical_url": "https://example.org/news/library",
        "sitename": "The Daily Example",
    }


def test_json_ld_metadata_is_used():
    html = ('<html><head><script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle",'
            '"headline":"H","author":{"@type":"Person","name":"Ann Lee"},"datePublished":"2020-01-02",'
            '"publisher":{"@type":"Organization","name":"Pub"}}</script></head>'
            f'<body><p>{PARA}</p></body></html>')
    meta = BuiltinExtractor().extract(html).metadata
    assert meta["author"] == "Ann Lee" and meta["date"] == "2020-01-02" and meta["sitename"] == "Pub"


def test_markdown_renders_headings_lists_code_and_tables():
    text = BuiltinExtractor(text_format="markdown").extract(PAGE).text
    assert "## What happens next" in text
    assert "- A review will be commissioned in April.\n- The council votes again in June." in text
    assert "```\nline one\n  line two\n```" in text
    assert "| Year | Cost |\n|---|---|\n| 2022 | 4.1m |\n| 2023 | 5.3m |" in text


def test_plain_text_keeps_code_whitespace_and_the_table():
    text = BuiltinExtractor().extract(PAGE).text
    assert "line one\n  line two" in text
    assert "| 2022 | 4.1m |" in text
    assert "##" not in text and "```" not in text


def test_tables_split_moves_tables_out_of_the_text():
    r = BuiltinExtractor(tables="split").extract(PAGE)
    assert "2022" not in r.text
    assert r.tables == ["| Year | Cost |\n|---|---|\n| 2022 | 4.1m |\n| 2023 | 5.3m |"]


def test_tables_drop_removes_them():
    r = BuiltinExtractor(tables="drop").extract(PAGE)
    assert "2022" not in r.text and r.tables == []


def test_layout_tables_are_walked_as_blocks_not_rendered():
    html = f"<table><tr><td><p>{PARA}</p><p>{PARA2}</p></td><td><a href='/'>home</a></td></tr></table>"
    text = BuiltinExtractor().extract(html).text
    assert text == f"{PARA}\n{PARA2}"


def test_line_breaks_are_kept_but_source_newlines_are_not():
    html = f"<p>{PARA}</p><p>first line\nsame line<br>second line, which goes on for a while.</p>"
    text = BuiltinExtractor().extract(html).text
    assert "first line same line\nsecond line, which goes on for a while." in text


def test_passing_the_deadline_raises():
    with pytest.raises(ExtractionTimeout):
        BuiltinExtractor().extract("<p>x</p>" * 20_000, deadline=0.0)


def test_json_ld_article_body_guides_selection():
    body = " ".join([PARA, PARA2])
    html = ('<html><head><script type="application/ld+json">{"@type":"Article","articleBody":'
            f'"{body}"}}</script></head><body><div class="x"><p>{PARA}</p><p>{PARA2}</p></div>'
            '<div class="y"><p>An unrelated long paragraph about something else entirely, written to look like '
            'content, with commas, full sentences and no links at all in it whatsoever.</p></div></body></html>')
    text = BuiltinExtractor().extract(html).text
    assert text == f"{PARA}\n{PARA2}"
