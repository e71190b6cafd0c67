"""Language detection: the script-only core, the cascade of the lang extra, and bad input."""

import random
import time

import pytest
from tests.conftest import shared_path

from thresher.lang.codes import from_cld2, normalize_code
from thresher.lang.detection import EMPTY, NO_LETTERS, SHARED_SCRIPT, clean_text
from thresher.lang.script_only import ScriptDetector, detect_by_script


@pytest.mark.parametrize(("text", "code", "script"), [
    ("สวัสดีครับ ยินดีต้อนรับสู่ประเทศไทย", "th", "Thai"),
    ("გამარჯობა, როგორ ხარ?", "ka", "Geor"),
    ("Καλημέρα σας, τι κάνετε;", "el", "Grek"),
    ("שלום, מה שלומך היום?", "he", "Hebr"),
    ("Բարև ձեզ, ինչպե՞ս եք", "hy", "Armn"),
    ("안녕하세요, 만나서 반갑습니다", "ko", "Hang"),
    ("これは日本語の文章です。", "ja", "Jpan"),
])
def test_script_alone_decides_languages_written_only_in_their_script(text, code, script):
    d = detect_by_script(text)
    assert (d.code, d.script, d.reason) == (code, script, None)
    assert d.score == 1.0


@pytest.mark.parametrize("text", ["This is English.", "Это русский текст.", "هذا نص عربي"])
def test_script_alone_leaves_shared_scripts_undetermined_with_the_reason(text):
    d = detect_by_script(text)
    assert (d.code, d.reason) == ("und", SHARED_SCRIPT)


@pytest.mark.parametrize(("text", "reason"), [("", EMPTY), ("   \n ", EMPTY), ("123 456 !!! 😀😀", NO_LETTERS)])
def test_script_alone_gives_reasons_for_text_without_language(text, reason):
    assert detect_by_script(text).reason == reason


def test_clean_text_removes_surrogates_reads_c1_as_cp1252_and_cuts():
    assert clean_text("bad \ud800 text", 100) == "bad  text"
    assert clean_text("une \x9cuvre", 100) == "une œuvre"
    assert clean_text("x" * 50, 10) == "x" * 10


def test_codes_map_cld2_spellings_to_iso():
    assert [from_cld2(c) for c in ("iw", "no", "zh-Hant", "un", "xx-Qaai", "en")] == [
        "he",
        "nb",
        "zh",
        "und",
        "und",
        "en",
    ]
    assert [normalize_code(c) for c in ("en-US", "PT_br", "iw")] == ["en", "pt", "he"]


# -- the cascade (lang extra) ------------------------------------------------------------------


@pytest.fixture(scope="module")
def cascade():
    pytest.importorskip("pycld2")
    pytest.importorskip("lingua")
    from thresher.lang.cascade import CascadeDetector

    return CascadeDetector()


BAD_INPUT = {
    "empty": "",
    "digits": "1234 5678 90",
    "emoji": "😀🎉👍 🙈",
    "one_word": "Haus",
    "ten_megabytes": "a" * 10_000_000,
    "mixed_scripts_in_a_word": "Mοscоw",  # Latin with Greek omicron and Cyrillic o
    "unsupported_language": "ⵜⴰⵎⴰⵣⵉⵖⵜ ⵜⴰⵏⴰⵡⴰⵢⵜ",  # Tifinagh
    "surrogates": "text \udc80\ud800 with lone surrogates in English words",
    "c1_controls": "\x80\x81\x9f",
}


@pytest.mark.parametrize("name", sorted(BAD_INPUT))
def test_bad_input_gets_a_defined_result_in_bounded_time(cascade, name):
    t0 = time.process_time()
    d = cascade.detect(BAD_INPUT[name])
    elapsed = time.process_time() - t0
    assert elapsed < 1.0
    assert 0.0 <= d.score <= 1.0
    if not d.decided:
        assert d.reason
    if name in ("empty", "digits", "emoji"):
        assert (d.code, d.reason) == ("und", EMPTY if name == "empty" else NO_LETTERS)
    if name == "unsupported_language":
        assert d.code == "und" and d.script == "Tfng"


def _sentences(per_language: int):
    root = shared_path("language", "lingua", "sentences")
    out = []
    for path in sorted(root.glob("*.txt")):
        lines = [x.strip() for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
        random.Random(f"thresher-lang-{path.stem}").shuffle(lines)  # as benchmarks/lang_eval.py
        out += [(path.stem, x) for x in lines[-per_language:]]  # the tail: outside its test and dev splits
    return out


def test_cascade_beats_cld2_alone_on_lingua_sentences(cascade):
    from thresher.lang.cascade import CascadeDetector

    data = _sentences(4)  # 300 sentences of 75 languages
    cld2_only = CascadeDetector(use_lingua=False)
    ours = sum(cascade.detect(t).code == g for g, t in data) / len(data)
    alone = sum(cld2_only.detect(t).code == g for g, t in data) / len(data)
    assert ours >= 0.93
    assert ours >= alone


def test_documents_of_several_sentences_are_identified(cascade):
    data = _sentences(5)
    by_lang: dict[str, list[str]] = {}
    for g, t in data:
        by_lang.setdefault(g, []).append(t)
    hits = sum(cascade.detect(" ".join(ts)).code == g for g, ts in by_lang.items())
    assert hits / len(by_lang) >= 0.97


def test_script_detector_paragraphs_each_get_their_script_language():
    d, codes = ScriptDetector().detect_paragraphs(["Καλημέρα σας", "สวัสดีครับ"])
    assert codes == ["el", "th"]
