"""Assemble and finalize in one streaming pass each (issue 29): a shard's size and sha256 come from
its bytes as they are written, no shard is opened for reading after it is written, and the index
merge passes its lines through as bytes; every output is byte-identical to hashing afterwards."""

import builtins
import hashlib
import io
import json
import random

import pytest
from tests.conftest import article_html, local_config, write_jsonl

from thresher.report.index import IndexWriter
from thresher.run.build import build
from thresher.write.digest import DigestWriter, digested_file
from thresher.write.formats import get_format


def crawl(tmp_path, n=40):
    records = [{"url": f"https://s.example/{i}", "html": article_html(i - 1 if i % 5 == 4 else i)} for i in range(n)]
    return write_jsonl(tmp_path / "crawl.jsonl", records)


FORMATS = [
    "jsonl.gz",
    pytest.param("jsonl.zst", marks=pytest.mark.skipif(not __import__("importlib").util.find_spec("zstandard"),
                                                       reason="zstd extra not installed")),
    pytest.param("parquet", marks=pytest.mark.skipif(not __import__("importlib").util.find_spec("pyarrow"),
                                                     reason="parquet extra not installed")),
]


@pytest.mark.parametrize("fmt", FORMATS)
def test_manifest_sizes_and_checksums_equal_the_shard_files(tmp_path, fmt):
    build([str(crawl(tmp_path))], tmp_path / "out", local_config(output={"format": fmt, "shard_max_records": 10}))
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert len(manifest["shards"]) == 4
    for entry in manifest["shards"]:
        data = (tmp_path / "out" / entry["path"]).read_bytes()
        assert (entry["bytes"], entry["sha256"]) == (len(data), hashlib.sha256(data).hexdigest())


def test_no_shard_is_opened_for_reading_during_a_build(tmp_path, monkeypatch):
    src = crawl(tmp_path)
    out = tmp_path / "out"
    reads: list[str] = []
    real_open = builtins.open

    def watching_open(file, mode="r", *args, **kwargs):
        name = str(file)
        if "shard-" in name and not any(c in mode for c in "wax+"):
            reads.append(name)
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", watching_open)
    monkeypatch.setattr(io, "open", watching_open)  # pathlib opens through io.open
    build([str(src)], out, local_config(output={"shard_max_records": 10}))
    monkeypatch.undo()
    assert [p.name for p in sorted(out.glob("shard-*"))] == [f"shard-{i:05d}.jsonl.gz" for i in range(4)]
    assert reads == []


def test_a_format_without_a_stream_writer_gets_the_same_manifest(tmp_path, monkeypatch):
    """A plugin format that only has `assemble` is hashed after writing, with the same result."""
    src = crawl(tmp_path)
    streamed = build([str(src)], tmp_path / "a", local_config(output={"shard_max_records": 10})).manifest
    monkeypatch.setattr("thresher.run.shards.shard_writer", lambda fmt: None)
    hashed = build([str(src)], tmp_path / "b", local_config(output={"shard_max_records": 10})).manifest
    assert streamed["shards"] == hashed["shards"]
    for entry in hashed["shards"]:
        assert (tmp_path / "a" / entry["path"]).read_bytes() == (tmp_path / "b" / entry["path"]).read_bytes()


@pytest.mark.parametrize("fmt", FORMATS)
def test_write_shard_writes_the_bytes_assemble_writes(tmp_path, fmt):
    piece = tmp_path / "piece.jsonl"
    lines = [json.dumps({"id": str(i), "url": f"https://e/{i}", "text": "word " * i,
                         "annotations": {"lang.code": "en"}}).encode() + b"\n" for i in range(1500)]
    piece.write_bytes(b"".join(lines))
    shard_format = get_format(fmt)
    assert shard_format.assemble([piece, piece], tmp_path / "assembled") == 3000
    with digested_file(tmp_path / "streamed") as out:
        assert shard_format.write_shard([piece, piece], out) == 3000  # type: ignore[attr-defined]
    data = (tmp_path / "streamed").read_bytes()
    assert data == (tmp_path / "assembled").read_bytes()
    assert (out.bytes, out.sha256) == (len(data), hashlib.sha256(data).hexdigest())


def test_digest_writer_counts_every_buffer_kind_and_leaves_its_file_open():
    raw = io.BytesIO()
    writer = DigestWriter(raw)
    assert writer.write(b"ab") == 2 and writer.write(bytearray(b"cd")) == 2
    assert writer.write(memoryview(b"\x00\x01\x02\x03").cast("H")) == 4  # counted in bytes, not items
    writer.close()
    assert not raw.closed and writer.tell() == 8
    assert (
        writer.sha256 == hashlib.sha256(b"abcd\x00\x01\x02\x03").hexdigest()
        and raw.getvalue() == b"abcd\x00\x01\x02\x03"
    )


def _index_bytes(tmp_path, name, entries, flush_bytes=None, raw=False):
    writer = IndexWriter(tmp_path / name / "parts", 20_000)
    if flush_bytes is not None:
        writer.FLUSH_BYTES = flush_bytes
    for id_json, url_json, line in entries:
        if raw:
            writer.add_raw(id_json.encode(), url_json.encode(), line.encode())
        else:
            writer.add_json(id_json, url_json, line)
    index = writer.finish(tmp_path / name / "ds")
    return {p.name: p.read_bytes() for p in sorted(index.iterdir())}, writer


def _entries(n=20_000):
    rnd = random.Random(11)
    alphabet = list("abcxyz09/-_.é中\t\n\r\x0b\x1c\x85\u2028\u2029\"\\ \U0001F600")

    def text():
        return "".join(rnd.choice(alphabet) for _ in range(rnd.randrange(0, 10)))

    out = []
    for i in range(n):
        doc_id = None if i % 97 == 0 else f"{text()}-{i}"
        url = None if i % 13 == 0 else "" if i % 29 == 0 else f"https://e/{text()}"
        line = json.dumps({"id": doc_id, "kept": [0, i], "t": text()}, ensure_ascii=False, sort_keys=True,
                          separators=(",", ":"))
        out.append((json.dumps(doc_id, ensure_ascii=False), json.dumps(url, ensure_ascii=False), line))
    return out


def test_index_merge_of_utf8_lines_spilled_or_not_gives_the_same_index(tmp_path):
    entries = _entries()
    in_memory, _ = _index_bytes(tmp_path, "memory", entries)
    spilled, writer = _index_bytes(tmp_path, "spilled", entries, flush_bytes=4096, raw=True)
    assert writer._spilled and writer.buckets == 8
    assert spilled == in_memory
    from thresher.report.index import DocumentIndex

    index = DocumentIndex(tmp_path / "spilled" / "ds")
    for id_json, url_json, line in entries[1:200:7]:
        doc_id = json.loads(id_json)
        assert index.by_id(doc_id) == json.loads(line)
        url = json.loads(url_json)
        if url:
            assert doc_id in index.ids_for_url(url)
