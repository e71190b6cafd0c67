"""`thresher signals`: each numeric signal's percentiles, and what a quality rule's candidate
thresholds keep (documents, whitespace tokens), checked against the table itself."""

import json
import math

import pytest
from tests.conftest import local_config, write_jsonl
from tests.unit.run.test_signals import article_html

from thresher.cli import main
from thresher.run.build import build

pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("signals-report")
    records = [{"url": f"https://r.example/{i}", "html": article_html(i, words=40 + 7 * i)} for i in range(60)]
    crawl = write_jsonl(tmp / "crawl.jsonl", records)
    out = tmp / "out"
    build([str(crawl)], out, local_config(quality={"preset": "default"}, output={"signals": True}))
    return out


def lower_percentile(values, p):
    ordered = sorted(values)
    return ordered[math.floor(p / 100 * (len(ordered) - 1))]


def test_percentiles_and_candidate_thresholds_match_the_table(dataset, capsys):
    assert main(["signals", str(dataset), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    rows = [r for f in sorted((dataset / "signals").iterdir()) for r in pq.read_table(f).to_pylist()]
    assert summary["documents"] == len(rows) == 60
    assert summary["kept"] == sum(r["status"] == "kept" for r in rows)
    words = summary["signals"]["quality.word_count"]
    measured = [(r["quality_word_count"], r["words"]) for r in rows if r["quality_word_count"] is not None]
    assert words["documents"] == len(measured)
    for p in (1, 5, 25, 50, 75, 95, 99):
        assert words["percentiles"][f"p{p}"] == lower_percentile([v for v, _ in measured], p)
    for candidate in summary["thresholds"]["quality.word_count"]:
        t = candidate["threshold"]
        assert candidate["at_least"] == {"documents": sum(v >= t for v, _ in measured),
                                         "whitespace_tokens": sum(w for v, w in measured if v >= t)}
        assert candidate["at_most"] == {"documents": sum(v <= t for v, _ in measured),
                                        "whitespace_tokens": sum(w for v, w in measured if v <= t)}
    assert "lang.score" in summary["signals"] and "lang.score" not in summary["thresholds"]
    assert "ordinal" not in summary["signals"] and "shard" not in summary["signals"]


def test_text_report_lists_signals_and_thresholds(dataset, capsys):
    assert main(["signals", str(dataset)]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"signals of {dataset}: 60 documents")
    assert "quality.word_count" in text and "candidate thresholds" in text


def test_a_dataset_without_signals_is_one_line_error(tmp_path, capsys):
    crawl = write_jsonl(tmp_path / "c.jsonl", [{"url": "https://r.example/x", "html": article_html(1)}])
    build([str(crawl)], tmp_path / "out", local_config())
    assert main(["signals", str(tmp_path / "out")]) == 1
    assert "no signals table (build it with --signals)" in capsys.readouterr().err
