"""Bad web-archive input: every damaged region is a located Malformed, the records around it are read,
and the reader never raises. Archives are built here byte by byte (`BAD_CASES` is reused by the
FastWARC equality test)."""

from __future__ import annotations

import gzip
import tracemalloc
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from thresher.core.document import Document, Drop, Malformed
from thresher.read.base import Event, Partition, Skip
from thresher.read.config import InputConfig
from thresher.read.warc import read_record_at, read_warc_pure
from thresher.read.warc_config import WarcConfig

PAGE = b"<!doctype html><html><head><title>t</title></head><body><p>Hello archive</p></body></html>"


def http(body: bytes = PAGE, status: int = 200, ctype: str | None = "text/html", extra: str = "") -> bytes:
    head = f"HTTP/1.1 {status} X\r\n" + (f"Content-Type: {ctype}\r\n" if ctype is not None else "") + extra
    return head.encode() + b"\r\n" + body


def record(
    block: bytes,
    rtype: str = "response",
    uri: str | None = "http://example.com/",
    ctype: str = "application/http; msgtype=response",
    length: int | None = None,
    extra: str = "",
) -> bytes:
    head = f"WARC/1.0\r\nWARC-Type: {rtype}\r\nWARC-Record-ID: <urn:uuid:{abs(hash((block, uri))) % 10**12}>\r\n"
    head += "WARC-Date: 2024-01-02T03:04:05Z\r\n"
    if uri is not None:
        head += f"WARC-Target-URI: {uri}\r\n"
    head += f"Content-Type: {ctype}\r\nContent-Length: {len(block) if length is None else length}\r\n{extra}\r\n"
    return head.encode() + block + b"\r\n\r\n"


def gz(*records: bytes) -> bytes:
    return b"".join(gzip.compress(r, mtime=0) for r in records)


def read(path: Path, **input_kw: object) -> list:
    return list(read_warc_pure(Partition(0, "warc", (str(path),)), InputConfig(**input_kw), WarcConfig()))


def docs(items: list) -> list[Document]:
    return [i for i in items if isinstance(i, Document)]


def malformed(items: list) -> list[Malformed]:
    return [i for i in items if isinstance(i, Malformed)]


A = record(http(PAGE), uri="http://a.example/")
B = record(http(PAGE.replace(b"Hello", b"Bye")), uri="http://b.example/")
C = record(http(PAGE.replace(b"Hello", b"See")), uri="http://c.example/")


def _corrupt_member() -> bytes:
    member = bytearray(gzip.compress(B * 20, mtime=0))
    for i in range(20, 60):
        member[i] ^= 0x5A
    return bytes(member)


ARC_VERSION_BLOCK = b"1 0 Test\nURL IP-address Archive-date Content-type Archive-length\n"
ARC_PAGE = http()


def arc(version_block: bytes, page: bytes, overrun: int = 0) -> bytes:
    """An ARC v1 file: the file header record, then one page; `overrun` inflates the header's length."""
    head = f"filedesc://x.arc 0.0.0.0 20080101000000 text/plain {len(version_block) + overrun}\n".encode()
    rec = f"http://a.example/ 1.2.3.4 20080102030405 text/html {len(page)}\n".encode()
    return head + version_block + b"\n" + rec + page + b"\n"


