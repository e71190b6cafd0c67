"""Parquet input: documents equal to the JSONL reader's for the same records (all but the id, which
names the place), streamed by row group; a missing column, a wrong type or a null row is a located
Malformed and reading goes on."""

from __future__ import annotations

from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from thresher.core.document import Document, Malformed, record_id  # noqa: E402
from thresher.read.base import Event, Partition, make_ordinal  # noqa: E402
from thresher.read.config import InputConfig  # noqa: E402
from thresher.read.jsonl import parse_record  # noqa: E402
from thresher.read.parquet import read_parquet  # noqa: E402


def write(path: Path, columns: dict, row_group_size: int | None = None) -> Path:
    pq.write_table(pa.table(columns), path, row_group_size=row_group_size)
    return path


def read(path: Path, index: int = 0, start: int = 0, end: int | None = None, **kw: object) -> list:
    return list(read_parquet(Partition(index, "parquet", (str(path),), start, end), InputConfig(**kw)))


def test_rows_become_documents_with_metadata_and_row_provenance(tmp_path: Path) -> None:
    path = write(
        tmp_path / "a.parquet",
        {"url": ["http://a/", "http://b/"], "text": ["alpha", "beta"], "lang": ["en", "de"], "n": [1, 2]},
    )
    items = read(path, index=3)
    assert [d.text for d in items] == ["alpha", "beta"]
    assert items[0].id == record_id({"file": str(path), "row": 0})
    assert items[0].metadata == {"lang": "en", "n": 1}
    assert items[1].source == {"file": str(path), "row": 1}
    assert [d.ordinal for d in items] == [make_ordinal(3, 0), make_ordinal(3, 1)]


def test_documents_equal_the_jsonl_readers_for_the_same_record(tmp_path: Path) -> None:
    import json

    record = {"url": "http://a/", "html": "<p>x</p>", "title": "T", "id": "src-1", "k": "v"}
    path = write(tmp_path / "a.parquet", {k: [v] for k, v in record.items()})
    (doc,) = read(path, id_field="id")
    (expected, _) = parse_record(json.dumps(record).encode(), "x", InputConfig(id_field="id"))
    assert isinstance(expected, Document)
    # the same fields; the id names the record's place, which differs (a row, a byte offset)
    assert (doc.html, doc.text, doc.title, doc.url, doc.metadata) == (
        expected.html, expected.text, expected.title, expected.url, expected.metadata,
    )
    assert doc.metadata == {"k": "v", "source_id": "src-1"}


def test_binary_html_column_is_decoded_by_charset(tmp_path: Path) -> None:
    html = '<html><meta charset="koi8-r"><p>Привет</p></html>'.encode("koi8-r")
    path = write(tmp_path / "b.parquet", {"url": ["http://a/"], "html": pa.array([html], pa.binary())})
    (doc,) = read(path)
    assert "Привет" in doc.html and doc.source["charset"] == "koi8-r"


def test_streams_by_row_group_and_reads_a_row_group_range(tmp_path: Path) -> None:
    n = 2500
    path = write(
        tmp_path / "c.parquet", {"url": [f"http://x/{i}" for i in range(n)], "text": [str(i) for i in range(n)]}, 1000
    )
    assert [d.text for d in read(path)] == [str(i) for i in range(n)]
    middle = read(path, start=1, end=2)
    assert [d.source["row"] for d in middle] == list(range(1000, 2000))


def test_missing_content_column_is_one_located_malformed(tmp_path: Path) -> None:
    path = write(tmp_path / "d.parquet", {"url": ["http://a/"], "body": ["x"]})
    (m,) = read(path)
    assert isinstance(m, Malformed) and (m.reason, m.location) == ("missing_column", str(path))
    assert "'html'" in m.detail and "body" in m.detail


def test_missing_url_column_is_malformed_unless_urls_are_optional(tmp_path: Path) -> None:
    path = write(tmp_path / "e.parquet", {"text": ["x"]})
    (m,) = read(path)
    assert m.reason == "missing_column"
    (doc,) = read(path, require_url=False)
    assert doc.url is None and doc.text == "x"


def test_wrong_column_type_is_malformed(tmp_path: Path) -> None:
    path = write(tmp_path / "f.parquet", {"url": ["http://a/"], "text": [42]})
    (m,) = read(path)
    assert (m.reason, m.location) == ("wrong_type", str(path))
    assert "int64" in m.detail


def test_null_cells_are_located_malformed_rows_and_the_rest_read(tmp_path: Path) -> None:
    path = write(tmp_path / "g.parquet", {"url": ["http://a/", None, "http://c/"], "text": ["a", "b", None]})
    items = read(path)
    assert isinstance(items[0], Document)
    assert [(m.reason, m.location) for m in items[1:]] == [
        ("missing_url", f"{path}#row1"),
        ("missing_content", f"{path}#row2"),
    ]


def test_not_parquet_and_missing_files_are_malformed(tmp_path: Path) -> None:
    bad = tmp_path / "h.parquet"
    bad.write_bytes(b"PAR1 but not really")
    (m,) = read(bad)
    assert m.reason == "unreadable_file"
    (m,) = read(tmp_path / "nope.parquet")
    assert m.reason == "unreadable_file"


def test_empty_table_is_an_event(tmp_path: Path) -> None:
    path = write(tmp_path / "i.parquet", {"url": pa.array([], pa.string()), "text": pa.array([], pa.string())})
    (e,) = read(path)
    assert isinstance(e, Event) and e.name == "empty_file"
