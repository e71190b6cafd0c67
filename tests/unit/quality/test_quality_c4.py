from quality_helpers import doc, only

from thresher.core import Drop
from thresher.quality.c4 import C4Config, C4LineFilter, C4Quality

S = "quality.c4"
PROSE = "This is the first line of prose.\n"


def test_line_cleanup_removes_short_javascript_and_policy_lines():
    d = doc(
        "A fine sentence stands here.\nMenu\nPlease enable JavaScript to view this page.\n"
        "This site uses cookies for analytics.\nAnother fine sentence here[1].\n"
    )
    assert C4LineFilter(C4Config()).transform(d) is None
    assert d.text == "A fine sentence stands here.\nAnother fine sentence here."
    assert d.annotations["quality.c4_removed_lines"] == 3


def test_terminal_punctuation_requirement_is_optional():
    text = "A line without an end\nA line with an end.\nA line that trails off...\n"
    d = doc(text)
    C4LineFilter(C4Config()).transform(d)
    assert d.text == "A line without an end\nA line with an end.\nA line that trails off..."
    d = doc(text)
    C4LineFilter(C4Config(), require_terminal_punctuation=True).transform(d)
    assert d.text == "A line with an end."


def test_terminal_punctuation_follows_the_script():
    d = doc("这是第一句话。\n这是没有句号的一行\n")
    C4LineFilter(C4Config(), require_terminal_punctuation=True).transform(d)
    assert d.text == "这是第一句话。"


def test_line_with_an_overlong_word_is_removed():
    d = doc("word " + "x" * 1001 + " end.\nA short fine line.")
    C4LineFilter(C4Config()).transform(d)
    assert d.text == "A short fine line."


def test_document_with_no_line_left_is_dropped():
    assert C4LineFilter(C4Config()).transform(doc("Home\nAbout")) == Drop("quality.c4_lines", "no_lines_left", 0, 1)


def test_document_rules_report_exact_records():
    rules = C4Quality(C4Config())
    assert rules.check_all(doc(PROSE * 5 + "Lorem ipsum dolor sit amet.")) == [Drop(S, "lorem_ipsum", 1, 0)]
    assert rules.check_all(doc(PROSE * 5 + "function f() { return 1; }")) == [Drop(S, "curly_bracket", 1, 0)]
    assert rules.check_all(doc("One. Two! Three?\nFour")) == [Drop(S, "too_few_sentences", 4, 5)]
    assert rules.check_all(doc("One. Two! Three? Four. Five.")) == []


def test_mediawiki_language_conversion_is_not_code():
    rules = C4Quality(only(C4Config, max_curly_brackets=0))
    assert rules.check_all(doc("Висина 298 -{m}-, а минималној 165 -{m}-.")) == []


def test_sentence_count_does_not_apply_without_terminal_punctuation():
    d = doc("ภาษาไทยเป็นภาษาที่สวยงาม มีประวัติศาสตร์ยาวนาน")
    assert C4Quality(only(C4Config, min_sentences=5)).check_all(d) == []
    assert "quality.sentence_count" not in d.annotations


def test_token_count_after_cleanup_is_exact_without_tokenizing_again():
    from thresher.quality.text import AnalysisCache, tokenize

    text = ("A fine sentence stands here [1], with words.\nMenu\nEnable JavaScript, please.\n"
            "word " + "x" * 1001 + "\nAnother fine sentence here[edit].\n这是中文。")
    cache = AnalysisCache()
    d = doc(text)
    assert cache.get(d).token_count == len(tokenize(text, character_words=True))  # Han present
    C4LineFilter(C4Config(), cache=cache).transform(d)
    after = cache.get(d)
    assert "tokens" not in after.__dict__
    assert after.token_count == len(tokenize(d.text, after.script.has_character_words))
