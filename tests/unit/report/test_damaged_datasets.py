"""Every verb that reads a dataset meets a damaged one with one located line and exit 1, never a
traceback (issue 36, item 2), and `verify` checks every file a dataset holds while `explain`
refuses to answer from a damaged index or shard (item 3)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from tests.conftest import article_html, write_jsonl

from thresher.cli import main


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    folder = tmp_path_factory.mktemp("damaged")
    crawl = write_jsonl(folder / "crawl.jsonl", [{"url": f"https://d.example/{i}", "html": article_html(i)}
                                                 for i in range(40)])
    out = folder / "dataset"
    assert main(["build", str(crawl), "-o", str(out), "--engine", "local", "--quality", "none", "-q",
                 "--output-shard-max-records", "10"]) == 0
    return out


@pytest.fixture()
def dataset(pristine, tmp_path):
    copy = tmp_path / "dataset"
    shutil.copytree(pristine, copy)
    return copy


def _kept_id(dataset: Path) -> str:
    with gzip.open(dataset / "shard-00001.jsonl.gz", "rt", encoding="utf-8") as f:
        return json.loads(f.readline())["id"]


def _run(verb: str, dataset: Path, capsys, *extra: str) -> str:
    """The verb's stderr, once it exited 1 with one `thresher: error:` line."""
    args = {"compare": [verb, str(dataset), str(dataset)],
            "explain": [verb, str(dataset), _kept_id(dataset) if (dataset / "shard-00001.jsonl.gz").exists()
                        else "0" * 16, "--no-rerun"],
            "report": [verb, str(dataset), "-q", "-o", str(dataset.parent / "r.html")]}.get(verb, [verb, str(dataset)])
    capsys.readouterr()
    assert main([*args, *extra]) == 1
    err = capsys.readouterr().err
    assert err.startswith("thresher: error: ") and err.count("\n") == 1, err
    return err


VERBS = ["verify", "check", "compare", "report", "explain"]


@pytest.mark.parametrize("verb", VERBS)
@pytest.mark.parametrize("damage", ["truncated", "empty", "a list", "a shard entry without digest"])
def test_a_damaged_manifest_is_one_located_line_in_every_verb(dataset, capsys, verb, damage):
    manifest = dataset / "manifest.json"
    text = manifest.read_text()
    if damage == "truncated":
        manifest.write_text(text[: len(text) // 2])
    elif damage == "empty":
        manifest.write_text("")
    elif damage == "a list":
        manifest.write_text("[1, 2]")
    else:
        data = json.loads(text)
        del data["shards"][1]["sha256"]
        manifest.write_text(json.dumps(data))
    err = _run(verb, dataset, capsys)
    assert "manifest.json" in err


def test_report_on_a_truncated_stats_file_is_one_located_line(dataset, capsys):
    stats = dataset / "stats.json"
    stats.write_text(stats.read_text()[:100])
    assert "stats.json: not valid JSON" in _run("report", dataset, capsys)


def test_report_on_a_stats_file_with_a_non_count_is_one_located_line(dataset, capsys):
    stats = dataset / "stats.json"
    data = json.loads(stats.read_text())
    data["counters"]["seen"] = "many"
    stats.write_text(json.dumps(data))
    assert "stats.json: counter 'seen' is 'many', not a count" in _run("report", dataset, capsys)


@pytest.mark.parametrize("header", ["garbage{", "[1]", '{"version": 2, "buckets": "x", "documents": 1}'])
def test_explain_on_a_garbage_index_header_is_one_located_line(dataset, capsys, header):
    (dataset / "index" / "index.json").write_text(header)
    assert "index/index.json" in _run("explain", dataset, capsys)


def _damage_bucket(dataset: Path) -> None:
    bucket = dataset / "index" / "ids-0000.jsonl.gz"
    entries = gzip.decompress(bucket.read_bytes()).splitlines()
    bucket.write_bytes(gzip.compress(b"\n".join(entries[: len(entries) // 2]) + b"\n"))  # half the documents


def test_verify_finds_a_damaged_index_bucket(dataset, capsys):
    _damage_bucket(dataset)
    assert main(["verify", str(dataset)]) == 1
    assert "FAIL index/ids-0000.jsonl.gz: size" in capsys.readouterr().err


def test_explain_refuses_a_damaged_index_bucket_instead_of_answering_no_document(dataset, capsys):
    _damage_bucket(dataset)
    assert "ids-0000.jsonl.gz: size" in _run("explain", dataset, capsys)


@pytest.mark.parametrize("damage", ["altered", "truncated"])
def test_explain_refuses_a_kept_document_whose_shard_changed(dataset, capsys, damage):
    doc = _kept_id(dataset)
    shard = dataset / "shard-00001.jsonl.gz"
    lines = gzip.decompress(shard.read_bytes()).splitlines()
    if damage == "altered":  # the same rows in another order: the index's row now names another document
        shard.write_bytes(gzip.compress(b"\n".join(reversed(lines)) + b"\n"))
    else:
        shard.write_bytes(shard.read_bytes()[:-20])
    capsys.readouterr()
    assert main(["explain", str(dataset), doc, "--no-rerun"]) == 1
    assert "shard-00001.jsonl.gz: s" in capsys.readouterr().err  # size or sha256


def test_verify_finds_an_unlisted_vector_file_and_a_stray_index_file(dataset, capsys):
    (dataset / "shard-00002.embeddings.npy").write_bytes(b"\x93NUMPY not listed")
    (dataset / "index" / "ids-0007.jsonl.gz").write_bytes(gzip.compress(b""))
    assert main(["verify", str(dataset)]) == 1
    err = capsys.readouterr().err
    assert "FAIL shard-00002.embeddings.npy: a vector file the manifest does not list" in err
    assert "FAIL index/ids-0007.jsonl.gz: a file the index header does not count" in err


def test_verify_finds_damaged_stats_and_samples(dataset, capsys):
    (dataset / "stats.json").write_text("{")
    (dataset / "samples.jsonl.gz").write_bytes(b"\x1f\x8b garbage")
    assert main(["verify", str(dataset)]) == 1
    err = capsys.readouterr().err
    assert "FAIL stats.json: not valid JSON" in err and "FAIL samples.jsonl.gz: damaged" in err


@pytest.mark.parametrize("verb", ["check", "compare", "report", "explain"])
def test_an_unlisted_shard_is_refused_by_every_reading_verb(dataset, capsys, verb):
    shutil.copy(dataset / "shard-00000.jsonl.gz", dataset / "shard-00009.jsonl.gz")
    assert "shard-00009.jsonl.gz: a shard file the manifest does not list" in _run(verb, dataset, capsys)


def test_an_intact_dataset_passes_verify_with_its_index_and_samples(dataset, capsys):
    assert main(["verify", str(dataset)]) == 0
    assert main(["explain", str(dataset), _kept_id(dataset), "--no-rerun"]) == 0
    assert "kept: shard 1, row 0" in capsys.readouterr().out
