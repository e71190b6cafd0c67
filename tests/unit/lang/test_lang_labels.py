"""Canonical language labels (`lang.label`: ISO 639-3 + script) and their ISO 639-1 alias (`lang.code`)."""

from __future__ import annotations

import logging

import pytest

from thresher.core.errors import ConfigError
from thresher.lang.labels import ISO_639_1_TO_3, LanguageName, alias, label, label_of, parse_language, to_639_3


def test_every_iso639_1_code_converts_to_its_639_3_code_and_back():
    assert len(ISO_639_1_TO_3) >= 180
    for one, three in ISO_639_1_TO_3.items():
        assert len(three) == 3 and to_639_3(one) == three and alias(three) == one


def test_labels_of_detections():
    assert label("en", "Latn") == "eng_Latn" and label("quc", "Latn") == "quc_Latn"
    # a macrolanguage is labelled with its own code, whichever individual language a detector named
    assert label("zh", "Hani") == "zho_Hani" and label("ar", "Arab") == "ara_Arab" and label("nb", "Latn") == "nob_Latn"
    assert label("und", "Cans") == "und_Cans" and label(None, None) == "und_Zyyy"


def test_a_records_label_is_its_own_else_made_from_code_and_script():
    assert label_of({"lang.label": "srp_Cyrl", "lang.code": "sr"}) == "srp_Cyrl"
    assert label_of({"lang.code": "sr", "lang.script": "Latn"}) == "srp_Latn"  # a record made before labels
    assert label_of({}) == "und_Zyyy"


@pytest.mark.parametrize(("name", "key"), [
    ("en", "eng"), ("EN-us", "eng"), ("eng", "eng"), ("eng_Latn", "eng_Latn"), ("sr-latn", "srp_Latn"),
    ("iw", "heb"), ("quc", "quc"), ("zh-Hant-TW", "zho_Hani"), ("pt_BR", "por"), ("es-419", "spa"),
])
def test_user_written_names_become_canonical_keys(name, key):
    assert parse_language(name, "x").key == key


def test_a_name_without_a_script_matches_every_script_of_its_language():
    assert LanguageName("srp").matches("srp_Cyrl") and LanguageName("srp").matches("srp_Latn")
    assert LanguageName("srp", "Latn").matches("srp_Latn") and not LanguageName("srp", "Latn").matches("srp_Cyrl")
    assert not LanguageName("srp").matches("hrv_Latn")


@pytest.mark.parametrize("name", ["", "x", "english", "e1", "qq", "en_Latin", "eng_Latn_x1"])
def test_malformed_names_and_unknown_639_1_codes_are_one_located_line(name):
    with pytest.raises(ConfigError) as err:
        parse_language(name, "lang.languages")
    assert str(err.value).startswith("lang.languages: ") and "\n" not in str(err.value)


def test_an_unknown_639_3_code_is_kept_with_one_warning_line():
    # the module's own logger, with a handler of the test's: a CLI run earlier in the process configures
    # the `thresher` logger (its level, propagation, a handler on a stream since closed), so caplog's
    # root handler may see the line twice or not at all
    seen = []

    class Keep(logging.Handler):
        def emit(self, record):
            seen.append(record.getMessage())

    logger = logging.getLogger("thresher.lang.labels")
    handler, level, propagate = Keep(logging.WARNING), logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    logger.propagate = False
    try:
        assert parse_language("zzq", "lang.languages").key == "zzq"
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate
    assert seen == [
        "lang.languages: 'zzq': ISO 639-3 code 'zzq' is in no table thresher ships (no detector may name it)"]
