import pytest

from thresher.lang.script import TRAITS, detect_script, script_traits


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Hello world", "Latn"),
        ("Ça va très bien, merci.", "Latn"),
        ("Привет, как дела?", "Cyrl"),
        ("Καλημέρα σας", "Grek"),
        ("مرحبا بالعالم", "Arab"),
        ("שלום עולם", "Hebr"),
        ("नमस्ते दुनिया", "Deva"),
        ("வணக்கம் உலகம்", "Taml"),
        ("สวัสดีชาวโลก", "Thai"),
        ("ສະບາຍດີ", "Laoo"),
        ("សួស្តី​ពិភពលោក", "Khmr"),
        ("မင်္ဂလာပါ", "Mymr"),
        ("你好，世界。", "Hani"),
        ("こんにちは、世界。日本語の文章です。", "Jpan"),
        ("カタカナ", "Jpan"),
        ("안녕하세요 세계", "Hang"),
        ("ሰላም ለዓለም", "Ethi"),
        ("გამარჯობა მსოფლიო", "Geor"),
        ("Բարեւ աշխարհ", "Armn"),
        ("", "Zyyy"),
        ("   \n\t ", "Zyyy"),
        ("12345 !!! ### ...", "Zyyy"),
        ("€€€ 🙂🙂", "Zyyy"),
    ],
)
def test_dominant_script(text, code):
    assert detect_script(text).code == code


def test_mixed_scripts_report_the_majority_and_the_counts():
    p = detect_script("Москва — столица России. Moscow.")
    assert p.code == "Cyrl"
    assert p.counts == {"Cyrl": 19, "Latn": 6}
    assert p.share == pytest.approx(19 / 25)


def test_chinese_with_a_few_kana_is_not_japanese():
    assert detect_script("中华人民共和国是一个国家" * 10 + "の").code == "Hani"


def test_traits_compose_the_rules():
    assert not TRAITS["Thai"].space_delimited and not TRAITS["Thai"].has_terminal_punctuation
    assert "。" in TRAITS["Hani"].terminal_punctuation and TRAITS["Hani"].dense
    assert "।" in TRAITS["Deva"].terminal_punctuation and TRAITS["Deva"].space_delimited
    assert script_traits("Qaaa").space_delimited


def test_huge_text_is_sampled(benchmark_free_text=("a" * 10_000_000)):
    assert detect_script(benchmark_free_text).code == "Latn"
    assert detect_script("я" * 10_000_000 + " tail").code == "Cyrl"
