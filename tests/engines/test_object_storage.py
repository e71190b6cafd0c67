"""Inputs and outputs by URL, against a local S3-compatible server (moto, on loopback).

Inputs: the server holds a crawl, an archive and a folder of pages; workers read them by `s3://` URL
and the dataset equals the one built from local copies of the same files (apart from the provenance
path). Outputs: a build to `s3://bucket/prefix` uploads the shards a local build writes, byte for
byte, resumes an interrupted upload from the markers in its work dir, and `verify` / `read_shards`
check the dataset on the server."""

import gzip
import json
import shutil
import socket
import subprocess
import time

import pytest
from tests.conftest import article_html, local_config, write_jsonl
from tests.engines.s3_env import s3_client

from thresher.cli import main
from thresher.core.errors import DatasetError, TaskError, WorkDirError
from thresher.run.build import build
from thresher.run.phases import DEFAULT_TASKS
from thresher.run.workdir import default_work_dir
from thresher.write.manifest import read_shards, verify_dataset


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
    proc = subprocess.Popen(
        [server, "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
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
    client = s3_client(s3_endpoint, monkeypatch)
    client.create_bucket(Bucket="crawl")
    return client


def test_build_reads_s3_urls_like_local_files(tmp_path, s3_env, shared_data):
    local = tmp_path / "local"
    local.mkdir()
    crawl = write_jsonl(
        local / "crawl.jsonl", [{"url": f"https://s3.example/{i}", "html": article_html(i)} for i in range(40)]
    )
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
        # ids name the input file as given (an s3:// URL or a local path) and the record's place in it
        record = dict(record)
        record.pop("id")
        # a page read from an .html file has the file's URL: s3://crawl/... or file://.../local/...
        url = record.get("url") or ""
        if url.startswith(("s3://crawl/", "file://")):
            record["url"] = "pages/" + url.rsplit("/pages/", 1)[-1]
        record["source"] = {k: v for k, v in record.get("source", {}).items() if k != "file"}
        record["annotations"] = {k: v for k, v in record.get("annotations", {}).items() if k != "dedup.cluster"}
        return record

    remote_records = [comparable(r) for r in read_shards(tmp_path / "from-s3")]
    local_records = [comparable(r) for r in read_shards(tmp_path / "from-disk")]
    assert remote_records == local_records
    assert remote.manifest["inputs"][0] == {"path": "s3://crawl/crawl.jsonl", "bytes": crawl.stat().st_size}


def test_missing_object_is_refused_before_the_build(tmp_path, s3_env):
    # issue 14: a missing input is an input error (exit 1) found by the preflight, not an empty dataset
    from thresher.core.errors import InputError

    with pytest.raises(InputError, match="nothing-here.jsonl: no such object"):
        build(["s3://crawl/nothing-here.jsonl"], tmp_path / "out", local_config())
    assert not (tmp_path / "out" / "manifest.json").exists()


# -- output to a URL ------------------------------------------------------------------------------


@pytest.fixture
def out_bucket(s3_env, tmp_path, monkeypatch):
    """A fresh bucket for outputs; the default work dirs of URL outputs go under tmp_path."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    name = f"out-{tmp_path.name.lower().replace('_', '-')[-40:]}".rstrip("-")
    s3_env.create_bucket(Bucket=name)
    return name


def small_crawl(tmp_path, n=40):
    records = [{"url": f"https://o.example/{i}", "html": article_html(i - 1 if i % 5 == 4 else i)} for i in range(n)]
    return write_jsonl(tmp_path / "crawl.jsonl", records, ["{broken"])


INDEX_FILES = {"index/index.json", "index/ids-0000.jsonl.gz", "index/urls-0000.jsonl.gz"}  # a small build: one bucket


def objects(client, bucket, prefix):
    listed = client.list_objects_v2(Bucket=bucket, Prefix=prefix + "/").get("Contents", [])
    return {o["Key"][len(prefix) + 1:]: client.get_object(Bucket=bucket, Key=o["Key"])["Body"].read() for o in listed}


def test_build_to_s3_uploads_the_shards_of_a_local_build(tmp_path, s3_env, out_bucket, capsys):
    src = small_crawl(tmp_path)
    config = local_config(exec={"engine": "pool", "workers": 2}, output={"shard_max_records": 8})
    local = build([str(src)], tmp_path / "local", config)
    url = f"s3://{out_bucket}/datasets/v1"
    remote = build([str(src)], url, config)
    assert remote.output == url
    assert remote.manifest == local.manifest  # same shards, sizes, sha256, config hash, inputs, totals
    assert len(remote.manifest["shards"]) == 4
    uploaded = objects(s3_env, out_bucket, "datasets/v1")
    for shard in local.manifest["shards"]:
        assert uploaded[shard["path"]] == (tmp_path / "local" / shard["path"]).read_bytes()
    assert json.loads(uploaded["manifest.json"]) == local.manifest
    assert (
        set(uploaded)
        == {s["path"] for s in local.manifest["shards"]}
        | {"manifest.json", "stats.json", "README.md", "samples.jsonl.gz"}
        | INDEX_FILES
    )
    assert json.loads(uploaded["stats.json"])["kept"] == local.stats.kept
    assert not default_work_dir(url).exists()  # the cache work dir is removed after success
    assert verify_dataset(url, count_records=True) == []
    assert list(read_shards(url)) == list(read_shards(tmp_path / "local"))
    assert main(["verify", url]) == 0
    assert f"ok: 4 shard(s), {local.manifest['records']} records match {url}/manifest.json" in capsys.readouterr().out


def test_interrupted_upload_leaves_no_manifest_and_resumes_to_the_same_manifest(
    tmp_path, s3_env, out_bucket, monkeypatch
):
    src = small_crawl(tmp_path)
    config = local_config(output={"shard_max_records": 8}, exec={"retries": 0})
    reference = build([str(src)], tmp_path / "ref", config)
    url = f"s3://{out_bucket}/ds"
    build([str(src)], url, config)  # an earlier complete build at the same URL
    assert "manifest.json" in objects(s3_env, out_bucket, "ds")
    calls = {"n": 0}
    real_publish = DEFAULT_TASKS.publish

    def crashing_publish(ctx, src_path, target, rel):
        calls["n"] += 1
        if calls["n"] == 3:
            raise ConnectionError("simulated network failure")
        return real_publish(ctx, src_path, target, rel)

    with pytest.raises(TaskError, match="task publish-00002 failed"):
        build([str(src)], url, config, overwrite=True, tasks=DEFAULT_TASKS.replace(publish=crashing_publish))
    assert "manifest.json" not in objects(s3_env, out_bucket, "ds")  # the stale manifest went first
    work = default_work_dir(url) / ".work"
    assert (work / "done" / "publish-00001.json").exists() and not (work / "done" / "publish-00002.json").exists()
    uploaded = []

    def counting_publish(ctx, src_path, target, rel):
        uploaded.append(rel)
        return real_publish(ctx, src_path, target, rel)

    resumed = build([str(src)], url, config, tasks=DEFAULT_TASKS.replace(publish=counting_publish))
    assert uploaded == ["shard-00002.jsonl.gz", "shard-00003.jsonl.gz"]  # shards 0 and 1 are not uploaded again
    assert resumed.manifest == reference.manifest
    assert verify_dataset(url) == []


def test_build_interrupted_before_the_manifest_resumes(tmp_path, s3_env, out_bucket, monkeypatch):
    from thresher.write.storage import RemoteStore

    src = small_crawl(tmp_path)
    config = local_config(output={"shard_max_records": 8})
    reference = build([str(src)], tmp_path / "ref", config)
    url = f"s3://{out_bucket}/ds"
    real_write = RemoteStore.write_bytes

    def failing_manifest(self, rel, data):
        if rel == "manifest.json":
            raise OSError("simulated: connection lost before the manifest")
        return real_write(self, rel, data)

    with monkeypatch.context() as m, pytest.raises(OSError, match="before the manifest"):
        m.setattr(RemoteStore, "write_bytes", failing_manifest)
        build([str(src)], url, config)
    present = objects(s3_env, out_bucket, "ds")
    assert "manifest.json" not in present and "shard-00003.jsonl.gz" in present and "stats.json" in present
    with pytest.raises(DatasetError, match="no manifest"):
        verify_dataset(url)
    resumed = build([str(src)], url, config)  # shards present, manifest absent: the work dir says how far it got
    assert resumed.manifest == reference.manifest
    assert json.loads(objects(s3_env, out_bucket, "ds")["manifest.json"]) == reference.manifest


def test_verify_on_s3_detects_flipped_byte_truncated_and_deleted_shards(tmp_path, s3_env, out_bucket, capsys):
    url = f"s3://{out_bucket}/ds"
    build([str(small_crawl(tmp_path))], url, local_config(output={"shard_max_records": 8}))
    assert verify_dataset(url) == []
    key = "ds/shard-00001.jsonl.gz"
    data = bytearray(s3_env.get_object(Bucket=out_bucket, Key=key)["Body"].read())
    data[len(data) // 2] ^= 0x01
    s3_env.put_object(Bucket=out_bucket, Key=key, Body=bytes(data))
    key2 = "ds/shard-00002.jsonl.gz"
    s3_env.put_object(
        Bucket=out_bucket, Key=key2, Body=s3_env.get_object(Bucket=out_bucket, Key=key2)["Body"].read()[:-20]
    )
    s3_env.delete_object(Bucket=out_bucket, Key="ds/shard-00003.jsonl.gz")
    problems = [p.describe() for p in verify_dataset(url)]
    assert problems[0] == "shard-00001.jsonl.gz: sha256 differs from the manifest (altered)"
    assert problems[1].startswith("shard-00002.jsonl.gz: size") and "truncated or altered" in problems[1]
    assert problems[2] == "shard-00003.jsonl.gz: missing"
    assert len(problems) == 3
    with pytest.raises(DatasetError, match="shard-00001.jsonl.gz: sha256 differs"):
        list(read_shards(url))
    assert main(["verify", url]) == 1
    err = capsys.readouterr().err
    assert "FAIL shard-00001.jsonl.gz: sha256" in err and "FAIL shard-00003.jsonl.gz: missing" in err


def test_foreign_or_orphaned_s3_output_is_refused(tmp_path, s3_env, out_bucket):
    src = small_crawl(tmp_path, n=5)
    s3_env.put_object(Bucket=out_bucket, Key="mine/thesis.docx", Body=b"precious")
    with pytest.raises(WorkDirError, match="not empty and not a thresher dataset"):
        build([str(src)], f"s3://{out_bucket}/mine", local_config())
    s3_env.put_object(Bucket=out_bucket, Key="half/shard-00000.jsonl.gz", Body=b"left by a build elsewhere")
    with pytest.raises(WorkDirError, match="holds shards but no manifest"):
        build([str(src)], f"s3://{out_bucket}/half", local_config())
    s3_env.put_object(Bucket=out_bucket, Key="afile", Body=b"x")
    with pytest.raises(WorkDirError, match="exists and is not a directory"):
        build([str(src)], f"s3://{out_bucket}/afile", local_config())
    assert objects(s3_env, out_bucket, "mine") == {"thesis.docx": b"precious"}


def test_rebuild_with_fewer_shards_removes_stale_ones_and_rejects_go_to_s3(tmp_path, s3_env, out_bucket):
    src = small_crawl(tmp_path)
    url = f"s3://{out_bucket}/ds"
    build([str(src)], url, local_config(output={"shard_max_records": 8}))
    result = build(
        [str(src)],
        url,
        local_config(output={"shard_max_records": 100}),
        rejects=f"s3://{out_bucket}/rej",
        overwrite=True,
    )
    assert sorted(k for k in objects(s3_env, out_bucket, "ds") if k.startswith("shard-")) == ["shard-00000.jsonl.gz"]
    assert verify_dataset(url) == []
    rejects = objects(s3_env, out_bucket, "rej")
    dropped = [json.loads(line) for line in gzip.decompress(rejects["rejects.jsonl.gz"]).splitlines()]
    assert len(dropped) == result.stats.dropped == 8
    malformed = [json.loads(line) for line in gzip.decompress(rejects["malformed.jsonl.gz"]).splitlines()]
    assert len(malformed) == 1


def test_cli_builds_to_s3_with_a_work_dir_and_verifies(tmp_path, s3_env, out_bucket, capsys):
    src = small_crawl(tmp_path, n=20)
    url = f"s3://{out_bucket}/cli"
    args = ["build", str(src), "-o", url, "--engine", "local", "--quality", "none", "--work-dir", str(tmp_path / "w")]
    assert main(args) == 0
    assert f"wrote 16 documents in 1 shard(s) to {url}" in capsys.readouterr().err
    assert list((tmp_path / "w").iterdir()) == []
    assert main(["verify", url, "--records"]) == 0
    assert "ok: 1 shard(s), 16 records" in capsys.readouterr().out
