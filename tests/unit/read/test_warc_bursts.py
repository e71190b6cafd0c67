"""A burst of blank or garbage lines between the records of a WARC file, past
`input.max_bad_lines_per_input`, is skipped and reported once, and the records after it are read
(issue 36, item 7: reading stopped at the cap and they were lost). An ARC file still stops."""

from __future__ import annotations

import gzip
import time

import pytest
from tests.reliability.catalogue import ARTICLE, ARTICLE2, http, warc_record

from thresher.core.document import Document, Malformed
from thresher.read.config import InputConfig
from thresher.read.sources import iter_items

FIRST = warc_record(http(ARTICLE.encode()), uri="https://e.example/1")
LAST = warc_record(http(ARTICLE2.encode()), uri="https://e.example/2")
ENGINES = ["pure", "auto"]  # auto: FastWARC frames where it is installed, the pure reader the rest


def _items(path, engine: str, cap: int = 1000) -> list:
    return list(iter_items([str(path)], InputConfig(max_bad_lines_per_input=cap, warc={"engine": engine})))


def _urls(items: list) -> list[str | None]:
    return [x.url for x in items if isinstance(x, Document)]


def _stops(items: list) -> list[Malformed]:
    return [x for x in items if isinstance(x, Malformed) and x.reason == "too_many_bad_lines"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("filler", [b"\r\n" * 500_000, b"\n" * 500_000, b"junk line\n" * 200_000])
def test_records_after_a_burst_in_its_own_gzip_member_are_read(tmp_path, engine, filler):
    p = tmp_path / "a.warc.gz"
    p.write_bytes(gzip.compress(FIRST) + gzip.compress(filler) + gzip.compress(LAST))
    got = _items(p, engine)
    assert _urls(got) == ["https://e.example/1", "https://e.example/2"]
    [stop] = _stops(got)
    assert stop.location.startswith(f"{p}@{len(gzip.compress(FIRST))}")
    assert "reading resumed at the next record" in stop.detail and "max_bad_lines_per_input = 1000" in stop.detail


@pytest.mark.parametrize("engine", ENGINES)
def test_bursts_in_an_uncompressed_archive_are_each_reported_once(tmp_path, engine):
    p = tmp_path / "a.warc"
    p.write_bytes(FIRST + b"garbage\n" * 5000 + LAST + b"\n" * 5000 + FIRST.replace(b"/1", b"/3"))
    got = _items(p, engine, cap=100)
    assert _urls(got) == ["https://e.example/1", "https://e.example/2", "https://e.example/3"]
    assert len(_stops(got)) == 2  # one per burst, each located where it starts
    assert [x.reason for x in got if isinstance(x, Malformed)] == ["garbage", "too_many_bad_lines",
                                                                  "too_many_bad_lines"]


def test_a_large_blank_burst_is_skipped_at_buffer_speed(tmp_path):
    p = tmp_path / "bomb.warc.gz"
    with gzip.open(p, "wb", compresslevel=1) as f:
        f.write(FIRST)
        block = b"\r\n" * (1 << 19)
        for _ in range(128):  # 128 MiB of CRLF
            f.write(block)
        f.write(LAST)
    t0 = time.process_time()
    got = _items(p, "pure")
    assert time.process_time() - t0 < 10
    assert _urls(got) == ["https://e.example/1", "https://e.example/2"]


def test_a_junk_burst_that_hides_a_warc_line_resumes_at_the_real_header(tmp_path):
    p = tmp_path / "a.warc"
    p.write_bytes(FIRST + b"junk\n" * 300 + b"WARC/not a version\n" + b"junk\n" * 300 + LAST)
    assert _urls(_items(p, "pure", cap=50)) == ["https://e.example/1", "https://e.example/2"]


def test_an_arc_file_still_stops_at_the_cap(tmp_path):
    arc = b"http://e.example/a 1.2.3.4 20240101000000 text/html 5\nhello\n"
    p = tmp_path / "a.arc"
    p.write_bytes(arc + b"junk\n" * 500 + arc.replace(b"/a ", b"/b "))
    got = _items(p, "pure", cap=100)
    [stop] = _stops(got)
    assert stop.detail.startswith("stopped reading this input")
