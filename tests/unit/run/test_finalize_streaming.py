"""Assemble and finalize in one streaming pass each (issue 29): a shard's size and sha256 come from
its bytes as they are written, no shard is opened for reading after it is written, and the index
merge passes its lines through as bytes; every output is byte-identical to hashing afterwards."""

import builtins
import hashlib
import io
import json

import pytest
from tests.conftest import article_html, local_config, write_jsonl

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
    monkeypatch.setattr("thresher.run.tasks.shard_writer", lambda fmt: None)
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
    assert writer.sha256 == hashlib.sha256(b"abcd\x00\x01\x02\x03").hexdigest() and raw.getvalue() == b"abcd\x00\x01\x02\x03"
