"""Output locations other than a plain folder: `file://` URLs, a separate `--work-dir`, fsspec URLs
(on fsspec's in-memory filesystem here; `tests/engines/test_object_storage.py` uses an S3 server),
and the messages when the work dir is a URL or fsspec is missing."""

import json
import sys

import pytest
from tests.conftest import article_html, local_config, write_jsonl

from thresher.cli import main
from thresher.config import RunConfig
from thresher.core.errors import ConfigError, DatasetError, WorkDirError
from thresher.run.build import build
from thresher.run.workdir import default_work_dir
from thresher.write.manifest import read_shards, verify_dataset


@pytest.fixture
def crawl(tmp_path):
    records = [{"url": f"https://w.example/{i}", "html": article_html(i - 1 if i % 5 == 4 else i)} for i in range(30)]
    return write_jsonl(tmp_path / "crawl.jsonl", records)


def test_file_url_output_is_a_local_folder(tmp_path, crawl, capsys):
    config = local_config(output={"shard_max_records": 10})
    local = build([str(crawl)], tmp_path / "local", config)
    result = build([str(crawl)], f"file://{tmp_path}/viaurl", config)
    assert result.output == tmp_path / "viaurl"
    assert result.manifest == local.manifest
    for shard in local.manifest["shards"]:
        assert (tmp_path / "viaurl" / shard["path"]).read_bytes() == (tmp_path / "local" / shard["path"]).read_bytes()
    assert not (tmp_path / "viaurl" / ".work").exists()
    assert verify_dataset(f"file://{tmp_path}/viaurl") == []
    assert main(["verify", f"file://{tmp_path}/viaurl"]) == 0


def test_separate_work_dir_gives_the_same_output_and_is_cleaned(tmp_path, crawl):
    config = local_config(output={"shard_max_records": 10})
    local = build([str(crawl)], tmp_path / "local", config)
    staged = tmp_path / "scratch"
    result = build(
        [str(crawl)], tmp_path / "out", local_config(output={"shard_max_records": 10}, exec={"work_dir": str(staged)})
    )
    assert result.manifest == local.manifest
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(
        [s["path"] for s in local.manifest["shards"]]
        + ["manifest.json", "stats.json", "README.md", "index", "samples.jsonl.gz"]
    )
    assert list(staged.iterdir()) == []  # its task files and staged shards are gone; the folder itself stays
    kept = build(
        [str(crawl)],
        tmp_path / "out2",
        local_config(output={"shard_max_records": 10}, exec={"work_dir": str(staged), "keep_work": True}),
    )
    assert kept.manifest == local.manifest
    assert json.loads((staged / ".work" / "output.json").read_text()) == {"output": str(tmp_path / "out2")}
    assert (staged / ".work" / "done" / "publish-00000.json").exists()


def test_work_dir_of_another_unfinished_output_is_refused(tmp_path, crawl):
    staged = tmp_path / "scratch"
    (staged / ".work").mkdir(parents=True)
    (staged / ".work" / "output.json").write_text(json.dumps({"output": "s3://elsewhere/ds"}))
    config = local_config(exec={"work_dir": str(staged)})
    with pytest.raises(WorkDirError, match="unfinished build to s3://elsewhere/ds; use another --work-dir"):
        build([str(crawl)], tmp_path / "out", config)
    assert build([str(crawl)], tmp_path / "out", config, overwrite=True).ok


def test_work_dir_url_that_cannot_be_reached_is_a_one_line_config_error(tmp_path, crawl, capsys, monkeypatch):
    pytest.importorskip("s3fs")
    import socket

    with socket.socket() as s:  # a loopback port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{port}")
    assert main(["build", str(crawl), "-o", str(tmp_path / "o"), "--work-dir", "s3://bucket/work"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("thresher: config error: work dir s3://bucket/work: ")
    assert not (tmp_path / "o").exists()  # refused before any work
    assert RunConfig.from_dict({"exec": {"work_dir": "gs://b/w"}}).exec.work_dir == "gs://b/w"
    assert RunConfig.from_dict({"exec": {"work_dir": "file:///tmp/w"}}).exec.work_dir == "file:///tmp/w"


def test_missing_fsspec_names_the_extra(tmp_path, crawl, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "fsspec", None)  # `import fsspec` raises ImportError
    # the preflight names the extra before any task runs (issue 14)
    with pytest.raises(
        ConfigError,
        match=(
            r"s3://bucket/ds(: a dataset at a URL)? needs (the remote extra|fsspec): "
            r"pip install .thresher\[remote\]."
        ),
    ):
        build([str(crawl)], "s3://bucket/ds", local_config())
    with pytest.raises(ConfigError, match=r"needs fsspec: pip install 'thresher\[remote\]'"):
        verify_dataset("gs://bucket/ds")
    assert main(["build", str(crawl), "-o", "s3://bucket/ds", "--engine", "local"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "thresher[remote]" in err


def test_default_work_dir_of_a_url_is_stable_and_distinct(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    a = default_work_dir("s3://bucket/datasets/v1")
    assert a == default_work_dir("s3://bucket/datasets/v1/")
    assert a != default_work_dir("s3://bucket/datasets/v2") and a != default_work_dir("gs://bucket/datasets/v1")
    assert a.parent == tmp_path / "thresher" / "work" and a.name.startswith("bucket-datasets-v1-")


def test_memory_url_output_builds_verifies_and_detects_damage(tmp_path, crawl, monkeypatch):
    fsspec = pytest.importorskip("fsspec")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    config = local_config(output={"shard_max_records": 10})
    local = build([str(crawl)], tmp_path / "local", config)
    url = f"memory://thresher-test/{tmp_path.name}"
    result = build([str(crawl)], url, config)
    assert result.manifest == local.manifest
    fs = fsspec.filesystem("memory")
    root = url[len("memory://"):]
    assert fs.cat_file(f"{root}/shard-00000.jsonl.gz") == (tmp_path / "local" / "shard-00000.jsonl.gz").read_bytes()
    assert not default_work_dir(url).exists()  # the cache work dir is removed after success
    assert list(read_shards(url)) == list(read_shards(tmp_path / "local"))
    assert verify_dataset(url, count_records=True) == []
    data = bytearray(fs.cat_file(f"{root}/shard-00001.jsonl.gz"))
    data[len(data) // 2] ^= 0x01
    fs.pipe_file(f"{root}/shard-00001.jsonl.gz", bytes(data))
    fs.pipe_file(f"{root}/shard-00000.jsonl.gz", fs.cat_file(f"{root}/shard-00000.jsonl.gz")[:-20])
    fs.rm_file(f"{root}/shard-00002.jsonl.gz")
    problems = [p.describe() for p in verify_dataset(url)]
    assert problems[0].startswith("shard-00000.jsonl.gz: size") and "truncated or altered" in problems[0]
    assert problems[1:] == [
        "shard-00001.jsonl.gz: sha256 differs from the manifest (altered)",
        "shard-00002.jsonl.gz: missing",
    ]
    with pytest.raises(DatasetError, match="truncated or altered"):
        list(read_shards(url))
    fs.rm(root, recursive=True)
