"""A burst of bad lines past `input.max_bad_lines_per_input` is skipped, reported once where it
starts, and reading resumes at the next record (issue 36, item 7: the good records after a burst
were lost)."""

from __future__ import annotations

import gzip
import json
import time

from thresher.core.document import Document, Malformed
from thresher.read.base import Event
from thresher.read.config import InputConfig
from thresher.read.jsonl import read_jsonl
from thresher.read.sources import iter_items, plan_partitions


def _record(i: int) -> bytes:
    return json.dumps({"url": f"https://e.example/{i}", "text": f"record {i}"}).encode() + b"\n"


def _items(path, **cfg):
    return list(iter_items([str(path)], InputConfig(**cfg)))


def test_good_records_after_a_burst_of_bad_lines_are_read(tmp_path):
    burst = b"\n" * 40_000 + b"[]\n" * 40_000 + b"not json\n" * 30_000 + b'{"no": "url"}\n' * 5 + b"{broken\n" * 5
    data = b"".join(_record(i) for i in range(3)) + burst + b"".join(_record(i) for i in range(3, 10))
    p = tmp_path / "a.jsonl.gz"
    p.write_bytes(gzip.compress(data))
    got = _items(p, max_bad_lines_per_input=1000)
    docs = [x for x in got if isinstance(x, Document)]
    assert [d.url for d in docs] == [f"https://e.example/{i}" for i in range(10)]
    assert sum(isinstance(x, Event) and x.name == "empty_line" for x in got) == 1000
    [stop] = [x for x in got if isinstance(x, Malformed) and x.reason == "too_many_bad_lines"]
    # the burst is located at its first skipped line: 3 records, then 1,000 reported empty lines
    assert stop.location == f"{p}:1004"
    assert "skipped 109010 malformed records and empty lines" in stop.detail
    assert "input.max_bad_lines_per_input = 1000" in stop.detail
    # what was reported one by one, the burst and the records account for every line
    assert sum(isinstance(x, Malformed) for x in got) == 1


def test_each_burst_past_the_cap_is_one_located_malformed(tmp_path):
    data = b"\n" * 5 + _record(0) + b"junk\n" * 4 + _record(1) + b"[1]\n" + _record(2)
    p = tmp_path / "a.jsonl"
    p.write_bytes(data)
    got = _items(p, max_bad_lines_per_input=2)
    assert [x.url for x in got if isinstance(x, Document)] == ["https://e.example/0", "https://e.example/1",
                                                                 "https://e.example/2"]
    bursts = [(x.location, x.detail.split(" malformed")[0]) for x in got if isinstance(x, Malformed)]
    assert bursts == [(f"{p}:3", "skipped 3"), (f"{p}:7", "skipped 4"), (f"{p}:12", "skipped 1")]


def test_a_default_cap_burst_of_150000_lines_is_skipped_quickly(tmp_path):
    data = _record(0) + b"\n" * 100_000 + b"[]\n" * 50_000 + _record(1)
    p = tmp_path / "a.jsonl.gz"
    p.write_bytes(gzip.compress(data))
    t0 = time.process_time()
    got = _items(p)
    assert time.process_time() - t0 < 10
    assert [x.url for x in got if isinstance(x, Document)] == ["https://e.example/0", "https://e.example/1"]
    [stop] = [x for x in got if isinstance(x, Malformed)]
    assert stop.reason == "too_many_bad_lines" and stop.location == f"{p}:100002"
    assert stop.detail.startswith("skipped 50000 ")


def test_a_billion_blank_lines_cost_reading_not_line_by_line_work(tmp_path):
    # 256 MiB of newlines from a 250 KB gzip file: skipped a buffer at a time past the cap
    p = tmp_path / "bomb.jsonl.gz"
    with gzip.open(p, "wb", compresslevel=1) as f:
        f.write(_record(0))
        block = b"\n" * (1 << 20)
        for _ in range(256):
            f.write(block)
        f.write(_record(1))
    t0 = time.process_time()
    got = _items(p, max_bad_lines_per_input=1000)
    assert time.process_time() - t0 < 15
    assert [x.url for x in got if isinstance(x, Document)] == ["https://e.example/0", "https://e.example/1"]


def test_a_burst_across_byte_ranges_loses_no_record(tmp_path):
    lines = [_record(i) if i % 500 == 0 else b"junk\n" for i in range(5000)]
    p = tmp_path / "big.jsonl"
    p.write_bytes(b"".join(lines))
    config = InputConfig(partition_bytes=997, max_bad_lines_per_input=10)
    parts = plan_partitions([str(p)], config)
    assert len(parts) > 10
    urls = [d.url for q in parts for d in read_jsonl(q, config) if isinstance(d, Document)]
    assert urls == [f"https://e.example/{i}" for i in range(0, 5000, 500)]
