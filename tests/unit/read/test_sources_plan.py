"""Few large inputs are split into enough partitions for a pool to balance; the plan depends on the
inputs only, and neither output nor located messages depend on it."""

import json

import pytest
from tests.conftest import article_html, local_config, write_jsonl

from thresher.core.document import Document, Malformed
from thresher.read import sources
from thresher.read.base import Partition
from thresher.read.config import InputConfig
from thresher.read.jsonl import read_jsonl
from thresher.read.sources import plan_partitions
from thresher.run.build import build


@pytest.fixture
def small_minimums(monkeypatch):
    monkeypatch.setattr(sources, "MIN_PARTITION_BYTES", 1000)
    monkeypatch.setattr(sources, "MIN_HTML_FILES_PER_PARTITION", 2)


def lines_file(path, n, bad_at=()):
    with open(path, "w") as f:
        for i in range(n):
            f.write("{oops\n" if i in bad_at else json.dumps({"url": f"u{i}", "text": "w" * (i % 40)}) + "\n")
    return path


def test_one_file_smaller_than_partition_bytes_is_split_into_balanced_ranges(tmp_path, small_minimums):
    p = lines_file(tmp_path / "a.jsonl", 2000)
    size = p.stat().st_size
    parts = plan_partitions([str(p)], InputConfig())
    assert len(parts) == sources.MIN_PARTITIONS
    widths = [q.end - q.start for q in parts]
    assert max(widths) - min(widths) <= sources.MIN_PARTITIONS and parts[-1].end == size
    urls = [d.url for q in parts for d in read_jsonl(q, InputConfig()) if isinstance(d, Document)]
    assert urls == [f"u{i}" for i in range(2000)]
    assert plan_partitions([str(p)], InputConfig()) == parts  # deterministic


def test_ranges_never_exceed_partition_bytes_nor_go_below_the_minimum(tmp_path, small_minimums):
    p = lines_file(tmp_path / "a.jsonl", 2000)
    size = p.stat().st_size
    assert all(q.end - q.start <= 500 for q in plan_partitions([str(p)], InputConfig(partition_bytes=500)))
    tiny = lines_file(tmp_path / "tiny.jsonl", 40)  # < 16 x 1000 bytes: fewer, 1000-byte ranges
    parts = plan_partitions([str(tiny)], InputConfig())
    assert len(parts) == -(-tiny.stat().st_size // 1000) < sources.MIN_PARTITIONS
    assert sources.range_bytes(size, 1 << 30) == -(-size // sources.MIN_PARTITIONS)


def test_small_inputs_keep_one_partition_per_file_by_default(tmp_path):
    a = lines_file(tmp_path / "a.jsonl", 300)
    b = lines_file(tmp_path / "b.jsonl", 300)
    assert [(q.path, q.start, q.end) for q in plan_partitions([str(a), str(b)], InputConfig())] == [
        (str(a), 0, None), (str(b), 0, None)
    ]


def test_html_files_are_batched_into_enough_partitions(tmp_path, small_minimums):
    for i in range(40):
        (tmp_path / f"p{i:02d}.html").write_text(f"<p>{i}</p>")
    parts = plan_partitions([str(tmp_path)], InputConfig())
    assert [len(q.paths) for q in parts] == [3] * 13 + [1]  # ceil(40 / 16) files each
    assert [len(q.paths) for q in plan_partitions([str(tmp_path)], InputConfig(html_files_per_partition=2))] == [2] * 20


def test_problems_are_located_by_line_however_the_file_is_split(tmp_path, small_minimums):
    p = lines_file(tmp_path / "a.jsonl", 2000, bad_at={5, 1234, 1999})
    whole = [
        m.location for m in read_jsonl(Partition(0, "jsonl", (str(p),)), InputConfig()) if isinstance(m, Malformed)
    ]
    split = [m.location for q in plan_partitions([str(p)], InputConfig()) for m in read_jsonl(q, InputConfig())
             if isinstance(m, Malformed)]
    assert whole == split == [f"{p}:6", f"{p}:1235", f"{p}:2000"]


def test_build_output_and_stats_do_not_depend_on_the_split(tmp_path, monkeypatch):
    records = [{"url": f"https://e.example/{i}", "html": article_html(i - 3 if i % 7 == 6 else i)} for i in range(120)]
    crawl = write_jsonl(tmp_path / "crawl.jsonl", records, ["{oops", "[1]"])
    reference = build([str(crawl)], tmp_path / "one", local_config(input={"partition_bytes": 1 << 30}))
    monkeypatch.setattr(sources, "MIN_PARTITION_BYTES", 4096)
    split = build([str(crawl)], tmp_path / "many", local_config(exec={"engine": "pool", "workers": 2}))
    assert len(plan_partitions([str(crawl)], InputConfig())) == sources.MIN_PARTITIONS
    assert split.manifest == reference.manifest
    assert split.stats.counters == reference.stats.counters
    one = json.loads((tmp_path / "one" / "stats.json").read_text())["malformed_examples"]
    many = json.loads((tmp_path / "many" / "stats.json").read_text())["malformed_examples"]
    assert one == many and one[0]["location"] == f"{crawl}:121"
