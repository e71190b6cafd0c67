"""Language-aware quality: [quality.by_language] thresholds, stop words and bad words by lang.code."""

import json

import pytest
from tests.conftest import shared_path

from thresher.config import RunConfig
from thresher.core.document import Document, Drop
from thresher.core.errors import ConfigError
from thresher.lang.labels import label
from thresher.lang.routing import build_routed_quality_stages
from thresher.quality.badwords import BadWords, BadWordsConfig
from thresher.quality.gopher import GopherQuality, GopherQualityConfig

DE = "Das ist ein kurzer deutscher Satz über die Stadt und das Land."
EN = "This is a short English sentence about the town and the country."


def _gopher_drops(config: RunConfig, doc: Document) -> list[Drop]:
    stages = build_routed_quality_stages(config.quality)
    gopher = next(s for s in stages if s.name == "quality.gopher")
    return gopher.check_all(doc)


def test_by_language_thresholds_apply_to_that_language_only():
    cfg = RunConfig.from_dict({"quality": {"by_language": {"de": {"gopher": {"min_words": 5}}}}})
    de = Document(id="1", text=DE, annotations={"lang.code": "de"})
    en = Document(id="2", text=EN, annotations={"lang.code": "en"})
    assert _gopher_drops(cfg, de) == []
    assert _gopher_drops(cfg, en)[0] == Drop("quality.gopher", "too_few_words", value=12, limit=50)


def test_by_language_round_trips_through_the_manifest_form_and_hashes():
    cfg = RunConfig.from_dict({"quality": {"by_language": {"DE": {"gopher": {"min_words": 5}}}}})
    again = RunConfig.from_dict(json.loads(json.dumps(cfg.to_dict())))
    assert again.hash == cfg.hash and again.quality.by_language == {"deu": {"gopher": {"min_words": 5}}}
    assert hash(cfg.quality) == hash(again.quality)


@pytest.mark.parametrize("override", [{"de": {"preset": "c4"}}, {"de": {"gopher": {"min_wordz": 3}}}, "{nope", ["de"],
                                      {"qq": {"gopher": {"min_words": 3}}}, {"eng_Lat": {"gopher": {"min_words": 3}}},
                                      {"e1": {"gopher": {"min_words": 3}}}])
def test_by_language_refuses_what_it_cannot_route(override):
    with pytest.raises(ConfigError):
        RunConfig.from_dict({"quality": {"by_language": override}})


def test_routing_by_the_alias_and_by_the_canonical_label_decides_the_same():
    docs = [Document(id=str(i), text=text, annotations={"lang.code": code, "lang.script": script})
            for i, (text, code, script) in enumerate([(EN, "en", "Latn"), (DE, "de", "Latn"), (EN, "en", "Cyrl")])]
    for doc in docs:  # as the language stage writes them
        doc.annotations["lang.label"] = label(doc.annotations["lang.code"], doc.annotations["lang.script"])
    decisions = {}
    for name in ("en", "eng", "en-US", "eng_Latn"):
        cfg = RunConfig.from_dict({"quality": {"by_language": {name: {"gopher": {"min_words": 5}}}}})
        decisions[name] = [_gopher_drops(cfg, d) for d in docs]
    assert decisions["en"] == decisions["eng"] == decisions["en-US"]
    assert decisions["en"][0] == [] and decisions["en"][1] != []  # English routed, German not
    # a script-specific name routes only that script: the Cyrillic-labelled English document is not routed
    assert decisions["eng_Latn"][0] == [] and decisions["eng_Latn"][2] != [] and decisions["en"][2] == []


def test_a_script_specific_override_wins_over_the_languages():
    cfg = RunConfig.from_dict({"quality": {"by_language": {"en": {"gopher": {"min_words": 5}},
                                                           "eng_Latn": {"gopher": {"min_words": 40}}}}})
    doc = Document(id="1", text=EN, annotations={"lang.code": "en", "lang.script": "Latn", "lang.label": "eng_Latn"})
    assert _gopher_drops(cfg, doc)[0] == Drop("quality.gopher", "too_few_words", value=12, limit=40)


def test_two_names_of_one_language_are_one_located_error():
    with pytest.raises(ConfigError, match=r"^quality.by_language: 'en' and 'eng' name the same language \(eng\)$"):
        RunConfig.from_dict({"quality": {"by_language": {"en": {"gopher": {"min_words": 5}},
                                                         "eng": {"gopher": {"min_words": 6}}}}})


def test_by_language_from_the_command_line_is_json(tmp_path):
    from thresher.cli import build_parser, config_from_args

    args = build_parser().parse_args(["build", "in.jsonl", "-o", str(tmp_path / "o"),
                                      "--quality-by-language", '{"ja": {"gopher": {"min_words": 20}}}'])
    quality = config_from_args(args).quality
    assert quality.for_language("ja").gopher.min_words == 20 == quality.for_language("jpn").gopher.min_words


def test_stop_word_rule_serves_languages_counted_from_frequencies():
    rule = GopherQuality(GopherQualityConfig(min_words=1))
    sv = Document(
        id="1", text="Det här är en mening på svenska och den handlar om staden.", annotations={"lang.code": "sv"}
    )
    pl = Document(id="2", text="Lorem ipsum dolor sit amet consectetur.", annotations={"lang.code": "pl"})
    fi = Document(id="3", text="Tämä on suomenkielinen lause kaupungista.", annotations={"lang.code": "fi"})
    assert rule.check_all(sv) == []
    assert Drop("quality.gopher", "too_few_stop_words", value=0, limit=2) in rule.check_all(pl)
    assert not any(d.reason == "too_few_stop_words" for d in rule.check_all(fi))  # no list for Finnish


def test_bad_words_list_follows_the_detected_language():
    directory = shared_path("blocklists", "ldnoobw")
    rule = BadWords(BadWordsConfig(directory=str(directory)))
    word = sorted(rule.lists["de"].single)[0]
    as_german = Document(id="1", text=f"Ein Satz mit {word} darin.", annotations={"lang.code": "de"})
    as_other = Document(id="2", text=f"Ein Satz mit {word} darin.", annotations={"lang.code": "th"})
    assert rule.check_all(as_german)[0].reason == "bad_words"
    assert rule.check_all(as_other) == []


def test_bad_words_lists_filed_under_other_codes_are_found():
    directory = shared_path("blocklists", "ldnoobw")
    rule = BadWords(BadWordsConfig(directory=str(directory)))
    assert rule.list_for("nb") is rule.lists["no"] and rule.list_for("tl") is rule.lists["fil"]
