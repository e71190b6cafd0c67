"""The language stages in the pipeline: annotations, spans, attributed drops, stats, the card."""

import pytest

from thresher.config import RunConfig
from thresher.core.document import Document, Drop
from thresher.core.errors import ConfigError
from thresher.lang.config import LangConfig
from thresher.lang.prose import prose_paragraphs
from thresher.lang.script_only import ScriptDetector
from thresher.lang.stage import LanguageAnnotator, LanguageFilter
from thresher.pipeline import Pipeline
from thresher.write.card import render_card

DE = "Der Vertrag wurde gestern in Berlin unterzeichnet, nachdem die Verhandlungen monatelang gedauert hatten."
EN = 'In his statement, the minister said: "This agreement is a historic step for both of our countries."'
FR = "Le contrat a été signé hier à Paris, après des négociations qui ont duré plusieurs mois entre les deux pays."


def test_prose_leaves_out_fenced_code_code_lines_urls_and_number_tables():
    text = f"{DE}\n\n```\ndef main():\n    return 0\n```\n\nfor (i = 0; i < n; i++) {{\n1 | 2.5 | 3.75\n{FR} https://example.com/x"
    paragraphs = prose_paragraphs(text)
    assert [p.text for p in paragraphs] == [DE, FR]
    assert [text[p.start:p.end] for p in paragraphs] == [DE, FR + " https://example.com/x"]


def test_prose_reading_stops_at_max_chars():
    paragraphs = prose_paragraphs("\n\n".join([DE] * 100), max_chars=300)
    assert sum(len(p.text) for p in paragraphs) < 300 + len(DE)


def test_script_only_annotator_writes_code_score_script_and_counts():
    from thresher.core.stats import Stats

    stats = Stats()
    annotator = LanguageAnnotator(LangConfig(detector="script"))
    annotator.bind_stats(stats)
    greek, english = Document(id="1", text="Καλημέρα σας, τι κάνετε σήμερα;"), Document(id="2", text=EN)
    annotator.annotate(greek)
    annotator.annotate(english)
    assert greek.annotations == {"lang.code": "el", "lang.label": "ell_Grek", "lang.score": 1.0, "lang.script": "Grek"}
    assert english.annotations["lang.code"] == "und"
    assert english.annotations["lang.reason"] == "script_shared_by_many_languages"
    assert english.annotations["lang.label"] == "und_Latn"
    assert stats.counters["lang/ell_Grek"] == 1 and stats.counters["lang/und_Latn"] == 1
    assert stats.counters["event/lang.script_only"] == 1


def test_filter_drops_unwanted_language_and_low_score_with_measured_values():
    f = LanguageFilter(LangConfig(languages=("en", "de"), min_score=0.65))
    fr = Document(id="1", annotations={"lang.code": "fr", "lang.label": "fra_Latn", "lang.score": 0.99})
    weak = Document(id="2", annotations={"lang.code": "en", "lang.label": "eng_Latn", "lang.score": 0.41})
    ok = Document(id="3", annotations={"lang.code": "de", "lang.label": "deu_Latn", "lang.score": 0.9})
    assert f.check(fr) == Drop("lang", "not_wanted", value="fra_Latn", limit="deu,eng")
    assert f.check(weak) == Drop("lang", "low_score", value=0.41, limit=0.65)
    assert f.check(ok) is None


def test_filter_keeps_undetermined_only_when_asked():
    und = Document(id="1", annotations={"lang.code": "und", "lang.score": 0.0})
    assert LanguageFilter(LangConfig(languages=("en",))).check(und) == Drop(
        "lang", "not_wanted", value="und_Zyyy", limit="eng"
    )
    assert LanguageFilter(LangConfig(languages=("en",), keep_undetermined=True)).check(und) is None


