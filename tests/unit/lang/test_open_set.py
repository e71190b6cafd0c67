"""The open-set gate: `und` for text in a language the cascade does not know (issue 38)."""

import csv

import pytest
from tests.conftest import shared_path

from thresher.lang.detection import UNKNOWN_LANGUAGE, Detection
from thresher.lang.ngram import NgramDetector, shipped_model
from thresher.lang.open_set import SCRIPT_NAMES, OpenSetCalibration, OpenSetGate, load_calibration, shipped_calibration

GERMAN = "Der schnelle braune Fuchs springt über den faulen Hund, und die Katze schläft in der Sonne."


def gate(**overrides: object) -> OpenSetGate:
    settings: dict[str, object] = {
        "max_mean_cost": {"de": 200.0, "nl": 1.0, "da": 1.0},
        "min_cld2_score": {"qu": 300.0},
        "default_min_cld2_score": 1000.0,
        "trust_cld2_score": 500.0,
        "min_margin": 0.0,
        "model_version": shipped_model().version,
    }
    settings.update(overrides)
    return OpenSetGate(OpenSetCalibration(**settings), NgramDetector())  # type: ignore[arg-type]


def cld2_answer(code: str) -> Detection:
    return Detection(code, 0.98, "Latn", (), None, "cld2")


def test_language_named_by_its_script_is_never_checked():
    thai = Detection("th", 1.0, "Thai", (), None, "cld2")
    assert gate().judge(thai, "สวัสดีครับ", 0) == thai


def test_language_without_calibration_needs_the_default_cld2_score():
    hausa = cld2_answer("ha")
    assert gate().judge(hausa, GERMAN, 1000) == hausa
    refused = gate(max_mean_cost={"de": 1.0}).judge(hausa, GERMAN, 999)
    assert (refused.code, refused.reason, refused.script, refused.method) == ("und", UNKNOWN_LANGUAGE, "Latn", "cld2")


def test_language_calibrated_on_cld2_score_uses_its_own_bound():
    quechua = cld2_answer("qu")
    assert gate().judge(quechua, GERMAN, 300) == quechua
    assert gate(max_mean_cost={}).judge(quechua, GERMAN, 299).code == "und"


def test_model_language_trusted_above_the_cld2_score_without_reading_ngrams():
    danish = cld2_answer("da")  # its cost bound (1.0) no text meets
    assert gate().judge(danish, GERMAN, 500) == danish
    assert not gate().needs_check("da", 500)
    assert gate().needs_check("da", 499)


def test_model_language_that_explains_the_text_badly_gives_way_to_the_model_answer_that_fits():
    judged = gate().judge(cld2_answer("nl"), GERMAN, 100)
    assert (judged.code, judged.method, judged.score) == ("de", "ngram", 0.98)


def test_model_answer_is_refused_when_it_does_not_lead_by_the_margin_or_fit():
    assert gate(min_margin=1e6).judge(cld2_answer("nl"), GERMAN, 100).code == "und"
    assert gate(max_mean_cost={"de": 1.0, "nl": 1.0}).judge(cld2_answer("nl"), GERMAN, 100).code == "und"


def test_shipped_calibration_was_measured_with_the_shipped_ngram_model():
    calibration = shipped_calibration()
    assert calibration.model_version == shipped_model().version
    assert calibration.version.startswith("open-set-")
    model_languages = {c for g in shipped_model().groups for c in g.languages}
    unchecked = model_languages - SCRIPT_NAMES
    # every language the model knows has a bound of its own (by n-gram cost, or by CLD2's score for
    # Bengali, alone in its script group)
    assert unchecked <= set(calibration.max_mean_cost) | set(calibration.min_cld2_score)
    assert len(calibration.max_mean_cost) >= 60
    assert load_calibration(calibration.to_json().encode()).max_mean_cost == calibration.max_mean_cost


def _bible(file: str, n: int = 6) -> list[str]:
    root = shared_path("language", "bible-corpus")
    lines = [x.strip() for x in (root / file).read_text(encoding="utf-8").splitlines() if x.strip()]
    return [" ".join(lines[i:i + 3]) for i in range(1, 3 * n, 3)][:n]


@pytest.mark.parametrize("file", ["Achuar-NT.txt", "Kabyle-NT.txt", "K'iche'-NT.txt", "Uma-NT.txt"])
def test_cascade_says_und_for_bible_verses_in_languages_it_does_not_know(file):
    pytest.importorskip("pycld2")
    pytest.importorskip("lingua")
    from thresher.lang.cascade import CascadeDetector, CascadePolicy

    segments = _bible(file)
    before = [CascadeDetector(policy=CascadePolicy(open_set=False)).detect(s) for s in segments]
    after = [CascadeDetector().detect(s) for s in segments]
    assert all(d.code != "und" for d in before)  # what issue 38 reported: a neighbour's label
    assert sum(d.code == "und" for d in after) >= 5
    assert {d.reason for d in after if d.code == "und"} == {UNKNOWN_LANGUAGE}
    assert {d.script for d in after} == {"Latn"}


def test_cascade_keeps_bible_verses_of_languages_it_knows():
    pytest.importorskip("pycld2")
    pytest.importorskip("lingua")
    from thresher.lang.cascade import CascadeDetector

    root = shared_path("language", "bible-corpus")
    with open(root / "languages.tsv", encoding="utf-8") as f:
        files = {row["iso639_3"]: row["file"] for row in csv.DictReader(f, delimiter="\t")}
    detector = CascadeDetector()
    for iso3, code in (("eus", "eu"), ("est", "et"), ("lav", "lv"), ("swh", "sw"), ("ukr", "uk"), ("zul", "zu")):
        assert [detector.detect(s).code for s in _bible(files[iso3])] == [code] * 6


def test_cascade_answer_is_a_pure_function_of_the_text():
    pytest.importorskip("pycld2")
    pytest.importorskip("lingua")
    from thresher.lang.cascade import CascadeDetector

    texts = _bible("Achuar-NT.txt", 3) + [GERMAN, "This is a short English sentence about the weather."]
    alone = [CascadeDetector().detect(t) for t in texts]
    shared = CascadeDetector()
    assert [shared.detect(t) for t in reversed(texts)] == alone[::-1]


def test_pool_fork_server_preloads_lingua_and_the_ngram_tables_for_a_cascade_build():
    pytest.importorskip("pycld2")
    from thresher.config import RunConfig
    from thresher.pipeline import fork_server_preloads

    modules = fork_server_preloads(RunConfig.from_dict({"lang": {"detector": "cascade"}}))
    assert {"thresher.lang.lingua_models", "thresher.lang.open_set_tables"} <= set(modules)
