"""No page can stall the tokenizer: issue 13's catastrophic-backtracking inputs, generated at sizes
that took minutes with the earlier patterns (1,000 repeats: a minute; a 56 KB page: forever), each
extract in well under a second."""

from __future__ import annotations

import time

import pytest

from thresher.extract.builtin import BuiltinExtractor
from thresher.extract.tree import parse, text_of

REPEATS = 20_000
ADVERSARIAL = {
    "b_without_gt": "<b" * REPEATS,
    "javascript_comparisons": "<p>" + "if(a<b&&c<d)" * REPEATS,
    "a_and_quote": '<a "' * REPEATS,
    "stray_lt_and_quotes": "<p>" + 'x < y "' * REPEATS,
    "unclosed_comments": "<!--" * REPEATS,
    "unclosed_quoted_value": '<div title="' + "a>" * REPEATS,
    "unclosed_quotes_1e6": '<p class="' + '"' * 1_000_000,
    "script_escapes": "<script><!--<script>" + "-<" * REPEATS,
    "nested_markup_declarations": "<!" * REPEATS,
    "attribute_value_10mb": '<div data-x="' + "y" * 10_000_000 + '"><p>kept</p></div>',
    "end_tags_with_attributes": '</p a="' * REPEATS,
    "character_references": "&#" * REPEATS + "&#x" * REPEATS + "&amp" * REPEATS,
    "br_only": "<br>" * 200_000,
    "script_never_closed": "<p>before</p><script>" + "var x = '<p>no</p>';" * REPEATS,
    "lone_surrogates_and_nul_references": "<p>" + "\ud800&#xD800;&#0;\x00&#x110000;" * REPEATS,
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_page_extracts_in_well_under_a_second(name):
    html = ADVERSARIAL[name]
    t0 = time.process_time()
    BuiltinExtractor().extract(html)
    assert time.process_time() - t0 < 0.5, name


def test_text_after_a_stray_quote_is_kept():
    # browsers end the tag at the first ">" after the stray quote: the paragraph is not swallowed
    doc = parse('<p style="color:red"">one</p><a href="x.asp"">two</a><td width="104">three</td>')
    assert text_of(doc.root) == "onetwothree"


def test_a_quoted_value_longer_than_any_cap_still_ends_the_tag():
    doc = parse('<div data-json="' + "{x:1}" * 2000 + '">after</div>')
    assert text_of(doc.root) == "after"


def test_escaped_script_data_does_not_end_at_an_inner_script_end_tag():
    html = '<script><!-- document.write("<script>x()</script>"); --></script><p>text</p>'
    assert text_of(parse(html).root) == "text"


def test_an_unclosed_script_hides_the_rest_but_keeps_what_came_before():
    assert text_of(parse("<p>before</p><script>var x = '<p>no</p>';").root) == "before"