def test_config_normalizes_codes_and_refuses_contradictions():
    assert LangConfig(languages=("EN-us", "de", "sr-Latn", "quc_latn")).languages == ("deu", "eng", "quc_Latn",
                                                                                      "srp_Latn")
    with pytest.raises(ConfigError):
        RunConfig.from_dict({"lang": {"enabled": False, "languages": ["en"]}})
    with pytest.raises(ConfigError):
        RunConfig.from_dict({"lang": {"min_score": 1.5}})


def test_filter_keeps_a_language_named_in_either_form_and_a_script_only_when_named():
    latin = Document(id="1", annotations={"lang.code": "sr", "lang.label": "srp_Latn", "lang.score": 0.9})
    cyrillic = Document(id="2", annotations={"lang.code": "sr", "lang.label": "srp_Cyrl", "lang.score": 0.9})
    for names in (("sr",), ("srp",), ("sr-RS",)):
        f = LanguageFilter(LangConfig(languages=names))
        assert f.check(latin) is None and f.check(cyrillic) is None
    f = LanguageFilter(LangConfig(languages=("srp_Latn",)))
    assert f.check(latin) is None
    assert f.check(cyrillic) == Drop("lang", "not_wanted", value="srp_Cyrl", limit="srp_Latn")


@pytest.mark.parametrize(("names", "message"), [
    (["xx"], r"^lang.languages: 'xx': unknown ISO 639-1 code 'xx'$"),
    (["en_Latin"], r"^lang.languages: 'en_Latin': 'Latin' is neither a script"),
    (["e9"], r"^lang.languages: 'e9' is not a language code"),
    (["en", "eng"], r"^lang.languages: 'en' and 'eng' name the same language \(eng\)$"),
])
def test_bad_language_names_are_one_located_line(names, message):
    with pytest.raises(ConfigError, match=message):
        RunConfig.from_dict({"lang": {"languages": names}})


def test_cascade_annotator_writes_spans_and_share_for_a_mixed_document():
    pytest.importorskip("pycld2")
    pytest.importorskip("lingua")
    text = "\n\n".join([DE + " " + DE, EN + " " + EN, DE + " Die Opposition kritisierte den Vertrag dennoch scharf."])
    doc = Document(id="1", text=text)
    LanguageAnnotator(LangConfig(detector="cascade")).annotate(doc)
    a = doc.annotations
    assert a["lang.code"] == "de"
    assert [code for _, _, code in a["lang.spans"]] == ["de", "en", "de"]
    start, end, _ = a["lang.spans"][1]
    assert text[start:end] == EN + " " + EN
    assert 0.5 < a["lang.share"] < 0.9


def test_pipeline_attributes_language_drops_and_the_card_lists_languages():
    pytest.importorskip("pycld2")
    cfg = RunConfig.from_dict({"lang": {"languages": ["en", "de"]}, "quality": {"preset": "none"}})
    pipeline = Pipeline(cfg)
    docs = [{"url": f"u{i}", "text": (t + " ") * 6} for i, t in enumerate([DE, EN, FR])]
    kept = list(pipeline.process(docs))
    assert [d.annotations["lang.code"] for d in kept] == ["de", "en"]
    stats = pipeline.stats.to_dict()
    assert stats["drops"] == {"lang": {"not_wanted": 1}}
    assert stats["counters"]["lang/fra_Latn"] == 1 and stats["reconciles"]
    card = render_card({"thresher_version": "0", "config_hash": "x", "records": 2, "shards": [], "format": "jsonl",
                        "bytes": 0, "inputs": [], "config": {}}, stats)
    assert "## Languages detected" in card and "| fra_Latn | fr | 1 |" in card


def test_annotator_writes_only_the_keys_it_declares():
    from thresher.core.stages import undeclared_annotations

    annotator = LanguageAnnotator(LangConfig(detector="script"))
    mixed = Document(id="1", text="Καλημέρα σας, τι κάνετε σήμερα;\n\nสวัสดีครับ ยินดีต้อนรับ\n\nThis is English.")
    assert undeclared_annotations(annotator, mixed) == []
    assert "lang.spans" in mixed.annotations


