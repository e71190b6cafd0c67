"""The iterative tree builder: forgiving of broken markup, flat in cost however deep the page."""

from __future__ import annotations

import time

from thresher.extract.tree import MAX_DEPTH, iter_text, parse, text_of


def _words(node):
    return " ".join(" ".join(iter_text(node)).split())


def _tags(doc):
    return [n.tag for n in doc.nodes[1:]]


def test_unclosed_paragraphs_and_list_items_close_implicitly():
    doc = parse("<p>one<p>two<ul><li>a<li>b</ul>")
    assert _tags(doc) == ["p", "p", "ul", "li", "li"]
    ul = doc.nodes[3]
    assert ul.parent is doc.root  # the <ul> closed the open <p>
    assert [text_of(n) for n in doc.nodes[4:]] == ["a", "b"]


def test_table_cells_and_rows_close_implicitly():
    doc = parse("<table><tr><td>1<td>2<tr><td>3</table>after")
    rows = [n for n in doc.nodes if n.tag == "tr"]
    assert [len([c for c in r.children if not isinstance(c, str)]) for r in rows] == [2, 1]
    assert doc.root.children[-1] == "after"


def test_invalid_nesting_and_stray_end_tags_do_not_lose_text():
    doc = parse("<b><i>bold italic</b> tail</i></div></span><p>end")
    assert _words(doc.root) == "bold italic tail end"


def test_entities_are_decoded_and_comments_skipped():
    doc = parse("<p>a &amp; b &lt;c&gt; &eacute;<!-- hidden --> d</p>")
    assert text_of(doc.root) == "a & b <c> é d"


def test_unclosed_comment_runs_to_the_end():
    assert text_of(parse("<p>kept</p><!-- never closed <p>lost").root) == "kept"


def test_script_and_style_content_is_not_text_but_json_ld_is_kept():
    html = (
        '<script>var x = "<p>no</p>";</script><style>p{}</style>'
        '<script type="application/ld+json">{"a":1}</script><p>yes'
    )
    doc = parse(html)
    assert text_of(doc.root) == "yes"
    assert doc.json_ld == ['{"a":1}']


def test_head_declarations_are_recorded():
    doc = parse('<html lang="de-AT"><head><title> A &amp; B </title><meta name="author" content="X">'
                '<link rel="canonical" href="https://e.org/a"></head><body><p>t</p></body></html>')
    assert doc.title == "A & B"
    assert doc.lang == "de-AT"
    assert doc.metas == [{"name": "author", "content": "X"}]
    assert doc.links == [{"rel": "canonical", "href": "https://e.org/a"}]


def test_quoted_greater_than_inside_an_attribute_does_not_end_the_tag():
    doc = parse('<div onclick="if (a > b) go()" id="x">text</div>')
    assert text_of(doc.root) == "text"
    assert doc.nodes[1].get("id") == "x"


def test_link_text_is_marked_and_counted():
    doc = parse("<p>see <a href='/x'>this <b>link</b></a> now</p>")
    p = doc.nodes[1]
    assert [type(c).__name__ for c in p.children] == ["str", "LinkText", "LinkText", "str"]
    assert (p.text_len, p.link_len) == (14, 8)


def test_a_link_ends_with_its_parent():
    doc = parse("<div><a href='/x'>inside</div>outside")
    assert type(doc.root.children[-1]).__name__ == "str"


def test_100k_deep_nesting_is_flattened_fast_and_keeps_text():
    depth = 100_000
    html = "<div>" * depth + "deep text" + "</div>" * depth + "<p>after</p>"
    t0 = time.monotonic()
    doc = parse(html)
    assert time.monotonic() - t0 < 5
    assert len(doc.nodes) == MAX_DEPTH + 2  # root + capped divs + the <p>
    assert _words(doc.root) == "deep text after"
    assert doc.nodes[-1].parent is doc.root  # the closing tags balanced out


def test_unclosed_deep_nesting_does_not_recurse():
    doc = parse("<span><b>" * 60_000 + "x")
    assert text_of(doc.root) == "x"
