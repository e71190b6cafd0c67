import gzip
import json
import os

import pytest

from thresher.config import RunConfig
from thresher.core.document import Document, Drop
from thresher.core.errors import ConfigError, InputError
from thresher.decontam import index as index_module
from thresher.decontam.config import DecontamConfig
from thresher.decontam.index import BYTES_PER_NGRAM, build_index
from thresher.decontam.index_store import load_index
from thresher.decontam.items import benchmark_name
from thresher.decontam.stage import DecontamCut, DecontamFilter, cut_spans
from thresher.pipeline import build_document_stages

Q1 = "Janet's ducks lay sixteen eggs per day and she eats three of them for breakfast every single morning"
Q2 = "A robe takes two bolts of blue fiber and half that much white fiber so how many bolts in total"


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


@pytest.fixture
def bench(tmp_path):
    return write_jsonl(tmp_path / "bench.jsonl", [{"id": "q1", "question": Q1, "answer": "48 eggs"},
                                                   {"question": Q2, "answer": "3 bolts"}])


def doc(text):
    return Document(id="d", text=text, url="https://a.test/")


def test_verbatim_item_is_dropped_with_its_benchmark_item_and_ngram(bench):
    f = DecontamFilter(DecontamConfig(benchmarks=(bench,), fields=("question", "answer"), ngram=8))
    drop = f.check(doc("Intro words here. " + Q1.upper() + "!!! and an ending"))
    assert drop == Drop("decontam", "benchmark_overlap", value=12, limit=1, detail={
        "benchmark": "bench", "item": "q1", "ngram": "janet s ducks lay sixteen eggs per day", "items": 1})


def test_item_without_id_is_named_by_its_line_number(bench):
    f = DecontamFilter(DecontamConfig(benchmarks=(bench,), fields=("question",), ngram=8))
    assert f.check(doc(Q2)).detail["item"] == "2"


def test_clean_and_short_overlaps_pass(bench):
    f = DecontamFilter(DecontamConfig(benchmarks=(bench,), fields=("question",), ngram=8))
    assert f.check(doc("Ducks lay eggs per day, and a robe takes bolts of fiber.")) is None
    assert f.check(doc("janet s ducks lay sixteen eggs per")) is None  # 7 words < n
    strict = DecontamFilter(DecontamConfig(benchmarks=(bench,), fields=("question",), ngram=8, min_overlap=5))
    assert strict.check(doc("janet s ducks lay sixteen eggs per day and she")) is None  # 3 shared n-grams


def test_cut_mode_removes_only_the_overlap(bench):
    stage = DecontamCut(DecontamConfig(benchmarks=(bench,), fields=("question",), ngram=8, mode="cut"))
    d = doc("Before the quote. " + Q1 + ". After the quote.")
    assert stage.transform(d) is None
    assert d.text == "Before the quote. . After the quote."
    assert d.annotations == {"decontam.cut_ngrams": 12, "decontam.items": ["bench#q1"]}
    only = doc(Q1)
    assert stage.transform(only) == Drop("decontam", "empty_after_cut", value=0, limit=1)


def test_cut_spans_merges_overlapping_ngrams():
    assert cut_spans("a b c d e f g", [1, 2], 3) == "a f g"
    assert cut_spans("a b c d e f g", [0, 4], 2) == "c d g"


def test_frequency_cut_exempts_ngrams_shared_by_many_items(tmp_path):
    common = "how many dollars did she make in total at the end"
    bench = write_jsonl(tmp_path / "b.jsonl", [{"text": f"item {i} unique{i} words here. {common}"} for i in range(5)])
    text = f"An article says {common} today."
    assert DecontamFilter(DecontamConfig(benchmarks=(bench,), ngram=8, max_items_per_ngram=None)).check(doc(text))
    exempting = DecontamConfig(benchmarks=(bench,), ngram=8, max_items_per_ngram=4)
    assert DecontamFilter(exempting).check(doc(text)) is None
    assert build_index(exempting).exempt == 6  # the 4 of the phrase, 2 more with the shared "words here"


def test_common_reference_texts_exempt_ngrams(tmp_path, bench):
    phrase = " ".join(Q1.split()[:8])
    ref = tmp_path / "ref.txt"
    ref.write_text("\n".join(f"doc {i} {phrase} more" for i in range(3)), encoding="utf-8")
    cfg = DecontamConfig(
        benchmarks=(bench,), fields=("question",), ngram=8, common_texts=(str(ref),), max_common_docs=3
    )
    assert build_index(cfg).exempt == 2  # "Janet's" is two tokens: 9 tokens, 2 n-grams
    assert DecontamFilter(cfg).check(doc(phrase)) is None


def test_plain_text_file_items_are_lines(tmp_path):
    bench = tmp_path / "mmlu.txt"
    bench.write_text(f"\n{Q1}\n\n{Q2}\n", encoding="utf-8")
    drop = DecontamFilter(DecontamConfig(benchmarks=(str(bench),), ngram=8)).check(doc(Q2))
    assert drop.detail["benchmark"] == "mmlu" and drop.detail["item"] == "4"


def test_gzip_benchmark_and_generic_names(tmp_path):
    d = tmp_path / "gsm8k"
    d.mkdir()
    path = d / "test.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(json.dumps({"text": Q1}) + "\n")
    assert benchmark_name(str(path)) == "gsm8k/test"
    assert len(build_index(DecontamConfig(benchmarks=(str(path),), ngram=8))) == 12


