"""Issue 14 item 7: in Markdown text, headings, list items and code are not judged as prose lines
by C4's line cleanup (`## Introduction` used to be removed as a short line)."""

from quality_helpers import doc

from thresher.quality.c4 import C4Config, C4LineFilter, is_markdown

MARKDOWN = (
    "## Introduction\n\n"
    "This is a long paragraph of prose with many words in it. It ends well.\n\n"
    "- first item\n- second\n1. one\n\n"
    "Menu\n\n"
    "```\nx = 1\n    print(x)  # javascript\n```\n\n"
    "| a | b |\n\n"
    "Another paragraph of prose that is fine and long enough here.\n"
)


def test_markdown_headings_lists_and_code_survive_the_line_cleanup():
    d = doc(MARKDOWN)
    assert C4LineFilter(C4Config()).transform(d) is None
    assert d.text == (
        "## Introduction\n\n"
        "This is a long paragraph of prose with many words in it. It ends well.\n\n"
        "- first item\n- second\n1. one\n\n"
        "```\nx = 1\n    print(x)  # javascript\n```\n\n"
        "| a | b |\n\n"
        "Another paragraph of prose that is fine and long enough here."
    )
    assert d.annotations["quality.c4_removed_lines"] == 1  # only "Menu", a short prose line


def test_markdown_structure_is_exempt_from_terminal_punctuation_but_not_from_policy_lines():
    d = doc("# Title\n\nA sentence that ends.\n\n- Privacy policy\n- a list item\n\nA line without an end\n")
    C4LineFilter(C4Config(), require_terminal_punctuation=True).transform(d)
    assert d.text == "# Title\n\nA sentence that ends.\n\n- a list item"


def test_plain_text_is_judged_line_by_line_as_in_c4():
    d = doc("A fine sentence stands here.\n- Home\n- About\nAnother fine sentence here.\n")
    C4LineFilter(C4Config()).transform(d)
    assert d.text == "A fine sentence stands here.\nAnother fine sentence here."
    assert not is_markdown(d.text) and is_markdown("text\n### Heading\n") and is_markdown("```\ncode\n```")
    assert not is_markdown("#hashtag and C# code")
