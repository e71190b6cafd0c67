"""`.warc.zst` archives are read like `.warc.gz` (issue 36, item 7: they were refused as
`unsupported_compression`): one zstd frame per record or one for the whole file, a dictionary in a
leading skippable frame, and damage located and read past as for gzip."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest
from tests.reliability.catalogue import ARTICLE, ARTICLE2, http, warc_record

from thresher.core.document import Document, Malformed
from thresher.read.base import Event
from thresher.read.config import InputConfig
from thresher.read.sources import iter_items
from thresher.read.warc import read_record_at

zstandard = pytest.importorskip("zstandard")

SAMPLE = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "warc" / "aut" / "example.warc.gz"
RECORDS = [
    warc_record(http(ARTICLE.replace("Head", f"Head {i}").encode()), uri=f"https://e.example/{i}") for i in range(3)
] + [warc_record(http(ARTICLE2.encode()), uri="https://e.example/last")]


def _items(path: Path) -> list:
    return list(iter_items([str(path)], InputConfig()))


def _docs(path: Path) -> list[tuple[str | None, str | None]]:
    return [(x.url, x.html) for x in _items(path) if isinstance(x, Document)]


def _per_record(records: list[bytes], cctx=None) -> tuple[bytes, list[int]]:
    cctx = cctx or zstandard.ZstdCompressor()
    frames = [cctx.compress(r) for r in records]
    offsets = [sum(len(f) for f in frames[:i]) for i in range(len(frames))]
    return b"".join(frames), offsets


def _gzip_members(data: bytes) -> list[bytes]:
    members = []
    while data:
        d = zlib.decompressobj(31)
        members.append(d.decompress(data))
        data = d.unused_data
    return members


def test_per_record_frames_read_like_gzip_members_and_locate_each_record(tmp_path):
    data, offsets = _per_record(RECORDS)
    p = tmp_path / "a.warc.zst"
    p.write_bytes(data)
    docs = [x for x in _items(p) if isinstance(x, Document)]
    assert [d.url for d in docs] == [f"https://e.example/{i}" for i in range(3)] + ["https://e.example/last"]
    assert [d.source["offset"] for d in docs] == offsets
    again = read_record_at(str(p), offsets[2])
    assert isinstance(again, Document) and again.url == "https://e.example/2" and again.html == docs[2].html


def test_one_frame_for_the_whole_file_locates_records_by_inner_offset(tmp_path):
    p = tmp_path / "a.warc.zst"
    p.write_bytes(zstandard.ZstdCompressor().compress(b"".join(RECORDS)))
    docs = [x for x in _items(p) if isinstance(x, Document)]
    assert len(docs) == 4 and {d.source["offset"] for d in docs} == {0}
    inner = docs[3].source["inner_offset"]
    assert inner == sum(len(r) for r in RECORDS[:3])
    again = read_record_at(str(p), 0, inner)
    assert isinstance(again, Document) and again.url == "https://e.example/last"


def test_frames_compressed_with_a_dictionary_in_a_leading_skippable_frame(tmp_path):
    dictionary = zstandard.train_dictionary(4096, [r * 3 for r in RECORDS] * 30)
    data, offsets = _per_record(RECORDS, zstandard.ZstdCompressor(dict_data=dictionary))
    raw = dictionary.as_bytes()
    head = b"\x5d\x2a\x4d\x18" + len(raw).to_bytes(4, "little") + raw
    p = tmp_path / "a.warc.zst"
    p.write_bytes(head + data)
    docs = [x for x in _items(p) if isinstance(x, Document)]
    assert [d.url for d in docs][-1] == "https://e.example/last" and len(docs) == 4
    again = read_record_at(str(p), len(head) + offsets[1])
    assert isinstance(again, Document) and again.url == "https://e.example/1"


def test_a_damaged_frame_is_reported_and_the_next_record_read(tmp_path):
    data, offsets = _per_record(RECORDS)
    broken = bytearray(data)
    broken[offsets[1] + 12:offsets[1] + 40] = b"\xff" * 28
    p = tmp_path / "a.warc.zst"
    p.write_bytes(bytes(broken))
    got = _items(p)
    urls = [x.url for x in got if isinstance(x, Document)]
    assert urls[0] == "https://e.example/0" and urls[-2:] == ["https://e.example/2", "https://e.example/last"]
    assert "https://e.example/1" not in urls
    assert any(isinstance(x, Malformed) and x.location == f"{p}@{offsets[1]}" for x in got)


def test_a_cut_warc_zst_keeps_the_records_before_the_cut(tmp_path):
    data, offsets = _per_record(RECORDS)
    p = tmp_path / "a.warc.zst"
    p.write_bytes(data[: offsets[3] + 30])
    got = _items(p)
    assert [x.url for x in got if isinstance(x, Document)] == [f"https://e.example/{i}" for i in range(3)]
    assert any(isinstance(x, Malformed | Event) and x.location.startswith(f"{p}@{offsets[3]}") for x in got)


@pytest.mark.skipif(not SAMPLE.exists(), reason=f"{SAMPLE} absent (shared evaluation data)")
@pytest.mark.parametrize("layout", ["per_record", "whole_file"])
def test_a_real_archive_recompressed_as_zstd_reads_the_same_documents(tmp_path, layout):
    members = _gzip_members(SAMPLE.read_bytes())
    assert len(members) > 100  # one gzip member per record
    cctx = zstandard.ZstdCompressor()
    data = b"".join(cctx.compress(m) for m in members) if layout == "per_record" else cctx.compress(b"".join(members))
    p = tmp_path / "example.warc.zst"
    p.write_bytes(data)
    expected = _docs(SAMPLE)
    assert len(expected) == 94
    assert _docs(p) == expected


def test_a_damaged_dictionary_reports_the_frames_that_need_it(tmp_path):
    dictionary = zstandard.train_dictionary(4096, [r * 3 for r in RECORDS] * 30)
    data, _ = _per_record(RECORDS, zstandard.ZstdCompressor(dict_data=dictionary))
    bad = zstandard.ZstdCompressor().compress(dictionary.as_bytes())[:-20]
    p = tmp_path / "a.warc.zst"
    p.write_bytes(b"\x5d\x2a\x4d\x18" + len(bad).to_bytes(4, "little") + bad + data)
    got = _items(p)
    assert not any(isinstance(x, Document) for x in got)
    assert any(isinstance(x, Malformed) and x.reason == "bad_zstd" for x in got)
