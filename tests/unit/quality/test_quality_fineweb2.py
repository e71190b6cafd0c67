"""The fineweb2 rule set: table reading, routing, bad config folders, agreement with datatrove's decisions."""

from __future__ import annotations

import json
from pathlib import Path

from thresher.core import Document
from thresher.core.document import Drop
from thresher.quality.config import QualityConfig
from thresher.quality.fineweb2 import Fineweb2Config, Fineweb2Quality
from thresher.quality.fineweb2_codes import config_key
from thresher.quality.fineweb2_table import load_table, parse_config, read_folder
from thresher.quality.stages import build_quality_stages

FIXTURE = Path(__file__).parent / "data" / "fineweb2_datatrove_decisions.json"
CONFIG = """dup_line_frac: 0.263
dup_n_grams:
- - 5
  - 0.141
language_score: 0.821
line_punct_thr: 0.0
max_avg_word_length: 15
max_non_alpha_words_ratio: 0.774
min_avg_word_length: 0
new_line_ratio: 0.152
stopwords:
- der
- "f\\xFCr"
- "lang\\
  wort"
top_n_grams:
- - 2
  - 0.169
"""


def test_shipped_table_has_every_published_pair():
    table = load_table(None)
    assert len(table.pairs) == 1929
    deu = table.pairs["deu_Latn"]
    assert deu.dup_line_frac == 0.263 and deu.top_n_grams[0] == (2, 0.169) and "für" in deu.stopwords


def test_yaml_subset_reads_escapes_pairs_and_continued_strings():
    values = parse_config(CONFIG, "x.yml")
    assert values["dup_n_grams"] == [[5, 0.141]]
    assert values["stopwords"] == ["der", "für", "langwort"]
    assert values["max_avg_word_length"] == 15


def test_malformed_and_incomplete_files_give_one_located_line_each(tmp_path):
    (tmp_path / "deu_Latn.yml").write_text(CONFIG, encoding="utf-8")
    (tmp_path / "fra_Latn.yml").write_text(CONFIG + "  bad: [\n", encoding="utf-8")
    (tmp_path / "ita_Latn.yml").write_text("dup_line_frac: 0.3\n", encoding="utf-8")
    pairs, problems = read_folder(tmp_path)
    assert sorted(pairs) == ["deu_Latn"]
    assert len(problems) == 2
    assert problems[0].startswith(f"{tmp_path / 'fra_Latn.yml'}:19: unexpected indentation")
    assert problems[1].startswith(f"{tmp_path / 'ita_Latn.yml'}: missing ")


def test_a_missing_folder_is_one_line_and_documents_take_the_fallback(tmp_path):
    stage = Fineweb2Quality(Fineweb2Config(configs=str(tmp_path / "nope"), fallback="deu_Latn"))
    assert stage.table.problems == (f"{tmp_path / 'nope'}: not a folder of FineWeb-2 configs",)
    doc = Document(id="1", text="kurz", annotations={"lang.code": "de"})
    assert stage.evaluate(doc).annotations["quality.fineweb2.config"] == "deu_Latn"


def test_routing_maps_iso639_1_and_script_to_the_config_key():
    pairs = load_table(None).pairs
    assert config_key("de", "Latn", pairs) == "deu_Latn"
    assert config_key("zh", "Hani", pairs) == "cmn_Hani"
    # the code of a canonical label (`zho_Hani`, `ara_Arab`) finds the individual language's config too
    assert config_key("zho", "Hani", pairs) == "cmn_Hani" and config_key("ara", "Arab", pairs) == "arb_Arab"
    assert config_key("sr", "Latn", pairs) == "srp_Latn"
    assert config_key("az", "Arab", pairs) == "azb_Arab"
    assert config_key("quc", "Latn", pairs) == "quc_Latn"
    assert config_key("en", "Latn", pairs) is None  # FineWeb-2 has no English config
    assert config_key("und", "Latn", pairs) is None


def test_pair_without_config_is_not_judged_by_default():
    doc = Document(id="1", text="Too short.", annotations={"lang.code": "en"})
    ev = Fineweb2Quality().evaluate(doc)
    assert ev.drops == [] and ev.annotations == {"quality.fineweb2.config": "none"}


def test_short_german_document_is_dropped_with_measured_value():
    doc = Document(id="1", text="Der Hund und die Katze.", annotations={"lang.code": "de"})
    drops = Fineweb2Quality().check_all(doc)
    assert Drop("quality.fineweb2", "too_few_words", 5, 50) in drops


def test_preset_and_rule_set_names_build_the_stage():
    assert [s.name for s in build_quality_stages(QualityConfig(preset="fineweb2"))] == ["quality.fineweb2"]
    assert "fineweb2" not in QualityConfig(preset="all").active_rule_sets
    assert QualityConfig(rule_sets=("fineweb2",)).active_rule_sets == ("fineweb2",)


def test_decisions_match_datatrove_on_the_committed_sample():
    """Per rule, thresher decides as datatrove did, except the differences recorded at generation."""
    import importlib.util

    bench = Path(__file__).resolve().parents[3] / "benchmarks" / "fineweb2_agreement.py"
    spec = importlib.util.spec_from_file_location("fineweb2_agreement", bench)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    stage = Fineweb2Quality()
    rows = json.loads(FIXTURE.read_text(encoding="utf-8"))["documents"]
    assert len(rows) == 60
    for row in rows:
        annotations = {"lang.code": row["code"], "lang.script": row["script"]}
        doc = Document(id=row["id"], text=row["text"], annotations=annotations)
        ev = stage.evaluate(doc)
        assert ev.annotations["quality.fineweb2.config"] == row["key"]
        mine = module.rule_failures([d.reason for d in ev.drops])
        assert sorted(mine.symmetric_difference(row["datatrove_failed"])) == row["known_difference"], row["id"]
