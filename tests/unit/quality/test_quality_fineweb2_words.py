"""The fineweb2 rule set's word tokens: spaCy's splitting rules per FineWeb-2 pair, as datatrove counts them."""

from __future__ import annotations

import pytest

from thresher.core import Document
from thresher.quality.fineweb2 import Fineweb2Quality, alpha_token_ratio
from thresher.quality.fineweb2_words import MULTILINGUAL, indic_tokens, spacy_like_tokens, word_rules
from thresher.quality.text import TextAnalysis


def tokens(text: str, pair: str = "kab_Latn") -> list[str]:
    return spacy_like_tokens(text, word_rules(pair))


def test_pairs_take_their_pipelines_departures_from_the_multilingual_rules():
    assert word_rules("kab_Latn") == word_rules(MULTILINGUAL)  # Kabyle's tokenizer is spaCy's multilingual one
    assert not word_rules("deu_Latn").hyphen_split and word_rules("deu_Latn").ordinal_period
    assert word_rules("fra_Latn").elision_split and not word_rules("eng_Latn").elision_split
    assert word_rules("zsm_Latn").clitic_suffix and not word_rules("zsm_Latn").hash_split
    assert word_rules("xyz_Latn") == word_rules(MULTILINGUAL)  # a pair not listed
    assert "a." in word_rules(MULTILINGUAL).kept_whole and "Sra." in word_rules("cat_Latn").kept_whole


@pytest.mark.parametrize(("pair", "text", "expected"), [
    ("kab_Latn", "yenna-yasen", ["yenna", "-", "yasen"]),
    ("deu_Latn", "Nord-Süd", ["Nord-Süd"]),
    ("eng_Latn", "1496.", ["1496", "."]),
    ("deu_Latn", "1496.", ["1496."]),
    ("fra_Latn", "l'obligation", ["l'", "obligation"]),
    ("eng_Latn", "don't", ["do", "n't"]),  # spaCy's English special case
    ("zsm_Latn", "po'ingku-ku", ["po'ingku", "-ku"]),
    ("zsm_Latn", "26-Agu-12", ["26", "-", "Agu", "-", "12"]),
    ("eng_Latn", "#tag", ["#", "tag"]),
    ("zsm_Latn", "#tag", ["#tag"]),
    ("eng_Latn", "60%", ["60", "%"]),
    ("ron_Latn", "60%", ["60%"]),
])
def test_language_specific_shapes(pair, text, expected):
    assert tokens(text, pair) == expected


def test_each_pipelines_special_cases_and_colon_and_digit_hyphen_rules():
    # as datatrove 0.10.1's tokenizers split them (spaCy 3.8 blank pipelines)
    assert tokens("Va sortir del poble, dels camps.", "cat_Latn") == [
        "Va", "sortir", "d", "el", "poble", ",", "d", "els", "camps", "."]
    assert tokens("OECD:s rapport 08-555 och 1:sta", "swe_Latn") == ["OECD:s", "rapport", "08-555", "och", "1:sta"]
    assert tokens("Ettei EU:n 2-1", "fin_Latn") == ["Ett", "ei", "EU:n", "2-1"]
    assert tokens("Undang-undang dan anak-anak", "zsm_Latn") == ["Undang-undang", "dan", "anak-anak"]
    assert tokens("12-34 OECD:s", "dan_Latn") == ["12-34", "OECD", ":", "s"]
    assert tokens("12-34 OECD:s 1:sta", "kab_Latn") == ["12", "-", "34", "OECD", ":", "s", "1", ":", "sta"]


def test_abbreviations_of_the_pairs_pipeline_keep_their_period():
    assert tokens("Sra.", "cat_Latn") == ["Sra."]
    assert tokens("Sra.", "kab_Latn") == ["Sra", "."]
    assert tokens("(p.", "fra_Latn") == ["(", "p."]  # checked again once the bracket is stripped
    assert tokens("word.", "fra_Latn") == ["word", "."]


def test_final_period_splits_only_after_the_letters_spacy_knows():
    assert tokens("word.") == ["word", "."]
    assert tokens("USA.") == ["USA", "."]  # two capitals
    assert tokens("A.") == ["A."]  # an initial keeps its period
    assert tokens("ᎦᏚ.") == ["ᎦᏚ."]  # Cherokee is not among spaCy's letters
    assert tokens("ասաց.") == ["ասաց."]  # nor Armenian


def test_punctuation_around_words_and_kept_inside_them():
    assert tokens("(test),") == ["(", "test", ")", ","]
    assert tokens("«Ya»,") == ["«", "Ya", "»", ","]
    assert tokens("end...") == ["end", "..."]
    assert tokens("ո՛չ") == ["ո՛չ"]  # Armenian emphasis marks are not punctuation there
    assert tokens("and/or e,g") == ["and", "/", "or", "e", ",", "g"]
    assert tokens("3.5 1,000") == ["3.5", "1,000"]
    assert tokens("example.com/path") == ["example.com/path"]


def test_symbols_split_off_and_special_cases_spelled_by_several_pieces_merge():
    # as datatrove 0.10.1's tokenizers split them: a symbol of category So is a token wherever it is,
    # and pieces that together spell a special case (`):`, `''`) are one token, as spaCy matches them
    assert tokens("(test): «Ya», x™y 47° Salawasna™ word'' 😀ok") == [
        "(", "test", "):", "«", "Ya", "»", ",", "x", "™", "y", "47", "°", "Salawasna", "™", "word", "''", "😀", "ok"]
    # a special case with letters spelled by pieces of a longer chunk too
    assert tokens("bocah laki-laki-umur 10", "zsm_Latn") == ["bocah", "laki-laki", "-", "umur", "10"]
    # a trailing hyphen splits off in Malay-like pipelines, a leading one only in Catalan
    assert tokens("Aprenents- -na", "ppk_Latn") == ["Aprenents", "-", "-na"]
    assert tokens("Aprenents- -la 6.4.-", "cat_Latn") == ["Aprenents", "-", "-", "la", "6.4", ".", "-"]


