"""Decontamination and PII redaction through a real build and the decontam-report verb."""

import json

from tests.conftest import local_config, shared_path, write_jsonl

from thresher.cli import main
from thresher.decontam.report import contamination_report
from thresher.run.build import build
from thresher.write.manifest import read_shards

FILLER = "This is a long and clean page about gardening, tomatoes and the weather in spring, page {}. "


def gsm8k_crawl(tmp_path, questions):
    records = []
    for i in range(8):
        text = FILLER.format(i) * 6
        if i in (1, 4):
            text += " Homework: " + questions[i // 4] + f" Mail the answer to pupil{i}@school-mail.de."
        records.append({"url": f"https://g.test/{i}", "text": text})
    return write_jsonl(tmp_path / "crawl.jsonl", records)


def questions(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(next(f))["question"] for _ in range(2)]


def test_drop_mode_build_rejects_feed_the_report(tmp_path, capsys):
    bench = str(shared_path("benchmarks-for-decontamination", "gsm8k", "test.jsonl"))
    src = gsm8k_crawl(tmp_path, questions(bench))
    config = local_config(decontam={"benchmarks": [bench], "fields": ["question", "answer"]}, pii={"types": ["email"]})
    result = build([str(src)], tmp_path / "out", config, rejects=tmp_path / "rej")
    assert result.stats.by_prefix("drop") == {"decontam/benchmark_overlap": 2}
    assert result.manifest["config"]["decontam"]["benchmark_sha256"] == list(config.decontam.benchmark_sha256)
    report = contamination_report(tmp_path / "rej")
    assert [(f.benchmark, f.item, f.documents) for f in report.rows()] == [
        ("gsm8k/test", "1", 1),
        ("gsm8k/test", "2", 1),
    ]
    assert report.rows()[0].examples[0]["url"] == "https://g.test/1"
    assert main(["decontam-report", str(tmp_path / "rej"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["contaminated_documents"] == 2 and out["benchmarks"] == {"gsm8k/test": {"items": 2, "documents": 2}}


def test_cut_mode_keeps_the_document_and_the_dataset_feeds_the_report(tmp_path, capsys):
    bench = str(shared_path("benchmarks-for-decontamination", "gsm8k", "test.jsonl"))
    src = gsm8k_crawl(tmp_path, questions(bench))
    config = local_config(decontam={"benchmarks": [bench], "fields": ["question"], "mode": "cut"},
                          pii={"types": ["email"]}, dedup={"near": {"method": None}})
    result = build([str(src)], tmp_path / "out", config)
    assert result.stats.by_prefix("event")["decontam.cut_documents"] == 2
    assert result.stats.by_prefix("event")["pii.email"] == 2
    records = {r["url"]: r for r in read_shards(tmp_path / "out")}
    assert len(records) == 8
    cut = records["https://g.test/1"]
    assert "Janet" not in cut["text"] and cut["text"].endswith("Homework: ? Mail the answer to <EMAIL>.")
    assert cut["annotations"]["decontam.items"] == ["gsm8k/test#1"]
    assert main(["decontam-report", str(tmp_path / "out")]) == 0
    assert "gsm8k/test#2" in capsys.readouterr().out


def test_report_of_a_folder_without_rejects_is_a_clear_error(tmp_path, capsys):
    assert main(["decontam-report", str(tmp_path)]) == 1
    assert "neither a rejects folder" in capsys.readouterr().err
