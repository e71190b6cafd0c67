from quality_helpers import doc, only

from thresher.core import Drop
from thresher.core.stages import apply_stage
from thresher.quality.gopher import GopherQuality, GopherQualityConfig

S = "quality.gopher"


def run(text: str, language: str | None = None, **enabled):
    rules = GopherQuality(only(GopherQualityConfig, **enabled))
    d = doc(text) if language is None else doc(text, lang_code=language)
    return apply_stage(rules, d), d  # the stage runner writes the measured annotations


def test_short_document_is_dropped_with_measured_value():
    assert run("two words", min_words=3)[0] == [Drop(S, "too_few_words", value=2, limit=3)]


def test_punctuation_is_not_counted_as_words():
    assert run("one , two ... three !", min_words=4)[0] == [Drop(S, "too_few_words", value=3, limit=4)]


def test_long_document_reports_the_upper_bound():
    assert run("w " * 11, max_words=10)[0] == [Drop(S, "too_many_words", value=11, limit=10)]


def test_mean_word_length_too_short_and_too_long():
    assert run("a bb a bb", min_mean_word_length=3.0)[0] == [Drop(S, "mean_word_too_short", value=1.5, limit=3.0)]
    assert run("abcdefghijkl abcdefghij", max_mean_word_length=10.0)[0] == [
        Drop(S, "mean_word_too_long", value=11.0, limit=10.0)
    ]


def test_dense_script_uses_the_lower_floor():
    # Hangul: 2 syllables per word on average passes the dense floor of 1.0, not the Latin floor of 3
    assert run("한국 사람 서울 부산", min_mean_word_length=3.0, dense_min_mean_word_length=1.0)[0] == []


def test_scripts_without_spaces_count_characters_and_skip_mean_length():
    drops, d = run("我们是中国人。", min_words=10, min_mean_word_length=3.0)
    assert drops == [Drop(S, "too_few_words", value=6, limit=10)]
    assert "quality.mean_word_length" not in d.annotations


def test_hash_and_ellipsis_ratios_are_per_token():
    # tokens: # a # b # c -> 6 tokens, 3 hashes
    assert run("#a #b #c", max_hash_ratio=0.1)[0] == [Drop(S, "too_many_hashes", value=0.5, limit=0.1)]
    # tokens: a ... b … -> 4 tokens, 2 ellipses
    assert run("a ... b …", max_ellipsis_ratio=0.1)[0] == [Drop(S, "too_many_ellipses", value=0.5, limit=0.1)]


def test_bullet_and_ellipsis_lines():
    text = "• one\n- two\n  • three\nfour..."
    assert run(text, max_bullet_line_ratio=0.5)[0] == [Drop(S, "too_many_bullet_lines", value=0.75, limit=0.5)]
    assert run(text, max_ellipsis_line_ratio=0.2)[0] == [Drop(S, "too_many_ellipsis_lines", value=0.25, limit=0.2)]


def test_alphabetic_word_ratio_over_words_or_tokens():
    # words: a 1 2 3 -> 1 of 4 has a letter; tokens add one comma
    assert run("a, 1 2 3", min_alpha_word_ratio=0.8)[0] == [Drop(S, "too_few_alphabetic_words", value=0.25, limit=0.8)]
    assert run("a, 1 2 3", min_alpha_word_ratio=0.8, alpha_ratio_denominator="tokens")[0] == [
        Drop(S, "too_few_alphabetic_words", value=0.2, limit=0.8)
    ]


def test_stop_words_only_for_a_known_language():
    assert run("a cat sat on the mat", min_stop_words=2)[0] == []
    assert run("a cat sat on the mat", "en", min_stop_words=2)[0] == [
        Drop(S, "too_few_stop_words", value=1, limit=2)
    ]
    assert run("The cat and the mat", "en", min_stop_words=2)[0] == []
    assert run("eine Katze", "xx", min_stop_words=2)[0] == []


def test_every_failing_rule_is_reported_in_rule_order():
    drops, d = run("# ...", min_words=5, max_hash_ratio=0.1, max_ellipsis_ratio=0.1)
    assert [x.reason for x in drops] == ["too_few_words", "too_many_hashes", "too_many_ellipses"]
    assert d.annotations["quality.word_count"] == 0
    assert d.annotations["quality.hash_ratio"] == 0.5


def test_metrics_are_annotated_on_passing_documents():
    _, d = run("The quick brown fox jumps over the lazy dog.", min_words=1, min_mean_word_length=3.0)
    assert d.annotations["quality.word_count"] == 9
    assert d.annotations["quality.mean_word_length"] == round(35 / 9, 4)