def test_alpha_ratio_counts_spacy_tokens_and_segmenter_sized_words():
    measure = alpha_token_ratio(word_rules("kab_Latn"))
    # 3 words with letters, 1 hyphen, 1 period: 3/5 (thresher's own tokens would give 2/3)
    assert measure(TextAnalysis("sen-yella abc.")) == pytest.approx(3 / 5)
    thai = TextAnalysis("กขคงจฉชซ 12 กขคงจฉชซ")  # 16 one-letter words, 4 to a word; one number
    assert measure(thai) == pytest.approx(4 / 5)
    assert measure(TextAnalysis("")) is None


def test_counts_with_a_token_denominator_use_the_same_tokens():
    from thresher.quality.fineweb2 import per_spacy_token, spacy_newline_ratio, spacy_word_count, stop_word_count
    from thresher.quality.gopher import hash_ratio

    rules = word_rules("kab_Latn")
    text = "sen-yella #tag\nabc."  # spaCy-like: sen - yella # tag abc . (7 tokens, 4 of them words)
    a = TextAnalysis(text)
    assert spacy_word_count(rules)(a) == 4
    assert spacy_newline_ratio(rules)(a) == pytest.approx(1 / 7)
    assert per_spacy_token(lambda t: t.count("#"), rules, hash_ratio)(a) == pytest.approx(1 / 7)
    # French elided articles are tokens of their own, so they count as stop words
    french = TextAnalysis("l'homme et d'autres")
    assert stop_word_count(frozenset({"l'", "d'"}), word_rules("fra_Latn"))(french) == 2
    assert stop_word_count(frozenset({"l'", "d'"}), word_rules("eng_Latn"))(french) == 0


def test_long_runs_of_punctuation_cost_linear_time():
    """Affixes are stripped by index: a 400,000-character chunk that was quadratic (a copy per
    stripped character: 20 s for 80,000) now takes a fraction of a second."""
    import time

    start = time.process_time()
    assert len(tokens("a" * 200_000 + ")" * 200_000)) == 200_001
    assert tokens("(" * 100_000 + "x")[-1] == "x"
    assert time.process_time() - start < 10.0


def test_ngram_measures_read_the_spacy_like_tokens_once_per_document():
    from thresher.quality.fineweb2 import over_spacy_tokens
    from thresher.quality.repetition import duplicate_ngram_fraction

    seen: list[list[str]] = []

    def record(a: TextAnalysis) -> float:
        seen.append(a.tokens)
        return 0.0

    rules = word_rules("kab_Latn")
    a = TextAnalysis("yenna-yasen d wa. " * 3)
    over_spacy_tokens(record, rules)(a)
    over_spacy_tokens(record, rules)(a)
    assert seen[0] == spacy_like_tokens(a.text, rules) and seen[0] is seen[1]  # split once
    thai = TextAnalysis("กขคงจฉชซ")
    over_spacy_tokens(record, rules)(thai)
    assert seen[2] == thai.tokens  # scripts without spaces keep thresher's character words
    # 18 tokens, "yenna - yasen d wa ." three times: the 5-gram at token 6 repeats the one at 0
    # ("yenna-yasendwa", 14 characters, n-grams joined without spaces as the filter joins them),
    # then the one at 11 the one at 5 (".yenna-yasend", 13); the next would start past the end
    assert over_spacy_tokens(duplicate_ngram_fraction(5), rules)(a) == pytest.approx((14 + 13) / len(a.text))


def test_brahmic_and_urdu_pairs_take_indic_nlps_trivial_tokenizer():
    assert word_rules("hin_Deva").tokenizer == "indic" and word_rules("guj_Gujr").tokenizer == "indic"
    assert word_rules("urd_Arab").tokenizer == "urdu" and word_rules("deu_Latn").tokenizer == "spacy"
    # marks become tokens, a line break without a space stays inside a token, `3.5` and `10:30` stay
    # whole (a number run at the very start of the text does not: the tokenizer matched leaves it split)
    text = '12 . 5 नमस्ते दुनिया\nयह 3.5 किलो, और 10:30 बजे। "उद्धरण" - अंत॥'
    assert spacy_like_tokens(text, word_rules("hin_Deva")) == [
        "12", ".", "5", "नमस्ते", "दुनिया\nयह", "3.5", "किलो", ",", "और", "10:30", "बजे", "।", '"', "उद्धरण", '"',
        "-", "अंत", "॥"]
    # Urdu mode: Arabic-script marks split, numbers not rejoined
    assert indic_tokens("یہ ایک جملہ ہے۔ 3.5 کلو، اور\nدوسری سطر", urdu=True) == [
        "یہ", "ایک", "جملہ", "ہے", "۔", "3", ".", "5", "کلو", "،", "اور\nدوسری", "سطر"]


def test_indic_pairs_count_words_and_their_length_over_those_tokens():
    stage = Fineweb2Quality()
    # `वाक्य\nदूसरा` is one token there (two for spaCy's rules and thresher's own tokenizer)
    doc = Document(id="1", text="यह एक वाक्य\nदूसरा वाक्य है।", annotations={"lang.code": "hi", "lang.script": "Deva"})
    measured = stage.measure(doc)
    assert measured["quality.fineweb2.word_count"] == 5
    assert measured["quality.fineweb2.mean_word_length"] == (2 + 2 + 11 + 5 + 2) / 5
    assert measured["quality.fineweb2.alpha_token_ratio"] == 5 / 6  # the danda is a token without a letter
