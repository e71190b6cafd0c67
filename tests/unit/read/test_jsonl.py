"""JSONL input and every kind of bad record: each gets a located Malformed or Event, none crashes."""

import gzip
import json

import pytest

from thresher.core.document import Document, Malformed
from thresher.read.base import Event, Partition, make_ordinal
from thresher.read.config import InputConfig
from thresher.read.jsonl import read_jsonl
from thresher.read.sources import iter_items, plan_partitions


def items(path, **cfg):
    return list(iter_items([str(path)], InputConfig(**cfg)))


def test_records_become_documents_with_metadata_source_and_ordinal(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_text(json.dumps({"url": "https://a.example/", "html": "<p>x</p>", "lang": "en", "title": "T"}) + "\n")
    (doc,) = items(p)
    assert isinstance(doc, Document)
    assert (doc.url, doc.html, doc.title, doc.metadata) == ("https://a.example/", "<p>x</p>", "T", {"lang": "en"})
    assert doc.source == {"file": str(p), "offset": 0}
    assert doc.ordinal == make_ordinal(0, 0)


@pytest.mark.parametrize(
    ("line", "reason", "detail"),
    [
        ("not json", "invalid_json", "Expecting value"),
        ("[1, 2]", "not_an_object", "a JSON list"),
        ('"a string"', "not_an_object", "a JSON str"),
        ('{"html": "<p>x</p>"}', "missing_url", "no 'url' field"),
        ('{"url": "u"}', "missing_content", "neither 'html' nor 'text'"),
        ('{"url": 5, "html": "x"}', "wrong_type", "'url' is a int"),
        ('{"url": "u", "html": ["x"]}', "wrong_type", "'html' is a list"),
        ('{"url": "u", "text": 3}', "wrong_type", "'text' is a int"),
    ],
)
def test_bad_lines_are_malformed_with_location(tmp_path, line, reason, detail):
    p = tmp_path / "bad.jsonl"
    p.write_text('{"url": "ok", "text": "fine"}\n' + line + "\n")
    got = items(p)
    assert isinstance(got[0], Document)
    assert isinstance(got[1], Malformed)
    assert got[1].reason == reason and got[1].location == f"{p}:2" and detail in got[1].detail


def test_empty_lines_and_empty_file_are_events_not_records(tmp_path):
    p = tmp_path / "e.jsonl"
    p.write_text('\n   \n{"url": "u", "text": "t"}\n')
    got = items(p)
    assert [type(i) for i in got] == [Event, Event, Document]
    assert got[0].name == "empty_line" and got[0].location == f"{p}:1"
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert items(empty) == [Event("empty_file", str(empty), "no records")]


def test_invalid_utf8_is_replaced_and_counted(tmp_path):
    p = tmp_path / "u.jsonl"
    p.write_bytes(b'{"url": "u", "text": "caf\xe9 au lait"}\n')
    event, doc = items(p)
    assert event == Event("invalid_utf8", f"{p}:1", "undecodable bytes replaced")
    assert doc.text == "caf\ufffd au lait"


def test_gzip_input_detected_by_magic_bytes_whatever_the_name(tmp_path):
    p = tmp_path / "crawl.data"
    with gzip.open(p, "wt") as f:
        f.write(json.dumps({"url": "u", "text": "t"}) + "\n")
    (doc,) = items(p)
    assert doc.text == "t"


def test_truncated_gzip_keeps_records_before_the_break(tmp_path):
    p = tmp_path / "t.jsonl.gz"
    payload = "".join(json.dumps({"url": f"u{i}", "text": "x" * 200 + str(i)}) + "\n" for i in range(500)).encode()
    blob = gzip.compress(payload)
    p.write_bytes(blob[: len(blob) // 2])
    got = items(p)
    docs = [g for g in got if isinstance(g, Document)]
    assert 0 < len(docs) < 500
    assert isinstance(got[-1], Malformed) and got[-1].reason == "truncated_input"
    assert got[-1].location.startswith(str(p) + ":")


def test_zstd_input(tmp_path):
    zstandard = pytest.importorskip("zstandard")
    p = tmp_path / "c.jsonl.zst"
    p.write_bytes(zstandard.ZstdCompressor().compress(b'{"url": "u", "text": "zst"}\n'))
    (doc,) = items(p)
    assert doc.text == "zst"


def test_missing_file_is_malformed_not_a_crash(tmp_path):
    missing = tmp_path / "nope.jsonl"
    (m,) = items(missing)
    assert m.reason == "unreadable_file" and m.location == str(missing)


def test_oversized_line_is_malformed_and_reading_goes_on(tmp_path):
    p = tmp_path / "big.jsonl"
    p.write_text(json.dumps({"url": "u", "text": "x" * 5000}) + "\n" + json.dumps({"url": "v", "text": "ok"}) + "\n")
    got = items(p, max_record_bytes=1000)
    assert got[0].reason == "too_large" and got[0].location == f"{p}:1"
    assert got[1].text == "ok"


def test_byte_ranges_cover_every_line_exactly_once(tmp_path):
    p = tmp_path / "big.jsonl"
    lines = [json.dumps({"url": f"u{i}", "text": "y" * (i % 50)}) for i in range(1000)]
    p.write_text("\n".join(lines) + "\n")
    config = InputConfig(partition_bytes=997)
    parts = plan_partitions([str(p)], config)
    assert len(parts) > 10 and all(q.kind == "jsonl" for q in parts)
    urls = [d.url for q in parts for d in read_jsonl(q, config) if isinstance(d, Document)]
    assert urls == [f"u{i}" for i in range(1000)]


def test_ordinals_increase_with_partition_and_record(tmp_path):
    p = tmp_path / "big.jsonl"
    p.write_text("".join(json.dumps({"url": f"u{i}", "text": "z" * 30}) + "\n" for i in range(300)))
    config = InputConfig(partition_bytes=2000)
    docs = [d for q in plan_partitions([str(p)], config) for d in read_jsonl(q, config)]
    ordinals = [d.ordinal for d in docs]
    assert ordinals == sorted(ordinals) and len(set(ordinals)) == 300


def test_partition_plan_is_deterministic(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_text("".join(json.dumps({"url": f"u{i}", "text": "t"}) + "\n" for i in range(100)))
    config = InputConfig(partition_bytes=500)
    assert plan_partitions([str(p)], config) == plan_partitions([str(p)], config)
    assert plan_partitions([str(p)], config)[1] == Partition(1, "jsonl", (str(p),), 500, 1000)
