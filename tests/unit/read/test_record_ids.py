"""Record ids name the input record's place (`core.document.record_id`): the same page at two places
gets two ids in every reader, ids do not move with the partitioning, the engine or a config, a
reader's own drop gets the id a document there would have had, and `thresher explain` finds each
copy by id and all of them by URL."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from tests.conftest import article_html, local_config, write_jsonl

from thresher.cli import main
from thresher.core.document import Document, record_id
from thresher.read.base import Skip
from thresher.read.config import InputConfig
from thresher.read.sources import iter_items

# no dedup (exact, near or URL) and no quality rules: every copy of a page reaches the output
KEEP_ALL = ["--exact-level", "none", "--method", "none", "--no-url-dedup", "--quality", "none", "--engine", "local",
            "-q"]


def _warc_response(url: str, body: bytes, status: int = 200, ctype: str = "text/html") -> bytes:
    block = f"HTTP/1.1 {status} X\r\nContent-Type: {ctype}\r\n\r\n".encode() + body
    head = (
        f"WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:{len(body)}>\r\n"
        f"WARC-Date: 2024-01-02T03:04:05Z\r\nWARC-Target-URI: {url}\r\n"
        f"Content-Type: application/http; msgtype=response\r\nContent-Length: {len(block)}\r\n\r\n"
    )
    return head.encode() + block + b"\r\n\r\n"


def _docs(inputs: list[str], **input_kw: object) -> list[Document]:
    return [i for i in iter_items(inputs, InputConfig(**input_kw)) if isinstance(i, Document)]


def test_the_same_record_twice_gets_two_ids_in_every_reader(tmp_path: Path) -> None:
    page = {"url": "https://a.example/", "html": article_html(1)}
    jsonl = write_jsonl(tmp_path / "c.jsonl", [page, page])
    one, two = _docs([str(jsonl)])
    assert one.id != two.id and (one.url, one.html) == (two.url, two.html)
    assert one.id == record_id({"file": str(jsonl), "offset": 0})

    warc = tmp_path / "c.warc"
    rec = _warc_response("https://a.example/", article_html(1).encode())
    warc.write_bytes(rec + rec)
    w1, w2 = _docs([str(warc)], warc={"engine": "pure"})
    assert w1.id != w2.id and w1.id == record_id({"file": str(warc), "offset": 0})

    # one file per page: the same bytes in two files are two records
    (tmp_path / "h").mkdir()
    for name in ("a.html", "b.html"):
        (tmp_path / "h" / name).write_text(article_html(1), encoding="utf-8")
    h1, h2 = _docs([str(tmp_path / "h")])
    assert h1.id != h2.id


def test_parquet_rows_get_ids_by_row(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "c.parquet"
    pq.write_table(pa.table({"url": ["https://a.example/"] * 2, "text": ["same"] * 2, "id": ["x", "x"]}), path)
    r1, r2 = _docs([str(path)], id_field="id")
    assert r1.id != r2.id and r2.id == record_id({"file": str(path), "row": 1})
    # the caller's id is kept beside thresher's, duplicates included
    assert r1.metadata["source_id"] == r2.metadata["source_id"] == "x"


def test_ids_do_not_depend_on_partitioning(tmp_path: Path) -> None:
    records = [{"url": f"https://a.example/{i % 5}", "text": f"page {i % 5} " * 40} for i in range(400)]
    path = write_jsonl(tmp_path / "c.jsonl", records)
    whole = _docs([str(path)])
    split = _docs([str(path)], partition_bytes=4096)
    assert len({d.id for d in whole}) == 400
    assert [d.id for d in split] == [d.id for d in whole]


def test_reader_drops_get_the_id_of_their_place(tmp_path: Path) -> None:
    warc = tmp_path / "c.warc"
    first = _warc_response("https://a.example/", b"%PDF-1.4 not html", ctype="application/pdf")
    warc.write_bytes(first + _warc_response("https://b.example/", article_html(2).encode()))
    skip, doc = (
        i for i in iter_items([str(warc)], InputConfig(warc={"engine": "pure"})) if isinstance(i, (Skip, Document))
    )
    assert isinstance(skip, Skip) and isinstance(doc, Document)
    assert skip.id == record_id({"file": str(warc), "offset": 0}) != doc.id
    assert skip.to_record()["id"] == skip.id and skip.to_record()["source"] == {"file": str(warc), "offset": 0}


def test_library_pipeline_names_dicts_by_position() -> None:
    from thresher.config import RunConfig
    from thresher.pipeline import Pipeline

    page = {"url": "https://a.example/", "text": "word " * 80}
    config = RunConfig.from_dict(
        {"quality": {"preset": None}, "dedup": {"exact": {"level": None}, "near": {"method": None}}}
    )
    out = list(Pipeline(config).process([dict(page), dict(page)]))
    assert len(out) == 2 and out[0].id != out[1].id


def _shard_ids(dataset: Path) -> list[str]:
    from thresher import read_shards

    return [r["id"] for r in read_shards(dataset)]


def test_build_without_dedup_keeps_every_copy_under_its_own_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = {"url": "https://dup.example/", "html": article_html(1)}
    others = [{"url": f"https://o.example/{i}", "html": article_html(i + 2)} for i in range(4)]
    crawl = write_jsonl(tmp_path / "crawl.jsonl", [page, *others, page, page])
    out = tmp_path / "ds"
    assert main(["build", str(crawl), "-o", str(out), *KEEP_ALL]) == 0
    ids = _shard_ids(out)
    assert len(ids) == 7 and len(set(ids)) == 7
    # every id finds its own record; the URL finds all three copies
    capsys.readouterr()
    for i, doc_id in enumerate(ids):
        assert main(["explain", str(out), doc_id, "--json"]) == 0
        [ex] = json.loads(capsys.readouterr().out)
        assert ex["id"] == doc_id and ex["status"] == "kept" and ex["entry"]["row"] == i
    assert main(["explain", str(out), "https://dup.example/", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert sorted(ex["id"] for ex in found) == sorted(ids[i] for i in (0, 5, 6))

    # the same ids from the pool engine, split partitions and another quality config
    other = tmp_path / "ds2"
    config = [
        "--engine",
        "pool",
        "--workers",
        "2",
        "--quality",
        "c4",
        "--exact-level",
        "none",
        "--method",
        "none",
        "--no-url-dedup",
        "-q",
    ]
    assert main(["build", str(crawl), "-o", str(other), *config]) == 0
    assert set(_shard_ids(other)) <= set(ids)


def test_stdin_ids_do_not_depend_on_the_output_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = json.dumps({"url": "https://a.example/", "text": "word " * 80}) + "\n"
    seen = []
    for name in ("one", "two"):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO((page * 2).encode())))
        assert main(["build", "-", "-o", str(tmp_path / name), *KEEP_ALL]) == 0
        seen.append(_shard_ids(tmp_path / name))
    assert seen[0] == seen[1] and len(set(seen[0])) == 2
    assert seen[0][0] == record_id({"file": "-", "offset": 0})


def test_ids_are_the_same_on_every_engine(tmp_path: Path) -> None:
    from thresher.run.build import build

    crawl = write_jsonl(
        tmp_path / "c.jsonl", [{"url": f"https://a.example/{i % 3}", "text": "word " * 80} for i in range(30)]
    )
    ids = []
    for engine, extra in (("local", {}), ("pool", {"workers": 2})):
        config = local_config(
            exec={"engine": engine, **extra},
            dedup={"exact": {"level": None}, "near": {"method": None}, "url": {"enabled": False}},
        )
        build([str(crawl)], tmp_path / engine, config)
        ids.append(_shard_ids(tmp_path / engine))
    assert ids[0] == ids[1] and len(set(ids[0])) == 30


def test_explain_does_not_rerun_another_record_found_at_a_rewritten_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    short = {"url": "https://short.example/", "html": "<html><body><p>too short to keep</p></body></html>"}
    crawl = write_jsonl(tmp_path / "crawl.jsonl", [short])
    out = tmp_path / "ds"
    assert main(["build", str(crawl), "-o", str(out), "--engine", "local", "-q"]) == 0
    assert main(["explain", str(out), "https://short.example/", "--json"]) == 0
    [ex] = json.loads(capsys.readouterr().out)
    assert ex["status"] == "dropped" and ex["rerun"]
    # the same place now holds another page: the id would match, the URL does not
    write_jsonl(crawl, [{**short, "url": "https://other.example/"}])
    assert main(["explain", str(out), "https://short.example/", "--json"]) == 0
    [ex] = json.loads(capsys.readouterr().out)
    assert not ex["rerun"] and any("no longer where" in n for n in ex["notes"])
