"""Bad input from issue 3: each handled without crashing, with a reason naming what is wrong."""

import time

from quality_helpers import doc

from thresher.core import Drop
from thresher.core.stages import apply_stage
from thresher.quality.config import QualityConfig
from thresher.quality.stages import build_quality_stages


def first_drop(text: str, url: str | None = None, preset: str = "all") -> Drop | None:
    d = doc(text, url)
    for stage in build_quality_stages(QualityConfig(preset=preset)):
        drops = apply_stage(stage, d)
        if drops:
            return drops[0]
    return None


def test_empty_text():
    assert first_drop("") == Drop("quality.gopher", "too_few_words", 0, 50)


def test_whitespace_only():
    assert first_drop(" \n\t \n ") == Drop("quality.gopher", "too_few_words", 0, 50)


def test_symbols_only():
    text = "### *** !!! ... --- $$$ " * 40
    assert first_drop(text) == Drop("quality.gopher", "too_few_words", 0, 50)
    # the repetition set, run on its own, sees the pattern: "#" "#" occurs twice in each of the
    # 40 repeats, 80 times 3 characters of 960
    repetition = build_quality_stages(QualityConfig(preset="gopher"))[1]
    assert Drop("quality.repetition", "top_2_gram_too_frequent", 0.25, 0.2) in repetition.check_all(doc(text))


def test_single_ten_megabyte_line_is_bounded_in_time():
    text = ("lorem " + "abcdefghij " * 9) * 100_000  # 10.6 MB, one line
    start = time.perf_counter()
    drop = first_drop(text)
    assert time.perf_counter() - start < 10
    assert drop == Drop("quality.gopher", "too_many_words", 1_000_000, 100_000)


def test_one_giant_word():
    assert first_drop("x" * 2_000_000) == Drop("quality.gopher", "too_few_words", 1, 50)


def test_mixed_scripts_in_one_document():
    text = ("Москва — столица России, крупнейший город страны. "
            "The city is the capital of Russia and its largest city. "
            "北京是中国的首都。") * 12
    d = doc(text)
    for stage in build_quality_stages(QualityConfig(preset="gopher")):
        apply_stage(stage, d)
    assert d.annotations["quality.word_count"] > 100


def test_malformed_url_names_the_problem(tmp_path):
    (tmp_path / "block.txt").write_text("bad.com\n")
    cfg = QualityConfig(urls=__import__("thresher.quality.urls", fromlist=["x"]).UrlFilterConfig(
        blocklists=(str(tmp_path / "block.txt"),)))
    stage = build_quality_stages(cfg)[0]
    assert stage.check_all(doc("text", "http://[bad")) == [Drop("quality.urls", "malformed_url", "http://[bad", None)]
    assert stage.check_all(doc("text", "")) == []