def test_script_detector_is_used_when_asked_even_with_the_extra():
    assert isinstance(LanguageAnnotator(LangConfig(detector="script")).detector, ScriptDetector)


def test_assess_counts_languages_and_attributes_language_drops(tmp_path, capsys):
    import json

    from thresher.cli import main

    path = tmp_path / "docs.jsonl"
    rows = [{"url": "u1", "text": "Καλημέρα σας, τι κάνετε σήμερα;"}, {"url": "u2", "text": "สวัสดีครับ ยินดีต้อนรับ"}]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    assert main(["assess", str(path), "--json", "--lang-detector", "script", "--languages", "el"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["languages"] == {"el": 1, "th": 1}
    assert report["drops"]["lang/not_wanted"] == 1


def test_language_stage_runs_after_normalize_and_before_quality_by_default():
    from thresher.pipeline import build_document_stages

    names = [s.name for s in build_document_stages(RunConfig())]
    assert names.index("normalize") + 1 == names.index("lang.detect") < names.index("quality.gopher")
    assert "lang" not in names  # no filter without --languages or --min-language-score
    off = [s.name for s in build_document_stages(RunConfig.from_dict({"lang": {"enabled": False}}))]
    assert "lang.detect" not in off


def test_a_second_task_in_the_process_builds_no_new_detector():
    """Issue 29: each scan task builds its document stages, but the detector and lingua's detectors
    are built once per process and settings (built per task, they cost time and memory that a
    worker never returned)."""
    pytest.importorskip("pycld2")
    pytest.importorskip("lingua")
    from thresher.config import RunConfig
    from thresher.lang import cascade
    from thresher.pipeline import DocumentChain

    texts = [
        "Dobar dan, kako ste danas? Ja sam dobro, hvala vam puno na pitanju.",
        "Selamat pagi, apa kabar? Saya baik-baik saja, terima kasih banyak.",
        "The cat sat on the mat.\n\nEl gato se sentó en la alfombra durante la tarde.",
    ]

    def annotate_all(chain: DocumentChain) -> list[dict]:
        docs = [Document(id=str(i), text=t) for i, t in enumerate(texts)]
        for doc in docs:
            chain.run(doc)
        return [doc.annotations for doc in docs]

    config = RunConfig.from_dict({"lang": {"detector": "cascade"}, "quality": {"preset": None}})
    first = DocumentChain(config)
    first_results = annotate_all(first)
    built = dict(cascade._lingua_detectors)
    assert built, "the texts should reach lingua"
    second = DocumentChain(config)
    assert second.stages is not first.stages
    detectors = [s.detector for chain in (first, second) for s in chain.stages if s.name == "lang.detect"]
    assert len(detectors) == 2 and detectors[0] is detectors[1]
    assert annotate_all(second) == first_results
    assert cascade._lingua_detectors.keys() == built.keys()
    assert all(cascade._lingua_detectors[k] is built[k] for k in built)


def test_card_gives_the_und_share_and_the_scripts_of_those_documents():
    stats = {"seen": 4, "kept": 4, "counters": {"lang/en": 3, "lang/und": 2, "lang.und/Latn": 1, "lang.und/Cans": 1}}
    card = render_card({"thresher_version": "0", "config_hash": "x", "records": 4, "shards": [], "format": "jsonl",
                        "bytes": 0, "inputs": [], "config": {}}, stats)
    assert "| und | 2 |" in card
    assert "`und` (no language decided, or a language the detector does not know): 2 of 5 documents (40.0%);" \
           " their scripts: Cans 1, Latn 1." in card


def test_annotator_counts_und_documents_by_script():
    from thresher.core.stats import Stats

    annotator = LanguageAnnotator(LangConfig(detector="script"))
    stats = Stats()
    annotator.bind_stats(stats)
    annotator.annotate(Document(id="1", text="This text is in a script many languages share."))
    counters = stats.to_dict()["counters"]
    assert counters["lang/und_Latn"] == 1 and counters["lang.und/Latn"] == 1
