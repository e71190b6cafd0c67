from quality_helpers import doc, only

from thresher.core import Drop
from thresher.quality.fineweb import FineWebConfig, FineWebQuality

S = "quality.fineweb"


def run(text: str, **enabled):
    return FineWebQuality(only(FineWebConfig, **enabled)).check_all(doc(text))


def test_line_punctuation_ratio():
    text = "no end here\nnor here\nnor there\nthis one ends."
    assert run(text, min_line_punct_ratio=0.3) == [Drop(S, "too_few_punctuated_lines", value=0.25, limit=0.3)]
    assert run("一行中文。\n另一行", min_line_punct_ratio=0.6) == [
        Drop(S, "too_few_punctuated_lines", value=0.5, limit=0.6)
    ]


def test_short_line_ratio_with_dense_scripts_measured_shorter():
    text = "short\n" + "a line that is longer than thirty characters."
    assert run(text, max_short_line_ratio=0.4) == [Drop(S, "too_many_short_lines", value=0.5, limit=0.4)]
    # twelve Han characters are not a short line
    assert run("中文的句子有十二个字符。\n中文的句子有十二个字符呢", max_short_line_ratio=0.4) == []


def test_duplicate_line_characters_exclude_line_breaks():
    # "ab" repeated: 2 duplicated characters of 2+2+4 = 8 non-newline characters
    assert run("ab\nab\ncdef", max_duplicate_line_char_ratio=0.01) == [
        Drop(S, "duplicate_line_chars", value=0.25, limit=0.01)
    ]


def test_newline_ratio_is_per_token():
    assert run("a\nb\nc\nd", max_newline_ratio=0.3) == [Drop(S, "too_many_newlines", value=0.75, limit=0.3)]


def test_blank_text_is_reported_as_no_text():
    assert run("  \n \n", max_newline_ratio=0.3) == [Drop(S, "no_text", value=0, limit=1)]
