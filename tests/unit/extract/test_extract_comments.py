"""`--comments keep`: comment threads after the main content, authors and dates as metadata."""

from __future__ import annotations

from thresher.extract.builtin import BuiltinExtractor

ARTICLE = ("This is the article itself, a long paragraph of real content that the extractor must keep "
           "as the main text of the page, with several sentences. ") * 3
PAGE = f"""<html><body><article><h1>Title</h1><p>{ARTICLE}</p></article>
<div id="comments" class="comments-area"><h2>3 Comments</h2><ol class="comment-list">
<li class="comment" id="comment-1"><div class="comment-author vcard"><cite class="fn">Alice</cite></div>
<div class="comment-meta"><time datetime="2024-05-01T10:00">May 1</time></div>
<p>I really enjoyed reading this article, thanks for writing it.</p><a class="reply" href="#">Reply</a></li>
<li class="comment" id="comment-2"><div class="comment-author"><cite class="fn">Bob</cite></div>
<p>I disagree with the second point, but the rest is a fair summary.</p></li></ol>
<form id="commentform"><textarea></textarea><p>Leave a comment</p></form></div></body></html>"""


def test_comments_are_dropped_by_default():
    text = BuiltinExtractor().extract(PAGE).text
    assert "enjoyed reading" not in text and ARTICLE.strip()[:60] in text


def test_keep_mode_appends_threads_after_the_main_content_with_authors_and_dates():
    result = BuiltinExtractor(comments="keep").extract(PAGE)
    text = result.text
    assert text.index("real content") < text.index("enjoyed reading") < text.index("I disagree")
    assert "Leave a comment" not in text and "Reply" not in text.split("\n")
    assert result.metadata["comments"] == [{"author": "Alice", "date": "2024-05-01T10:00"},
                                           {"author": "Bob", "date": None}]


def test_keep_mode_puts_comments_under_a_heading_in_markdown():
    text = BuiltinExtractor(text_format="markdown", comments="keep").extract(PAGE).text
    main, _, comments = text.partition("\n\n## Comments\n\n")
    assert "real content" in main and "enjoyed reading" in comments


def test_a_comment_count_link_is_not_a_thread():
    page = f'<article><p>{ARTICLE}</p><a class="comment-count" href="#c">12 comments</a></article>'
    result = BuiltinExtractor(comments="keep").extract(page)
    assert "comments" not in result.metadata and "12 comments" not in result.text


# A blog's comment box named with a content word too (pixnet's `user-post-box`, id `comment-box`):
# the content word does not save a box that names itself a comment thread. Before: every comment kept.
COMMENT = ("Thanks for sharing these photos of the maple trees, the colours look wonderful this year and "
           "we plan to camp there next month with the children, {n}. ")
BOX_PAGE = f"""<html><body><div id="article-box"><h1>Maple camp</h1><p>{ARTICLE}</p><p>{ARTICLE}</p></div>
<div id="user-post"><div id="comment-box" class="user-post-box"><h3>Comments (3)</h3>
<div id="comment-text" class="user-post-text"><ul class="single-post">
{''.join(f'<li class="post-info"><span class="user-name">reader{n}</span><p>{COMMENT.format(n=n)}</p></li>'
         for n in range(3))}
</ul></div></div></div></body></html>"""


def test_a_comment_box_with_a_content_word_in_its_class_is_still_a_thread():
    text = BuiltinExtractor().extract(BOX_PAGE).text
    assert ARTICLE.strip()[:60] in text and "maple trees" not in text


# "commentary" is an article's genre (an opinion piece), not a comment thread: taz.de's opinion
# articles sit in `<div class="full news subjective commentary article">`. Read as a comment word (a
# substring), it made the article a thread once content words stopped saving threads (above): the
# article was removed and its readers' comments kept instead.
OPINION_PAGE = f"""<html><body><div class="full news subjective commentary article page">
<article class="sectbody"><p>{ARTICLE}</p><p>{ARTICLE}</p></article></div>
<div id="comments" class="comments-area"><ol class="comment-list">
{''.join(f'<li class="comment"><p>{COMMENT.format(n=n)}</p></li>' for n in range(3))}
</ol></div></body></html>"""


def test_an_opinion_article_called_commentary_is_the_content():
    text = BuiltinExtractor().extract(OPINION_PAGE).text
    assert ARTICLE.strip()[:60] in text and "maple trees" not in text


# A live ticker in the page's sidebar (liberation.fr: `<aside id="sidebar" role="complementary">`)
# can hold more text than the article: more than half the page, which made it a wrapper and kept it.
TICKER_PAGE = f"""<html><body><div id="main"><article><h1>Quake</h1><p>{ARTICLE}</p></article></div>
<aside id="sidebar" class="mod" role="complementary"><ul class="live-flux">
{''.join(f'<li class="live-item"><p>{COMMENT.format(n=n)}</p></li>' for n in range(8))}
</ul></aside></body></html>"""


def test_a_sidebar_ticker_longer_than_the_article_is_not_kept():
    text = BuiltinExtractor().extract(TICKER_PAGE).text
    assert ARTICLE.strip()[:60] in text and "maple trees" not in text
