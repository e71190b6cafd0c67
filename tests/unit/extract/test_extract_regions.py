"""Region selection on the failure classes of issue 15: posts written with <br>, structured-data
hints inside weak-word wrappers."""

from __future__ import annotations

from thresher.extract.builtin import BuiltinExtractor

LINES = ["Today we walked along the river and watched the boats go by in the afternoon sun.",
         "Later we had dinner at the small place near the bridge, which was lovely as always.",
         "The children played in the park until it got dark and everyone was tired but happy.",
         "Tomorrow we plan to visit the museum, if the weather stays as good as it was today."]
SIDEBAR = "".join(
    f'<div class="widget Text"><p>Sidebar text block number {i} with some words about the blog and its '
    f"many readers over the years, and more words to make it long.</p></div>" for i in range(12))


def blogger_page(post_body: str) -> str:
    return (
        '<html><body><div class="main-inner"><div class="blog-posts hfeed">'
        '<div class="date-outer"><h2 class="date-header"><span>Sunday, May 5, 2013</span></h2>'
        '<div class="date-posts"><div class="post-outer"><div class="post hentry">'
        '<h3 class="post-title entry-title"><a href="/p">A day by the river</a></h3>'
        f'<div class="post-body entry-content" itemprop="description articleBody">{post_body}</div>'
        '<div class="post-footer">Posted by Anna at 9:00 PM</div></div></div></div></div></div></div>'
        f'<div class="sidebar">{SIDEBAR}</div></body></html>'
    )


def test_a_post_written_with_line_breaks_in_a_weak_word_wrapper_is_kept():
    text = BuiltinExtractor().extract(blogger_page("<br>\n".join(LINES * 2))).text
    assert LINES[0] in text and LINES[3] in text
    assert "Sidebar text block" not in text


def test_an_article_body_hint_inside_a_weak_word_wrapper_is_kept():
    body = "".join(f"<span>{line}</span><br>" for line in LINES)
    text = BuiltinExtractor().extract(blogger_page(body)).text
    assert LINES[0] in text and "Sidebar text block" not in text


def test_diagnose_names_the_region_and_why_a_candidate_lost():
    from thresher.extract.diagnose import explain

    report = explain(blogger_page("<br>\n".join(LINES * 2)))
    assert report["region"].startswith("<div") and "entry-content" in report["region"]
    sidebar = [r for r in report["rejected"] if "sidebar" in r["node"]]
    assert sidebar and sidebar[0]["why"].startswith("marked as boilerplate")


# -- the all-or-nothing misses of trafilatura-eval, as minimal pages ------------------------------

ARCHIVE = "".join(f'<li><a href="/m{i}">Month {i} of the archive</a> ({i})</li>' for i in range(30))
WARNING = ("Warning: Use of undefined constant comments - assumed 'comments' (this will throw an Error in a "
           "future version of PHP) in /var/www/site/wp-content/plugins/recent/recent.php on line 928")


def test_server_error_output_does_not_outscore_a_short_post():
    page = ('<html><body><div class="content"><div class="post"><h2><a href="/p">Number two</a></h2>'
            f'<div class="entry"><p>{LINES[0]}</p><p>{LINES[1]}</p></div></div></div>'
            f'<div class="sidebar"><ul><li><h2>Recent comments</h2>{"<br>".join([WARNING] * 8)}</li>'
            f'<li><ul>{ARCHIVE}</ul></li></ul></div></body></html>')
    text = BuiltinExtractor().extract(page).text
    assert LINES[0] in text and LINES[1] in text
    assert "on line 928" not in text


def forum_page() -> str:
    posts = "".join(
        f'<div class="forum-comment" id="c{i}"><span class="author">user{i}</span><p>{LINES[i % 4]} '
        f'{LINES[(i + 1) % 4]}</p></div>' for i in range(8))
    return (f'<html><body><nav><a href="/">Home</a> <a href="/f">Forum</a></nav><h1>Thread title</h1>{posts}'
            '<div class="box"><h3>Reply</h3><p>You must log in to take part in the discussion.</p></div></body></html>')


def test_comment_threads_that_are_the_whole_page_are_its_content():
    text = BuiltinExtractor().extract(forum_page()).text
    assert LINES[0] in text and LINES[3] in text


def test_comment_threads_under_an_article_are_still_dropped():
    article = "".join(f"<p>{line} {line}</p>" for line in LINES)
    page = forum_page().replace("<h1>Thread title</h1>", f"<h1>Title</h1><article>{article}</article>")
    page = page.replace(LINES[0] + " " + LINES[1], "A short reply that agrees with the post above it.")
    text = BuiltinExtractor().extract(page).text
    assert LINES[0] in text and "user1" not in text and "A short reply" not in text


def test_a_post_made_of_links_keeps_its_links():
    links = "".join(f'<li><p><a href="https://example.org/{i}">Headline number {i} of the reading list</a></p>'
                    f'<p>via <a href="https://example.org">example.org</a></p></li>' for i in range(20))
    page = (f'<html><body><article class="post"><h1>Links of the day</h1><div class="entry-content"><ul>{links}'
            f'</ul><p>Posted from my bookmarks. The rest of my favourite links are here.</p></div></article>'
            f'<footer><ul>{ARCHIVE}</ul></footer></body></html>')
    text = BuiltinExtractor().extract(page).text
    assert "Headline number 0 of the reading list" in text and "Headline number 19" in text
    assert "Month 3 of the archive" not in text


def test_article_sections_that_each_carry_a_furniture_word_are_kept_together():
    sections = "".join(f'<section class="Report__Section Report__Section--Ads"><h2>Part {i}</h2><p>{LINES[i % 4]} '
                       f'{LINES[(i + 2) % 4]}</p></section>' for i in range(6))
    page = (f'<html><body><article class="Report"><h1>The test</h1>{sections}</article>'
            f'<div class="ads"><p>{LINES[1]} buy now</p></div><footer><p>Imprint</p></footer></body></html>')
    text = BuiltinExtractor().extract(page).text
    assert text.count(LINES[0]) >= 2 and "buy now" not in text


def test_a_lone_excerpt_cut_short_is_the_paywalled_article():
    lead = f"{LINES[0]} {LINES[1][:-1]} …"
    page = (f'<html><body><nav><ul>{ARCHIVE}</ul></nav><div class="article"><h1>Good wages are not enough</h1>'
            f'<p>{lead}</p></div><div class="box"><h2>Subscriber?</h2><p>Log in with your account to read all our '
            'articles. No account yet? Register here.</p></div></body></html>')
    text = BuiltinExtractor().extract(page).text
    assert LINES[0] in text and "Register here" not in text


def test_excerpts_in_a_list_stay_teasers():
    items = "".join(f'<div class="item"><p>{LINES[i % 4]} and then more words follow here …</p></div>'
                    for i in range(6))
    page = (f'<html><body><main><h1>Story</h1><div class="body"><p>{LINES[2]} {LINES[3]}</p>'
            f'<p>{LINES[1]} {LINES[0]}</p></div></main><div class="more">{items}</div></body></html>')
    text = BuiltinExtractor().extract(page).text
    assert LINES[2] in text and "and then more words follow here" not in text
