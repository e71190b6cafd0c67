"""Line-bomb bounds act on the input that is a bomb, counted and named, and nothing else (past the
cap a burst is skipped and reading resumes at the next record): the other inputs are read whole and
the build finishes with counts that reconcile."""

from __future__ import annotations

import gzip
import json
import time

from tests.conftest import article_html, local_config, write_jsonl
from tests.reliability.catalogue import ARTICLE, gz, http, warc_record

import thresher.run.scan as scan
from thresher.run.build import build


def _malformed(rejects):
    with gzip.open(rejects / "malformed.jsonl.gz", "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def test_each_bomb_is_bounded_in_its_own_input_only(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    write_jsonl(inputs / "good.jsonl", [{"url": f"https://e.example/{i}", "html": article_html(i)} for i in range(10)])
    (inputs / "blank.jsonl.gz").write_bytes(gz(b"\n" * 2_000_000))
    (inputs / "junk.jsonl.gz").write_bytes(gz(b"[]\n" * 300_000))
    (inputs / "blank.warc.gz").write_bytes(gz(warc_record(http(ARTICLE.encode())) + b"\r\n" * 2_000_000))
    rejects = tmp_path / "rejects"
    t0 = time.monotonic()
    result = build(
        [str(inputs)], tmp_path / "out", local_config(input={"max_bad_lines_per_input": 1000}), rejects=rejects
    )
    assert time.monotonic() - t0 < 20
    counters = result.stats.counters
    assert counters["kept"] == 11 and result.stats.reconciles()  # the 10 pages and the archive's one record
    stops = sorted(
        m["location"].split("/")[-1].split(":")[0].split("@")[0]
        for m in _malformed(rejects)
        if m["reason"] == "too_many_bad_lines"
    )
    assert stops == ["blank.jsonl.gz", "blank.warc.gz", "junk.jsonl.gz"]
    for m in _malformed(rejects):
        if m["reason"] == "too_many_bad_lines":
            assert "input.max_bad_lines_per_input = 1000" in m["detail"] and "line bomb" in m["detail"]


def test_work_bytes_cap_stops_an_input_that_writes_too_much(tmp_path, monkeypatch):
    # the floor (256 MiB written before the cap can act) is lowered so that a test-sized input reaches it
    monkeypatch.setattr(scan, "WORK_BYTES_FLOOR", 64 * 1024)
    pages = b"".join(
        json.dumps({"url": f"https://e.example/{i}", "html": article_html(i)}).encode() + b"\n" for i in range(3000)
    )
    (tmp_path / "bomb.jsonl.gz").write_bytes(gz(pages))
    good_text = "An unrelated note about river otters and their dens, written for this test alone. " * 3
    write_jsonl(tmp_path / "good.jsonl", [{"url": "https://g.example/1", "text": good_text}])
    rejects = tmp_path / "rejects"
    config = local_config(input={"max_work_bytes_per_input_byte": 2.0}, quality={"preset": "none"})
    result = build(
        [str(tmp_path / "bomb.jsonl.gz"), str(tmp_path / "good.jsonl")], tmp_path / "out", config, rejects=rejects
    )
    counters = result.stats.counters
    assert counters["malformed/work_bytes_cap"] == 1 and result.stats.reconciles()
    assert counters["seen"] < 3000 + 1  # the bomb's reading stopped early
    [stop] = [m for m in _malformed(rejects) if m["reason"] == "work_bytes_cap"]
    assert "bomb.jsonl.gz" in stop["location"] and "max_work_bytes_per_input_byte = 2.0" in stop["detail"]
    assert any(m.get("url") == "https://g.example/1" for m in _shard_records(tmp_path / "out"))


def _shard_records(out):
    for shard in sorted(out.glob("shard-*.jsonl.gz")):
        with gzip.open(shard, "rt", encoding="utf-8") as f:
            yield from (json.loads(line) for line in f)
