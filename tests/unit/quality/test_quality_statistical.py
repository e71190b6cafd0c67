"""The statistical gate (character entropy, mean sentence length): exact drop records, and prose in
all 75 lingua languages passes it."""

from __future__ import annotations

from test_quality_languages import keep_rates

from thresher.core import Document
from thresher.core.document import Drop
from thresher.quality.config import QualityConfig
from thresher.quality.statistical import StatisticalConfig, StatisticalQuality

PROSE = (
    "The committee met on Tuesday to review the budget for the coming year. After a long discussion, "
    "the members agreed to fund the new library and to repair the old bridge over the river."
)


def test_prose_passes_and_both_metrics_are_annotated():
    doc = Document(id="1", text=PROSE)
    gate = StatisticalQuality()
    assert gate.check_all(doc) == [] and doc.annotations == {}  # deciding writes nothing
    gate.annotate(doc)
    assert 3.9 < doc.annotations["quality.char_entropy"] < 4.5
    assert doc.annotations["quality.mean_sentence_words"] == 17.0


def test_repeated_characters_are_dropped_for_low_entropy():
    doc = Document(id="1", text="ha " * 200)
    assert StatisticalQuality().check_all(doc)[0] == Drop("quality.statistical", "low_char_entropy", 1.0, 3.2)


def test_headline_fragments_are_short_sentences_and_run_ons_are_long():
    short = Document(id="1", text="\n".join(["Breaking news today.", "Read more here!", "Weather and sports."] * 5))
    (drop,) = StatisticalQuality().check_all(short)
    assert drop == Drop("quality.statistical", "short_sentences", 3.0, 8.0)
    run_on = Document(id="2", text=" ".join(PROSE.replace(".", ",").split() * 4))
    (drop,) = StatisticalQuality(StatisticalConfig(max_mean_sentence_words=85)).check_all(run_on)
    assert (drop.reason, drop.value, drop.limit) == ("long_sentences", 136.0, 85.0)


def test_a_script_without_sentence_stops_is_not_measured_for_sentence_length():
    doc = Document(id="1", text="ภาษาไทยเป็นภาษาที่มีระดับเสียงของคำแน่นอน " * 20)
    StatisticalQuality().check_all(doc)
    assert "quality.mean_sentence_words" not in doc.annotations


def test_the_statistical_gate_keeps_prose_in_all_75_languages(shared_data):
    rates = keep_rates(shared_data / "language" / "lingua" / "sentences", QualityConfig(rule_sets=("statistical",)))
    assert len(rates) == 75
    low = {lang: f"{k}/{n}" for lang, (k, n) in rates.items() if k / n < 0.97}
    assert not low, f"languages below 97%: {low}"
