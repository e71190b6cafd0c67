import pytest
from quality_helpers import doc

from thresher.core import ConfigError, Drop
from thresher.quality.badwords import BadWords, BadWordsConfig


@pytest.fixture
def directory(tmp_path):
    (tmp_path / "en").write_text("darn\nfiddle sticks\n")
    (tmp_path / "ja").write_text("ばか\n")
    (tmp_path / "LICENSE").write_text("not a list\n")
    return tmp_path


def test_whole_words_and_phrases_case_insensitive(directory):
    f = BadWords(BadWordsConfig(directory=str(directory)))
    assert f.check_all(doc("Well, DARN it. Oh fiddle sticks!", lang_code="en")) == [
        Drop("quality.bad_words", "bad_words", 2, 0, {"words": ["darn", "fiddle sticks"]})
    ]
    assert f.check_all(doc("darned fiddle and sticks", lang_code="en")) == []


def test_substring_match_for_languages_without_spaces(directory):
    f = BadWords(BadWordsConfig(directory=str(directory)))
    assert f.check_all(doc("あいつはばかだ", lang_code="ja")) == [
        Drop("quality.bad_words", "bad_words", 1, 0, {"words": ["ばか"]})
    ]


def test_no_language_or_no_list_means_no_judgement(directory):
    f = BadWords(BadWordsConfig(directory=str(directory)))
    assert f.check_all(doc("darn")) == []
    assert f.check_all(doc("darn", lang_code="de")) == []
    assert f.check_all(doc("darn", lang_code="en-GB")) == [
        Drop("quality.bad_words", "bad_words", 1, 0, {"words": ["darn"]})
    ]


def test_missing_directory_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError):
        BadWords(BadWordsConfig(directory=str(tmp_path / "nope")))


def test_real_ldnoobw_lists_load(shared_data):
    f = BadWords(BadWordsConfig(directory=str(shared_data / "blocklists" / "ldnoobw")))
    assert {"en", "de", "ja", "zh", "fr-ca-u-sd-caqc"} <= set(f.lists)
    assert f.check_all(doc("A perfectly clean sentence about gardening.", lang_code="en")) == []
