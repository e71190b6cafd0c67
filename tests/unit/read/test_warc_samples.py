"""Every web-archive sample in ../shared/data/warc, read end to end.

The counts are pinned from `benchmarks/warc_census.py` (re-pin deliberately, never loosen): the
HTML-200 documents equal warcio's independent count on every file warcio reads through, and the
files that common libraries refuse are read as far as they are readable, the rest reported."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from thresher.core.document import Document, Malformed
from thresher.read.base import Event, Partition, Skip, ordinal_partition
from thresher.read.config import InputConfig
from thresher.read.warc import read_record_at, read_warc_pure
from thresher.read.warc_config import WarcConfig

# thresher's pure reader, per sample (documents, skips, malformed regions, events)
PURE_COUNTS: dict[str, dict[str, int]] = {
    "aut/example.arc.gz": {"documents": 94, "event/charset_fallback": 3, "skip/http_status": 47, "skip/not_html": 158},
    "aut/example.warc.gz": {"documents": 94, "event/charset_fallback": 3, "skip/http_status": 47, "skip/not_html": 158},
    "copycat-arc/small-sample-1213893279526_0.arc.gz": {
        "documents": 125,
        "event/charset_fallback": 9,
        "event/content_encoding_ignored": 14,
        "event/not_chunked": 33,
        "skip/http_status": 14,
        "skip/not_html": 6,
    },
    "copycat-arc/small-sample-1262850551027_8.arc.gz": {
        "documents": 8,
        "event/charset_fallback": 1,
        "event/content_encoding_ignored": 8,
        "event/not_chunked": 5,
    },
    "dolma/sample-0000.warc.gz": {"documents": 22, "skip/not_html": 2},
    "dolma/sample-0001.warc.gz": {"documents": 15, "skip/not_html": 2},
    "edge-cases/bad.arc": {"malformed/bad_header": 3, "malformed/garbage": 1, "skip/not_html": 1},
    "edge-cases/example-bad-non-chunked.warc.gz": {"documents": 1, "skip/revisit": 1},
    "edge-cases/example-bad.warc.gz.bad": {"documents": 1, "skip/http_status": 1, "skip/revisit": 1},
    "edge-cases/example-digest.warc": {},
    "edge-cases/example-iana.org-chunked.warc": {"documents": 1},
    "edge-cases/example-resource.warc.gz": {"documents": 1},
    "edge-cases/example-space-in-target-uri.warc.gz": {"skip/not_html": 1},
    "edge-cases/example-space-in-url.arc": {"malformed/truncated_record": 1},
    "edge-cases/example-trunc.warc": {"documents": 1, "event/content_truncated": 1, "malformed/garbage": 1},
    "edge-cases/example-wget-bad-target-uri.warc.gz": {"documents": 1, "skip/not_html": 2},
    "edge-cases/example-wrong-chunks.warc.gz": {"documents": 1},
    "edge-cases/example.arc": {"documents": 1},
    "edge-cases/example.arc.gz": {"documents": 1},
    "edge-cases/example.warc": {"documents": 1, "skip/revisit": 1},
    "edge-cases/example.warc.gz": {"documents": 1, "skip/revisit": 1},
    "edge-cases/post-test.warc.gz": {"skip/not_html": 3},
    "pywb/iana.warc.gz": {
        "documents": 16,
        "event/not_chunked": 25,
        "skip/http_status": 4,
        "skip/not_html": 28,
        "skip/revisit": 123,
    },
    "resiliparse/block-sized-records.warc": {"event/unknown_record_type": 3},
    "resiliparse/block-sized-records.warc.gz": {"event/unknown_record_type": 3},
    "resiliparse/block-sized-records.warc.lz4": {"malformed/unsupported_compression": 1},
    "resiliparse/clipped.warc.gz": {"malformed/truncated_record": 1},
    "resiliparse/clueweb-quirk.warc.gz": {"documents": 29, "event/content_encoding_ignored": 29},
    "resiliparse/warcfile.warc": {"documents": 16},  # its gb2312 page decodes as GB18030, as browsers read it
    "resiliparse/warcfile.warc.gz": {"documents": 16},
    "resiliparse/warcfile.warc.lz4": {"malformed/unsupported_compression": 1},
    "ukwa/BL-20140325121225068-00000-32090_opera_8443.warc.gz": {
        "documents": 32,
        "skip/http_status": 5,
        "skip/not_html": 28,
    },
    "ukwa/BL-20140325122341434-00000-32090_opera_8443.warc.gz": {
        "documents": 6,
        "skip/http_status": 1,
        "skip/not_html": 3,
        "skip/revisit": 55,
    },
    "ukwa/IAH-20080430204825-00000-blackbook-truncated.warc.gz": {"documents": 2, "skip/not_html": 6},
    "ukwa/IAH-urls-wget.warc.gz": {"documents": 2, "skip/http_status": 9, "skip/not_html": 8},
    "ukwa/flashfrozen-jwat-recompressed.warc.gz": {"documents": 2, "skip/not_html": 40},
    "whirlwind/whirlwind.warc.gz": {"documents": 1},
    "whirlwind/whirlwind.warc.wat.gz": {"event/wat_ignored": 1},
    "whirlwind/whirlwind.warc.wet.gz": {"documents": 1},
}

# warcio 1.8.1: HTTP response/resource records with status 200 and an HTML media type, on the 32
# files it reads through without an error (benchmarks/results/warc_census.json).
WARCIO_HTML_200: dict[str, int] = {
    "aut/example.arc.gz": 94,
    "aut/example.warc.gz": 94,
    "dolma/sample-0000.warc.gz": 22,
    "dolma/sample-0001.warc.gz": 15,
    "edge-cases/bad.arc": 0,
    "edge-cases/example-digest.warc": 0,
    "edge-cases/example-iana.org-chunked.warc": 1,
    "edge-cases/example-resource.warc.gz": 0,
    "edge-cases/example-space-in-target-uri.warc.gz": 0,
    "edge-cases/example-space-in-url.arc": 1,
    "edge-cases/example-trunc.warc": 1,
    "edge-cases/example-wget-bad-target-uri.warc.gz": 1,
    "edge-cases/example.arc": 1,
    "edge-cases/example.arc.gz": 1,
    "edge-cases/example.warc": 1,
    "edge-cases/example.warc.gz": 1,
    "edge-cases/post-test.warc.gz": 0,
    "pywb/iana.warc.gz": 16,
    "resiliparse/block-sized-records.warc": 0,
    "resiliparse/block-sized-records.warc.gz": 0,
    "resiliparse/clipped.warc.gz": 1,
    "resiliparse/clueweb-quirk.warc.gz": 29,
    "resiliparse/warcfile.warc": 16,
    "resiliparse/warcfile.warc.gz": 16,
    "ukwa/BL-20140325121225068-00000-32090_opera_8443.warc.gz": 32,
    "ukwa/BL-20140325122341434-00000-32090_opera_8443.warc.gz": 6,
    "ukwa/IAH-20080430204825-00000-blackbook-truncated.warc.gz": 2,
    "ukwa/IAH-urls-wget.warc.gz": 2,
    "ukwa/flashfrozen-jwat-recompressed.warc.gz": 2,
    "whirlwind/whirlwind.warc.gz": 1,
    "whirlwind/whirlwind.warc.wat.gz": 0,
    "whirlwind/whirlwind.warc.wet.gz": 0,
}
# Where the counts differ, and why: warcio returns the readable part of a truncated last record as
# a page, thresher reports it truncated; a `resource` page has no HTTP headers for warcio's census;
# WET conversions are text documents, not HTTP responses.
WARCIO_PARTIAL_PAGES = {"edge-cases/example-space-in-url.arc": 1, "resiliparse/clipped.warc.gz": 1}
NON_HTTP_DOCUMENTS = {"edge-cases/example-resource.warc.gz": 1, "whirlwind/whirlwind.warc.wet.gz": 1}


def census(items: list) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for item in items:
        if isinstance(item, Document):
            counts["documents"] += 1
        elif isinstance(item, Skip):
            counts[f"skip/{item.drop.reason}"] += 1
        elif isinstance(item, Malformed):
            counts[f"malformed/{item.reason}"] += 1
        elif isinstance(item, Event):
            counts[f"event/{item.name}"] += 1
    return dict(sorted(counts.items()))


def read_pure(path: Path, index: int = 0) -> list:
    return list(read_warc_pure(Partition(index, "warc", (str(path),)), InputConfig(), WarcConfig()))


@pytest.fixture(scope="module")
def warc_dir(shared_data: Path) -> Path:
    path = shared_data / "warc"
    if not path.is_dir():
        pytest.skip(f"web-archive samples missing: {path}")
    return path


def test_every_sample_is_pinned(warc_dir: Path) -> None:
    on_disk = sorted(
        str(p.relative_to(warc_dir))
        for p in warc_dir.rglob("*")
        if p.is_file() and p.name not in ("LICENSE", "README.md") and p.suffix != ".jsonl"
    )
    assert on_disk == sorted(PURE_COUNTS)


@pytest.mark.parametrize("name", sorted(PURE_COUNTS))
def test_sample_reads_to_pinned_counts(warc_dir: Path, name: str) -> None:
    assert census(read_pure(warc_dir / name)) == PURE_COUNTS[name]


@pytest.mark.parametrize("name", sorted(WARCIO_HTML_200))
def test_html_documents_match_warcio_census(name: str) -> None:
    documents = PURE_COUNTS[name].get("documents", 0)
    expected = WARCIO_HTML_200[name] - WARCIO_PARTIAL_PAGES.get(name, 0) + NON_HTTP_DOCUMENTS.get(name, 0)
    assert documents == expected


def test_truncated_last_records_are_malformed_where_warcio_returns_partial_pages() -> None:
    for name, pages in WARCIO_PARTIAL_PAGES.items():
        assert PURE_COUNTS[name] == {"malformed/truncated_record": pages}


def test_documents_carry_provenance_and_crawl_time(warc_dir: Path) -> None:
    items = read_pure(warc_dir / "resiliparse" / "warcfile.warc.gz", index=7)
    docs = [i for i in items if isinstance(i, Document)]
    first = docs[0]
    assert first.url and first.url.startswith("http")
    assert first.html and "<" in first.html
    assert first.fetched_at and first.fetched_at.startswith("2020-08")
    assert set(first.source) >= {"file", "offset", "record_id", "format", "charset"}
    assert first.source["format"] == "warc"
    assert first.source["record_id"].startswith("<urn:uuid:")
    assert all(ordinal_partition(d.ordinal) == 7 for d in docs)
    assert len({d.ordinal for d in docs}) == len(docs)
    assert [d.ordinal for d in docs] == sorted(d.ordinal for d in docs)


def test_arc_documents_take_their_date_from_the_arc_header(warc_dir: Path) -> None:
    docs = [i for i in read_pure(warc_dir / "edge-cases" / "example.arc") if isinstance(i, Document)]
    assert docs[0].fetched_at == "2014-02-16T05:02:21Z"
    assert docs[0].source["format"] == "arc"
    assert docs[0].source["record_id"] is None


def test_wet_conversions_become_text_documents_without_html(warc_dir: Path) -> None:
    (doc,) = [i for i in read_pure(warc_dir / "whirlwind" / "whirlwind.warc.wet.gz") if isinstance(i, Document)]
    assert doc.html is None
    assert doc.text.startswith("Escopete")
    assert doc.url == "https://an.wikipedia.org/wiki/Escopete"


def test_wat_file_is_ignored_with_a_clear_event(warc_dir: Path) -> None:
    items = read_pure(warc_dir / "whirlwind" / "whirlwind.warc.wat.gz")
    (event,) = items
    assert isinstance(event, Event) and event.name == "wat_ignored"
    assert "WARC or WET" in event.detail


def test_revisits_are_skipped_as_crawler_asserted_duplicates(warc_dir: Path) -> None:
    items = read_pure(warc_dir / "pywb" / "iana.warc.gz")
    revisits = [i for i in items if isinstance(i, Skip) and i.drop.reason == "revisit"]
    assert len(revisits) == 123
    assert all(r.drop.stage == "read" and r.url for r in revisits)


def _provenance_cases(warc_dir: Path) -> list[Path]:
    names = [n for n, c in PURE_COUNTS.items() if c.get("documents")]
    return [warc_dir / n for n in names]


def test_every_document_reads_back_from_its_recorded_offset(warc_dir: Path) -> None:
    checked = 0
    for path in _provenance_cases(warc_dir):
        for doc in (i for i in read_pure(path) if isinstance(i, Document)):
            again = read_record_at(str(path), doc.source["offset"], doc.source.get("inner_offset", 0))
            assert isinstance(again, Document), (path, doc.source)
            assert (again.id, again.url, again.html, again.text, again.source) == (
                doc.id, doc.url, doc.html, doc.text, doc.source,
            )
            checked += 1
    assert checked == sum(c.get("documents", 0) for c in PURE_COUNTS.values())


def test_gzip_member_offsets_point_at_gzip_members(warc_dir: Path) -> None:
    path = warc_dir / "aut" / "example.warc.gz"
    data = path.read_bytes()
    docs = [i for i in read_pure(path) if isinstance(i, Document)]
    assert all(data[d.source["offset"]:d.source["offset"] + 2] == b"\x1f\x8b" for d in docs)
    assert not any("inner_offset" in d.source for d in docs)


def test_file_level_gzip_locates_records_inside_the_member(warc_dir: Path) -> None:
    docs = [
        i for i in read_pure(warc_dir / "edge-cases" / "example-bad-non-chunked.warc.gz") if isinstance(i, Document)
    ]
    (doc,) = docs
    assert doc.source["offset"] == 0 and doc.source["inner_offset"] > 0