# name -> archive bytes; each is read by both readers in the FastWARC equality test
BAD_CASES: dict[str, Callable[[], bytes]] = {
    "clean_gz": lambda: gz(A, B, C),
    "clean_plain": lambda: A + B + C,
    "truncated_file_plain": lambda: (A + B)[: len(A) + len(B) // 2],
    "truncated_file_gz": lambda: gz(A, B)[: len(gz(A)) + len(gz(B)) // 2],
    "content_length_too_long": lambda: record(http(), length=len(http()) + 40) + B + C,
    "content_length_too_short": lambda: record(http(), length=len(http()) - 10) + B,
    "garbage_between_records": lambda: A + b"this is not an archive record\r\n" * 3 + B,
    "garbage_between_members": lambda: gz(A) + b"\x00garbage bytes\n" * 4 + gz(B),
    "gzip_member_not_warc": lambda: gz(A) + gzip.compress(b"just some text\nin a gzip member\n", mtime=0) + gz(B),
    "corrupt_gzip_member": lambda: gz(A) + _corrupt_member() + gz(C),
    "missing_target_uri": lambda: record(http(), uri=None) + B,
    "non_http_payload": lambda: (
        record(b"example.com. 300 IN A 93.184.216.34\n", ctype="text/dns", uri="dns:example.com") + B
    ),
    "claims_http_is_not": lambda: record(b"<html>no status line</html>") + B,
    "html_declared_octet_stream": lambda: record(http(ctype="application/octet-stream")),
    "html_declared_text_plain": lambda: record(http(ctype="text/plain")),
    "png_declared_html": lambda: record(http(body=b"\x89PNG\r\n\x1a\n" + bytes(200))),
    "http_404": lambda: record(http(status=404)),
    "revisit": lambda: record(
        http(body=b""), rtype="revisit", extra="WARC-Refers-To-Target-URI: http://a.example/\r\n"
    ),
    "claims_chunked_is_not": lambda: record(http(extra="Transfer-Encoding: chunked\r\n")),
    "chunked": lambda: record(
        http(
            body=b"10\r\n"
            + PAGE[:16]
            + b"\r\n"
            + f"{len(PAGE) - 16:x}".encode()
            + b"\r\n"
            + PAGE[16:]
            + b"\r\n0\r\n\r\n",
            extra="Transfer-Encoding: chunked\r\n",
        )
    ),
    "gzip_content": lambda: record(http(body=gzip.compress(PAGE, mtime=0), extra="Content-Encoding: gzip\r\n")),
    "deflate_content": lambda: record(http(body=zlib.compress(PAGE), extra="Content-Encoding: deflate\r\n")),
    "claims_gzip_is_plain": lambda: record(http(extra="Content-Encoding: gzip\r\n")),
    "unknown_encoding": lambda: record(http(extra="Content-Encoding: snappy\r\n")),
    "cp1251_declared_in_http": lambda: record(
        http(body="<html><p>Привет мир</p></html>".encode("cp1251"), ctype="text/html; charset=windows-1251")
    ),
    "charset_in_meta": lambda: record(
        http(body='<html><head><meta charset="iso-8859-7"></head><p>Καλημέρα</p></html>'.encode("iso-8859-7"))
    ),
    "resource_html": lambda: record(PAGE, rtype="resource", uri="file:///page.html", ctype="text/html"),
    "wet_conversion": lambda: record(b"Plain text of a page\n", rtype="conversion", ctype="text/plain"),
    "bad_header_no_length": lambda: b"WARC/1.0\r\nWARC-Type: response\r\n\r\nxyz\r\n\r\n" + B,
    "header_line_without_colon": lambda: b"WARC/1.0\r\nWARC-Type response\r\n\r\n" + B,
    "truncated_header": lambda: A + b"WARC/1.0\r\nWARC-Type: resp",
    "leading_garbage": lambda: b"\xff\xfe junk before the first record\n" + A,
    "empty": lambda: b"",
    "arc_v1": lambda: arc(ARC_VERSION_BLOCK, ARC_PAGE),
    "arc_length_overrun": lambda: arc(ARC_VERSION_BLOCK, ARC_PAGE, overrun=7),
    "arc_length_counts_blank_line": lambda: arc(ARC_VERSION_BLOCK + b"\n", ARC_PAGE),
}


@pytest.fixture
def archive(tmp_path: Path) -> Callable[[str], Path]:
    def make(name: str) -> Path:
        path = tmp_path / f"{name}.warc"
        path.write_bytes(BAD_CASES[name]())
        return path

    return make


def test_every_bad_case_reads_without_raising(archive: Callable[[str], Path]) -> None:
    for name in BAD_CASES:
        items = read(archive(name))
        for m in malformed(items):
            assert m.location.startswith(str(archive(name))) and m.reason


def test_clean_gzip_archive_gives_three_documents_at_member_offsets(archive: Callable[[str], Path]) -> None:
    items = read(archive("clean_gz"))
    assert [d.url for d in docs(items)] == ["http://a.example/", "http://b.example/", "http://c.example/"]
    assert [d.source["offset"] for d in docs(items)] == [0, len(gz(A)), len(gz(A, B))]
    assert all(
        d.html and "archive" in d.html or "Bye" in (d.html or "") or "See" in (d.html or "") for d in docs(items)
    )
    assert not malformed(items)


def test_uncompressed_offsets_are_record_starts(archive: Callable[[str], Path]) -> None:
    items = read(archive("clean_plain"))
    assert [d.source["offset"] for d in docs(items)] == [0, len(A), len(A) + len(B)]


def test_truncated_record_is_located_and_earlier_records_kept(archive: Callable[[str], Path]) -> None:
    for name in ("truncated_file_plain", "truncated_file_gz"):
        path = archive(name)
        items = read(path)
        assert [d.url for d in docs(items)] == ["http://a.example/"]
        (m,) = malformed(items)
        assert m.reason == "truncated_record"
        offset = len(A) if name.endswith("plain") else len(gz(A))
        assert m.location == f"{path}@{offset}"


def test_content_length_running_into_the_next_record_is_malformed_and_reading_resumes(
    archive: Callable[[str], Path],
) -> None:
    path = archive("content_length_too_long")
    items = read(path)
    (m,) = malformed(items)
    assert (m.reason, m.location) == ("bad_content_length", f"{path}@0")
    assert [d.url for d in docs(items)] == ["http://b.example/", "http://c.example/"]


def test_content_length_too_short_leaves_located_garbage(archive: Callable[[str], Path]) -> None:
    path = archive("content_length_too_short")
    items = read(path)
    assert [m.reason for m in malformed(items)] == ["garbage"]
    assert [d.url for d in docs(items)] == ["http://example.com/", "http://b.example/"]


def test_garbage_between_records_is_reported_at_its_offset(archive: Callable[[str], Path]) -> None:
    path = archive("garbage_between_records")
    items = read(path)
    (m,) = malformed(items)
    assert (m.reason, m.location) == ("garbage", f"{path}@{len(A)}")
    assert "93 bytes" in m.detail
    assert len(docs(items)) == 2


def test_garbage_between_gzip_members_is_reported_at_its_offset(archive: Callable[[str], Path]) -> None:
    path = archive("garbage_between_members")
    items = read(path)
    (m,) = malformed(items)
    assert (m.reason, m.location) == ("not_gzip", f"{path}@{len(gz(A))}")
    assert [d.source["offset"] for d in docs(items)] == [0, len(gz(A)) + 60]


def test_gzip_member_that_is_not_a_record_is_garbage_at_the_member(archive: Callable[[str], Path]) -> None:
    path = archive("gzip_member_not_warc")
    items = read(path)
    (m,) = malformed(items)
    assert (m.reason, m.location) == ("garbage", f"{path}@{len(gz(A))}")
    assert len(docs(items)) == 2


def test_corrupt_gzip_member_is_reported_and_the_next_member_read(archive: Callable[[str], Path]) -> None:
    path = archive("corrupt_gzip_member")
    items = read(path)
    reasons = [m.reason for m in malformed(items)]
    assert "bad_gzip" in reasons
    assert next(m for m in malformed(items) if m.reason == "bad_gzip").location == f"{path}@{len(gz(A))}"
    assert [d.url for d in docs(items)][0] == "http://a.example/"
    assert [d.url for d in docs(items)][-1] == "http://c.example/"


def test_missing_target_uri_is_malformed(archive: Callable[[str], Path]) -> None:
    path = archive("missing_target_uri")
    items = read(path)
    assert [(m.reason, m.location) for m in malformed(items)] == [("missing_target_uri", f"{path}@0")]
    assert len(docs(items)) == 1


def test_non_http_payload_is_skipped_as_not_html(archive: Callable[[str], Path]) -> None:
    (skip,) = [i for i in read(archive("non_http_payload")) if isinstance(i, Skip)]
    assert skip.drop == Drop("read", "not_html", value="text/dns")


def test_payload_claiming_http_without_a_status_line_is_malformed(archive: Callable[[str], Path]) -> None:
    items = read(archive("claims_http_is_not"))
    assert [m.reason for m in malformed(items)] == ["bad_http_header"]


def test_html_declared_as_octet_stream_is_sniffed(archive: Callable[[str], Path]) -> None:
    items = read(archive("html_declared_octet_stream"))
    assert len(docs(items)) == 1
    assert any(isinstance(i, Event) and i.name == "html_sniffed" for i in items)


def test_html_declared_as_another_type_is_not_html(archive: Callable[[str], Path]) -> None:
    (skip,) = read(archive("html_declared_text_plain"))
    assert skip.drop == Drop("read", "not_html", value="text/plain")


def test_binary_declared_as_html_is_skipped(archive: Callable[[str], Path]) -> None:
    (skip,) = read(archive("png_declared_html"))
    assert skip.drop == Drop("read", "binary_payload", value="png")


def test_non_200_and_revisit_are_attributed_skips(archive: Callable[[str], Path]) -> None:
    (s404,) = read(archive("http_404"))
    assert s404.drop == Drop("read", "http_status", value=404)
    (rev,) = read(archive("revisit"))
    assert rev.drop.reason == "revisit" and rev.drop.detail == {"refers_to": "http://a.example/"}


def test_transfer_and_content_encodings_are_undone(archive: Callable[[str], Path]) -> None:
    expected = PAGE.decode()
    for name in ("chunked", "gzip_content", "deflate_content"):
        (doc,) = docs(read(archive(name)))
        assert doc.html == expected, name
    items = read(archive("claims_chunked_is_not"))
    assert docs(items)[0].html == expected
    assert [i.name for i in items if isinstance(i, Event)] == ["not_chunked"]
    items = read(archive("claims_gzip_is_plain"))
    assert docs(items)[0].html == expected
    assert [i.name for i in items if isinstance(i, Event)] == ["content_encoding_ignored"]
    (skip,) = read(archive("unknown_encoding"))
    assert skip.drop == Drop("read", "unsupported_encoding", value="snappy")


def test_charset_comes_from_http_then_meta(archive: Callable[[str], Path]) -> None:
    (doc,) = docs(read(archive("cp1251_declared_in_http")))
    assert "Привет мир" in (doc.html or "") and doc.source["charset"] == "cp1251"
    (doc,) = docs(read(archive("charset_in_meta")))
    assert "Καλημέρα" in (doc.html or "") and doc.source["charset"] == "iso8859-7"


def test_resource_and_wet_records_become_documents(archive: Callable[[str], Path]) -> None:
    (doc,) = docs(read(archive("resource_html")))
    assert doc.url == "file:///page.html" and doc.html == PAGE.decode()
    (wet,) = docs(read(archive("wet_conversion")))
    assert wet.html is None and wet.text == "Plain text of a page\n"


def test_broken_headers_are_malformed_and_the_next_record_read(archive: Callable[[str], Path]) -> None:
    for name in ("bad_header_no_length", "header_line_without_colon"):
        items = read(archive(name))
        assert malformed(items)[0].reason == "bad_header", name
        assert [d.url for d in docs(items)] == ["http://b.example/"], name
    items = read(archive("truncated_header"))
    assert [m.reason for m in malformed(items)] == ["truncated_record"]
    items = read(archive("leading_garbage"))
    assert [m.reason for m in malformed(items)] == ["garbage"] and len(docs(items)) == 1


def test_arc_v1_record_reads(archive: Callable[[str], Path]) -> None:
    path = archive("arc_v1")
    (doc,) = docs(read(path))
    assert doc.url == "http://a.example/" and doc.fetched_at == "2008-01-02T03:04:05Z"
    assert doc.source["format"] == "arc"
    assert doc.source["offset"] == path.read_bytes().index(b"http://a.example/ ")


def test_arc_header_length_counting_the_blank_line_is_tolerated(archive: Callable[[str], Path]) -> None:
    items = read(archive("arc_length_counts_blank_line"))
    assert [d.url for d in docs(items)] == ["http://a.example/"] and not malformed(items)


def test_arc_length_running_into_the_next_header_is_malformed_and_the_page_read(archive: Callable[[str], Path]) -> None:
    path = archive("arc_length_overrun")
    items = read(path)
    assert [(m.reason, m.location) for m in malformed(items)] == [("bad_content_length", f"{path}@0")]
    assert [d.url for d in docs(items)] == ["http://a.example/"]


def test_empty_and_missing_files(archive: Callable[[str], Path], tmp_path: Path) -> None:
    assert [i.name for i in read(archive("empty"))] == ["empty_file"]
    (m,) = read(tmp_path / "nope.warc.gz")
    assert m.reason == "unreadable_file"


def test_record_over_the_size_cap_is_skipped_without_being_held(tmp_path: Path) -> None:
    """A record declaring 48 MiB in a sparse file, read with a 1 MiB cap: skipped in bounded memory,
    and the record after it is read."""
    path = tmp_path / "big.warc"
    size = 48 * 1024 * 1024
    head = (
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://big.example/\r\n"
        f"Content-Type: application/http; msgtype=response\r\nContent-Length: {size}\r\n\r\n"
    ).encode()
    with open(path, "wb") as fh:
        fh.write(head)
        fh.seek(len(head) + size)  # a hole: no disk blocks
        fh.write(b"\r\n\r\n" + B)
    tracemalloc.start()
    try:
        items = read(path, max_record_bytes=1024 * 1024)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    skip = items[0]
    assert isinstance(skip, Skip)
    assert skip.drop == Drop("read", "too_large", value=size, limit=1024 * 1024)
    assert [d.url for d in docs(items)] == ["http://b.example/"]
    assert peak < 4 * 1024 * 1024


def test_decoded_payload_over_the_cap_is_too_large(tmp_path: Path) -> None:
    bomb = gzip.compress(b"<html>" + b" " * 4_000_000, mtime=0)
    path = tmp_path / "bomb.warc"
    path.write_bytes(record(http(body=bomb, extra="Content-Encoding: gzip\r\n")))
    (skip,) = read(path, max_record_bytes=1_000_000)
    assert skip.drop.reason == "too_large"


def test_read_record_at_returns_the_same_document(archive: Callable[[str], Path]) -> None:
    path = archive("clean_gz")
    for doc in docs(read(path)):
        again = read_record_at(str(path), doc.source["offset"])
        assert isinstance(again, Document) and (again.id, again.html) == (doc.id, doc.html)
