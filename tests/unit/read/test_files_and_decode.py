import gzip

import pytest

from thresher.core.document import Document, Malformed
from thresher.core.errors import InputError
from thresher.read.config import InputConfig
from thresher.read.decode import decode_html
from thresher.read.sniff import sniff_format
from thresher.read.sources import expand_inputs, iter_items, plan_partitions


def test_directory_of_html_files_one_document_each(tmp_path):
    (tmp_path / "a.html").write_text("<html><body><p>alpha</p></body></html>")
    with gzip.open(tmp_path / "b.html.gz", "wt") as f:
        f.write("<html><body><p>beta</p></body></html>")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.htm").write_text("<p>gamma</p>")
    docs = list(iter_items([str(tmp_path)], InputConfig()))
    assert [type(d) for d in docs] == [Document] * 3
    assert ["alpha" in d.html for d in docs] == [True, False, False]
    assert docs[1].source["file"].endswith("b.html.gz")


def test_glob_of_html_files(tmp_path):
    for i in range(3):
        (tmp_path / f"p{i}.html").write_text(f"<p>{i}</p>")
    (tmp_path / "skip.txt").write_text("x")
    assert expand_inputs([str(tmp_path / "*.html")]) == [str(tmp_path / f"p{i}.html") for i in range(3)]
    with pytest.raises(InputError, match="matches no file"):
        expand_inputs([str(tmp_path / "*.nothing")])


def test_html_files_batched_into_partitions(tmp_path):
    for i in range(5):
        (tmp_path / f"p{i}.html").write_text(f"<p>{i}</p>")
    parts = plan_partitions([str(tmp_path)], InputConfig(html_files_per_partition=2))
    assert [len(p.paths) for p in parts] == [2, 2, 1] and {p.kind for p in parts} == {"html"}


def test_charset_declared_then_meta_then_utf8_then_fallback():
    text = "Grüße aus Köln"
    assert decode_html(text.encode("cp1252"), "windows-1252") == (text, "cp1252", False)
    meta = b'<meta charset="iso-8859-15"><p>' + "Prix: 5 €".encode("iso-8859-15")
    decoded, charset, fell_back = decode_html(meta)
    assert "5 €" in decoded and charset == "iso8859-15" and not fell_back
    assert decode_html(text.encode("utf-8")) == (text, "utf-8", False)
    decoded, charset, fell_back = decode_html(b"\xff\xfe\x00broken \x81 bytes"[3:])
    assert fell_back and charset == "cp1252"


def test_wrong_declared_charset_falls_through_to_one_that_decodes():
    data = "naïve café".encode()
    # declared as ASCII (means cp1252 on the web): decodes, but wrongly; declared as shift_jis: fails → utf-8
    decoded, charset, _ = decode_html(data, "shift_jis")
    assert decoded == "naïve café" and charset == "utf-8"


def test_unknown_binary_file_is_malformed(tmp_path):
    p = tmp_path / "blob.bin"
    p.write_bytes(bytes(range(256)) * 4)
    (m,) = list(iter_items([str(p)], InputConfig()))
    assert isinstance(m, Malformed) and m.reason == "unknown_format"


@pytest.mark.parametrize(
    ("head", "name", "fmt"),
    [
        (b'{"url"', "x", "jsonl"),
        (b"WARC/1.0\r\n", "x", "warc"),
        (b"filedesc://x", "x", "warc"),
        (b"PAR1", "x", "parquet"),
        (b"<!DOCTYPE html>", "x", "html"),
        (b"", "a.jsonl.gz", "jsonl"),
        (b"", "a.warc.gz", "warc"),
        (b"", "a.bin", None),
    ],
)
def test_sniffing(head, name, fmt):
    assert sniff_format(name, head) == fmt


def test_html_files_get_absolute_percent_encoded_file_urls_and_ids_from_the_path(tmp_path, monkeypatch):
    from thresher.core.document import record_id

    folder = tmp_path / "pages ü"
    folder.mkdir()
    (folder / "a b#1.html").write_text("<p>alpha</p>")
    monkeypatch.chdir(tmp_path)
    (doc,) = list(iter_items(["pages ü"], InputConfig()))  # a relative folder: the URL is absolute
    assert doc.url == "file://" + str(tmp_path).replace(" ", "%20") + "/pages%20%C3%BC/a%20b%231.html"
    assert doc.url == (folder / "a b#1.html").resolve().as_uri()
    assert doc.id == record_id({"file": doc.source["file"]})  # the id is the path's, as before


def test_a_build_of_html_files_gives_every_document_a_url(tmp_path):
    from tests.conftest import article_html, local_config

    from thresher.run.build import build
    from thresher.write.manifest import read_shards

    for i in range(3):
        (tmp_path / "in").mkdir(exist_ok=True)
        (tmp_path / "in" / f"p{i}.html").write_text(article_html(i), encoding="utf-8")
    build([str(tmp_path / "in")], tmp_path / "out", local_config())
    urls = sorted(r["url"] for r in read_shards(tmp_path / "out"))
    assert urls == [(tmp_path / "in" / f"p{i}.html").resolve().as_uri() for i in range(3)]
