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