def test_empty_malformed_and_fieldless_benchmark_files_are_clear_errors(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(InputError, match="holds no items"):
        build_index(DecontamConfig(benchmarks=(str(empty),)))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok fine"}\n{"text": broken\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.jsonl:2: not a JSON object"):
        build_index(DecontamConfig(benchmarks=(str(bad),)))
    other = write_jsonl(tmp_path / "other.jsonl", [{"question": "q"}])
    with pytest.raises(InputError, match="none of the fields text"):
        build_index(DecontamConfig(benchmarks=(other,)))
    with pytest.raises(ConfigError, match="missing.jsonl"):
        RunConfig.from_dict({"decontam": {"benchmarks": [str(tmp_path / "missing.jsonl")]}})


def test_index_past_its_cap_is_refused_while_reading(tmp_path):
    huge = tmp_path / "huge.txt"
    with open(huge, "w", encoding="utf-8") as f:
        for i in range(2000):
            f.write(" ".join(f"w{i}x{j}" for j in range(40)) + "\n")
    with pytest.raises(InputError, match="more than decontam.max_ngrams = 10,000"):
        build_index(DecontamConfig(benchmarks=(str(huge),), ngram=8, max_ngrams=10_000))


def test_a_huge_line_is_refused_before_it_is_read_whole(tmp_path, monkeypatch):
    from thresher.decontam import items

    monkeypatch.setattr(items, "MAX_LINE_CHARS", 1000)
    huge = tmp_path / "one-line.txt"
    huge.write_text("word " * 5000, encoding="utf-8")
    with pytest.raises(InputError, match=r"one-line.txt:1: line longer than 1,000 characters"):
        build_index(DecontamConfig(benchmarks=(str(huge),), ngram=8))


def test_index_costs_twelve_bytes_per_ngram_plus_the_bitmap(bench):
    index = build_index(DecontamConfig(benchmarks=(bench,), fields=("question",), ngram=8))
    assert BYTES_PER_NGRAM == 12
    assert index.nbytes == len(index) * 12 + (1 << 21)


def test_pure_and_numpy_lookups_agree(bench, monkeypatch):
    pytest.importorskip("numpy")
    index = build_index(DecontamConfig(benchmarks=(bench,), fields=("question", "answer"), ngram=8))
    text = f"x {Q2} y {Q1} z"
    fast = index.matches(text)
    monkeypatch.setattr(index, "use_numpy", False)
    assert index.matches(text) == fast and len(fast) == 12 + 13


def test_pure_and_numpy_builds_agree(bench, monkeypatch):
    pytest.importorskip("numpy")
    cfg = DecontamConfig(benchmarks=(bench,), fields=("question", "answer"), ngram=4)
    a = build_index(cfg)
    monkeypatch.setattr(index_module, "numpy_available", lambda: False)
    b = build_index(cfg)
    assert a.hashes == b.hashes and a.items_of == b.items_of


def test_index_loaded_once_per_process_and_rebuilt_when_the_file_changes(tmp_path):
    path = tmp_path / "b.txt"
    path.write_text(Q1 + "\n", encoding="utf-8")
    cfg = DecontamConfig(benchmarks=(str(path),), ngram=8)
    assert load_index(cfg) is load_index(DecontamConfig(benchmarks=(str(path),), ngram=8))
    path.write_text(Q1 + "\n" + Q2 + "\n", encoding="utf-8")
    os.utime(path, ns=(1, 1))
    assert len(load_index(DecontamConfig(benchmarks=(str(path),), ngram=8))) == 12 + 13


def test_benchmark_sha256_is_hashed_config_and_checked(bench, tmp_path):
    cfg = RunConfig.from_dict({"decontam": {"benchmarks": [bench]}})
    assert len(cfg.decontam.benchmark_sha256[0]) == 64
    again = RunConfig.from_dict(cfg.to_dict())
    assert again.hash == cfg.hash
    with open(bench, "a", encoding="utf-8") as f:
        f.write(json.dumps({"text": "one more item in the file"}) + "\n")
    assert RunConfig.from_dict({"decontam": {"benchmarks": [bench]}}).hash != cfg.hash
    # the recorded config still loads (reports need no benchmark file); building its index refuses
    recorded = RunConfig.from_dict(cfg.to_dict())
    assert recorded.hash == cfg.hash
    with pytest.raises(InputError, match="has sha256 .*, the config records"):
        build_index(recorded.decontam)


def test_recorded_config_loads_without_its_benchmark_files(tmp_path):
    data = {"decontam": {"benchmarks": [str(tmp_path / "gone.jsonl")], "benchmark_sha256": ["0" * 64]}}
    cfg = RunConfig.from_dict(data)
    with pytest.raises(InputError, match="gone.jsonl"):
        build_index(cfg.decontam)


def test_off_by_default_and_placed_before_pii(bench):
    assert not any(s.name == "decontam" for s in build_document_stages(RunConfig()))
    names = [s.name for s in build_document_stages(RunConfig.from_dict(
        {"decontam": {"benchmarks": [bench], "fields": ["question"]}, "pii": {"types": ["email"]}}))]
    assert names[-2:] == ["decontam", "pii"]
