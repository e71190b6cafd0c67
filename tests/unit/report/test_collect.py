"""report/collect.py: what `thresher report` gathers from a dataset, checked against the dataset."""

from __future__ import annotations

import gzip
import json
import random
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from tests.conftest import write_jsonl

from thresher.cli import main
from thresher.report.collect import (
    TEXT_PREVIEW,
    ReportData,
    _host,
    collect,
    iter_rejects,
    ordered_stage_drops,
    read_samples,
    rule_bounds,
    stage_rank,
)
from thresher.write.manifest import read_shards

WORDS = ("the harbour board met on monday to agree a plan for the new quay while fishermen asked about "
         "the winter nets and the price of fuel that the boats would need before the season").split()


def _text(i: int) -> str:
    rng = random.Random(i)
    return "\n".join(" ".join(rng.choice(WORDS) for _ in range(rng.randint(12, 20))).capitalize() + "."
                     for _ in range(12))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("collect")
    records = [{"url": f"https://host{i % 3}.example/{i}", "text": _text(i)} for i in range(12)]
    records += [{"url": f"https://copy.example/{i}", "text": _text(0)} for i in range(2)]  # a cluster of 3
    records += [{"url": "https://short.example/", "text": "Too short to keep."}]
    crawl = write_jsonl(tmp / "crawl.jsonl", records)
    dataset, rejects = tmp / "ds", tmp / "rejects"
    assert main(["build", str(crawl), "-o", str(dataset), "--rejects", str(rejects), "--engine", "local", "-q"]) == 0
    return dataset, rejects


def test_stage_rank_follows_the_stage_table_plugins_before_dedup_phased_stages_after():
    stages = ["dedup.exact", "myplugin", "host_cap", "quality.gopher", "pii", "extract", "decontam", "embed", "read",
              "classify.edu", "dedup.semantic"]
    assert sorted(stages, key=lambda s: stage_rank(s, ["semantic", "host_cap"])) == [
        "read", "extract", "quality.gopher", "decontam", "classify.edu", "pii", "myplugin",
        "dedup.exact", "dedup.semantic", "embed", "host_cap"]


def test_ordered_stage_drops_sums_reasons_per_stage():
    stats = {"drops": {"dedup.exact": {"duplicate": 4}, "quality.c4": {"a": 1, "b": 2}}}
    assert ordered_stage_drops(stats) == [("quality.c4", 3), ("dedup.exact", 4)]
    assert ordered_stage_drops({}) == [] and ordered_stage_drops({"drops": None}) == []


def test_funnel_subtracts_malformed_then_each_stage_in_order():
    stats = {"seen": 100, "malformed": 5, "drops": {"dedup.exact": {"duplicate": 10}, "quality.c4": {"x": 20}}}
    data = ReportData("ds", {}, stats, [], has_rejects=False)
    assert data.funnel() == [("seen", 100), ("after reading (malformed removed)", 95),
                             ("after quality.c4", 75), ("after dedup.exact", 65)]
    assert ReportData("ds", {}, {}, [], has_rejects=False).funnel() == [
        ("seen", 0), ("after reading (malformed removed)", 0)]


@pytest.mark.parametrize(("url", "host"), [
    (None, "(no url)"), ("", "(no url)"), ("https://Example.ORG:8080/a", "example.org"),
    ("file:///tmp/x", "(no host)"), ("http://[::1/", "(bad url)"),
])
def test_host_names_every_url_even_broken_ones(url, host):
    assert _host(url) == host


def test_rule_bounds_of_an_unreadable_config_is_empty():
    assert rule_bounds({"quality": {"preset": "no-such-preset"}}) == []
    assert rule_bounds({"no_such_section": {}}) == []


def test_rule_bounds_are_the_quality_rules_the_config_builds():
    rules = rule_bounds({"quality": {"preset": "gopher"}})
    by_metric = {r.metric: r for r in rules}
    words = by_metric["quality.word_count"]
    assert words.stage == "quality.gopher"
    assert (words.min_value, words.max_value) == (50.0, 100_000.0)
    assert words.bounds == [50.0, 100_000.0]
    assert (words.low_reason, words.high_reason) == ("too_few_words", "too_many_words")


def test_read_samples_groups_by_rule_in_name_order_and_cuts_text(tmp_path):
    path = tmp_path / "samples.jsonl.gz"
    items = [{"rule": "quality.c4/b", "id": 2, "url": None, "text": "x" * (TEXT_PREVIEW + 10), "drop": {"r": 1}},
             {"rule": "dedup.exact/duplicate", "id": "a", "text": None},
             {"rule": "quality.c4/b", "id": "c", "url": "https://u/", "text": "short"}]
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("".join(json.dumps(i) + "\n" for i in items))
    got = read_samples(path)
    assert list(got) == ["dedup.exact/duplicate", "quality.c4/b"]
    assert got["dedup.exact/duplicate"][0].text == "" and got["dedup.exact/duplicate"][0].url is None
    first, second = got["quality.c4/b"]
    assert (first.id, len(first.text), first.drop) == ("2", TEXT_PREVIEW, {"r": 1})
    assert (second.id, second.url, second.text) == ("c", "https://u/", "short")


def test_iter_rejects_skips_blank_lines_and_a_missing_file(tmp_path):
    assert list(iter_rejects(tmp_path)) == []
    with gzip.open(tmp_path / "rejects.jsonl.gz", "wt", encoding="utf-8") as f:
        f.write('{"id": 1}\n\n  \n{"id": 2}\n')
    assert list(iter_rejects(tmp_path)) == [{"id": 1}, {"id": 2}]


def test_collect_counts_match_the_shards_and_the_stats(built):
    dataset, rejects = built
    stats = json.loads((dataset / "stats.json").read_text())
    kept = list(read_shards(dataset))
    data = collect(dataset, rejects)
    assert data.has_rejects
    assert data.kept_docs == len(kept) == stats["kept"]
    assert data.kept_text_bytes == sum(len(r["text"].encode("utf-8")) for r in kept)
    assert data.dropped_docs_seen == stats["dropped"]
    assert dict(data.hosts_kept) == dict(Counter(urlsplit(r["url"]).hostname for r in kept))
    # the three copies of text 0 are one cluster of 3, kept once
    assert data.cluster_sizes == {3: 1}
    assert len(data.clusters) == 1 and data.clusters[0].duplicates == 2
    assert len(data.clusters[0].members) == 2  # its removed members, read from the rejects
    # every drop reason has examples, each carrying its Drop
    drops = stats["drops"]
    assert set(data.examples) == {f"{stage}/{reason}" for stage, reasons in drops.items() for reason in reasons}
    assert data.examples_source == "rejects"
    assert all(e.drop for examples in data.examples.values() for e in examples)
    assert len(data.kept_examples) == min(8, len(kept))


def test_collect_without_rejects_counts_only_what_the_build_kept(built):
    dataset, _ = built
    data = collect(dataset)
    assert not data.has_rejects and data.dropped_docs_seen == 0 and data.hosts_dropped == []
    assert data.clusters[0].members == []
    assert data.examples_source in ("samples", "")


def test_collect_is_deterministic(built):
    dataset, rejects = built
    a, b = collect(dataset, rejects), collect(dataset, rejects)
    assert a.kept_examples == b.kept_examples and a.examples == b.examples and a.hosts_kept == b.hosts_kept
