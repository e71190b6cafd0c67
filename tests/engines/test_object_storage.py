"""Inputs by URL: a local S3-compatible server (moto, on loopback) holds a crawl, an archive and a
folder of pages; workers read them by `s3://` URL and the dataset equals the one built from local
copies of the same files (apart from the provenance path)."""

import gzip
import shutil
import socket
import subprocess
import time

import pytest
from tests.conftest import article_html, local_config, write_jsonl

from thresher.run.build import build
from thresher.write.manifest import read_shards


@pytest.fixture(scope="module")
def s3_endpoint():
    pytest.importorskip("s3fs")
    pytest.importorskip("moto")
    server = shutil.which("moto_server")
    if server is None:
        pytest.skip("moto_server is not installed (pip install 'moto[server]')")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([server, "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.2)
    else:
        proc.kill()
        pytest.skip("moto_server did not start")
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture
def s3_env(s3_endpoint, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_endpoint)
    import boto3

    client = boto3.client("s3", endpoint_url=s3_endpoint)
    client.create_bucket(Bucket="crawl")
    return client


def test_build_reads_s3_urls_like_local_files(tmp_path, s3_env, shared_data):
    local = tmp_path / "local"
    local.mkdir()
    crawl = write_jsonl(local / "crawl.jsonl", [{"url": f"https://s3.example/{i}", "html": article_html(i)} for i in range(40)])
    gz = local / "crawl2.jsonl.gz"
    gz.write_bytes(gzip.compress(crawl.read_bytes().replace(b"s3.example", b"s3b.example")))
    pages = local / "pages"
    pages.mkdir()
    for i in range(3):
        (pages / f"p{i}.html").write_text(article_html(100 + i))
    warc = shared_data / "warc" / "resiliparse" / "warcfile.warc.gz"
    shutil.copy(warc, local / "archive.warc.gz")
    for path in [crawl, gz, local / "archive.warc.gz", *sorted(pages.iterdir())]:
        s3_env.upload_file(str(path), "crawl", str(path.relative_to(local)))

    config = local_config(exec={"engine": "pool", "workers": 2}, input={"partition_bytes": 32 * 1024})
    remote = build(
        ["s3://crawl/crawl.jsonl", "s3://crawl/crawl2.jsonl.gz", "s3://crawl/archive.warc.gz", "s3://crawl/pages/*.html"],
        tmp_path / "from-s3",
        config,
    )
    local_result = build(
        [str(crawl), str(gz), str(local / "archive.warc.gz"), str(pages / "*.html")], tmp_path / "from-disk", config
    )
    assert remote.stats.counters == local_result.stats.counters
    assert remote.stats.seen == 40 + 40 + 3 + 16 and remote.stats.kept > 40  # crawl2 repeats crawl: exact duplicates

    def comparable(record):
        record = dict(record)
        record["source"] = {k: v for k, v in record.get("source", {}).items() if k != "file"}
        return record

    remote_records = [comparable(r) for r in read_shards(tmp_path / "from-s3")]
    local_records = [comparable(r) for r in read_shards(tmp_path / "from-disk")]
    assert remote_records == local_records
    assert remote.manifest["inputs"][0] == {"path": "s3://crawl/crawl.jsonl", "bytes": crawl.stat().st_size}


def test_missing_object_is_a_located_malformed_record(tmp_path, s3_env):
    result = build(["s3://crawl/nothing-here.jsonl"], tmp_path / "out", local_config())
    assert result.stats.by_prefix("malformed") == {"unreadable_file": 1}
