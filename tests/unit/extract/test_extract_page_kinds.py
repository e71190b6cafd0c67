"""Rules from the harder kinds of page (issue 35: portal pages, comment threads, forums), each on a
small constructed page. Every test also switches its rule off (its constant, monkeypatched) and
checks the page is then lost, so a test cannot pass without the rule it is about."""

from __future__ import annotations

import math
import re
from itertools import pairwise

import pytest

from thresher.extract import assemble, boilerplate, hints
from thresher.extract.builtin import BuiltinExtractor

SENTENCES = [
    "The cargo ship broke up at an altitude of about one hundred and ninety kilometres over a remote region.",
    "Local people reported seeing a flash of light and hearing a loud thud west of the regional capital.",
    "The ship had lifted off as scheduled in the evening from the launch complex to deliver its supplies.",
    "The agency said the craft was operating normally before it stopped sending data minutes after launch.",
    "This is the third failed launch of a cargo craft in two years, and the inquiry has only just begun.",
    "Both agencies said the loss would have no impact on the crew of the station, which has ample supplies.",
]


def text_of(page: str) -> str:
    return BuiltinExtractor().extract(page).text


def stream_item(i: int) -> str:
    # a teaser of the stream behind the article: a linked title and a one-paragraph summary
    summary = (f"Summary {i}: officials said on Wednesday that the plan would be announced at a later date, "
               f"while critics of the plan asked for more details about its cost and its timetable.")
    return f'<li class="stream-item"><h3><a href="/story-{i}">Story number {i}</a></h3><p>{summary}</p></li>'


def modal_page() -> str:
    """An article opened in a modal layer over a stream of teasers; the stream, which holds most of
    the page's text, is marked aria-hidden while the article is open."""
    stream = "".join(stream_item(i) for i in range(30))
    body = "".join(f"<p>{s}</p>" for s in SENTENCES)
    return (f'<html><body><div id="stream-app"><div aria-hidden="true"><ul class="stream">{stream}</ul></div></div>'
            f'<div id="app"><div class="render-target-modal"><article><h1>Cargo ship lost</h1>'
            f'<div class="canvas-body">{body}</div></article></div></div></body></html>')


def test_an_article_in_a_modal_layer_over_a_hidden_stream_is_the_text(monkeypatch: pytest.MonkeyPatch) -> None:
    text = text_of(modal_page())
    assert all(s in text for s in SENTENCES)
    assert "Summary 3:" not in text
    monkeypatch.setattr(boilerplate, "_DOMINANT_GROUP_RATIO", math.inf)
    assert SENTENCES[0] not in text_of(modal_page())


def test_a_pop_up_with_a_short_paragraph_is_still_furniture() -> None:
    body = "".join(f"<p>{s}</p>" for s in SENTENCES)
    notice = ("Sign up for our newsletter and get the best stories of the week delivered to your inbox every "
              "Friday morning, free of charge.")
    page = (f'<html><body><article><h1>Cargo ship lost</h1><div class="story">{body}</div></article>'
            f'<div class="newsletter-modal"><p>{notice}</p></div></body></html>')
    text = text_of(page)
    assert SENTENCES[0] in text and notice not in text


def thread_page() -> str:
    """A forum thread: each post an `<article>` of the same class under its author's linked name;
    the first post (the announcement) is much longer than the replies."""
    def post(author: str, body: str) -> str:
        return (f'<article class="message message--post"><div class="user"><h4 class="name">'
                f'<a href="/members/{author}">{author}</a></h4><div class="title">Forum member</div>'
                f'<div class="joined">Sep 20, 2020</div></div>'
                f'<div class="message-body"><div class="bbWrapper">{body}</div></div></article>')

    announcement = " ".join(SENTENCES)
    replies = [post(f"user{i}", SENTENCES[i]) for i in range(len(SENTENCES))]
    return (f'<html><body><div class="thread"><h1>Patch notes</h1><div class="posts">'
            f'{post("moderator", announcement)}{"".join(replies)}</div></div></body></html>')


def test_replies_of_a_thread_are_not_feed_cards(monkeypatch: pytest.MonkeyPatch) -> None:
    text = text_of(thread_page())
    assert all(text.count(s) == 2 for s in SENTENCES)  # in the announcement and in a reply
    monkeypatch.setattr(boilerplate, "_series_of", lambda nodes, main: "")
    assert text_of(thread_page()).count(SENTENCES[1]) == 1


@pytest.mark.parametrize("prompt", [
    "Sie müssen sich einloggen, um sich an einer Diskussion beteiligen zu können.",
    "You must be logged in to take part in this discussion or to answer any of these posts.",
])
def test_a_log_in_prompt_under_a_thread_is_furniture(prompt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    posts = "".join(f'<div class="message"><p>{s}</p><p>{t}</p></div>' for s, t in pairwise(SENTENCES))
    page = (f'<html><body><main id="content"><h1>Cargo ship lost</h1>{posts}'
            f'<div id="form"><h3 class="note">{prompt}</h3></div></main></body></html>')
    text = text_of(page)
    assert SENTENCES[0] in text and prompt not in text
    monkeypatch.setattr(hints, "FURNITURE_SENTENCE", re.compile(r"(?!)"))
    monkeypatch.setattr(assemble, "FURNITURE_SENTENCE", re.compile(r"(?!)"))
    assert prompt in text_of(page)


EXCERPT = ("Officials said on Wednesday that the plan would be announced at a later date, while critics "
           "of the plan asked for more details about its cost and its timetable before the vote.")


def more_posts_page() -> str:
    """A blog post written in plain `<div>`s, followed by a "more posts" row of `<article>` cards,
    each a linked title over a date line and a two-sentence excerpt (no `<article>` is larger)."""
    body = "".join(f"<p>{s} {t}</p>" for s, t in pairwise(SENTENCES))
    cards = "".join(f'<article class="et_pb_post"><h2><a href="/post-{i}">Another post number {i}</a></h2>'
                    f'<p>May {i + 1} 2019 | Media</p><div class="post-content">'
                    f'<p>Excerpt {i}: {EXCERPT}</p></div></article>' for i in range(3))
    return (f'<html><body><div class="section"><h1>Cargo ship lost</h1><div class="text">{body}</div>'
            f'<h3>More posts:</h3><div class="posts">{cards}</div></div></body></html>')


def test_article_cards_beside_a_body_that_is_no_article_go(monkeypatch: pytest.MonkeyPatch) -> None:
    text = text_of(more_posts_page())
    assert SENTENCES[0] in text and "Excerpt 0:" not in text
    monkeypatch.setattr(boilerplate, "dominant_group", lambda doc: None)
    assert "Excerpt 0:" in text_of(more_posts_page())


def test_a_heading_anchor_id_with_a_doubled_separator_is_a_slug(monkeypatch: pytest.MonkeyPatch) -> None:
    # the id is the heading's text made an anchor ("nav_" + slug + "__1"), not a navigation box
    body = "".join(f"<p>{s}</p>" for s in SENTENCES)
    heading = "Only the foil stays behind"
    page = (f'<html><body><article><h1>Cargo ship lost</h1><div class="article-content">{body}'
            f'<h3 class="subheading" id="nav_only_the_foil__1">{heading}</h3>{body}</div></article></body></html>')
    assert heading in text_of(page)
    monkeypatch.setattr(hints, "_SLUG_ID", re.compile(r"^(?:[^-_\s]+[-_]){4,}[^-_\s]+$"))
    hints._CLASS_ID_MEMO.clear()
    try:
        assert heading not in text_of(page)
    finally:
        hints._CLASS_ID_MEMO.clear()
