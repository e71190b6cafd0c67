"""The silent-loss cases of issue 13 as regression tests: what used to be written into shards as
invalid UTF-8 or non-JSON (exit 0, verify passing) is now replaced or refused, and counted; and
verify catches a manifest that no longer tells the whole truth."""

from __future__ import annotations

import gzip
import json

import pytest
from tests.conftest import local_config

from thresher.cli import main
from thresher.run.build import build


def _crawl(tmp_path, lines):
    path = tmp_path / "crawl.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def _shard_lines(out):
    return [
        line
        for shard in sorted(out.glob("shard-*.jsonl.gz"))
        for line in gzip.decompress(shard.read_bytes()).splitlines()
    ]


def _strict(line: bytes):
    def refuse(name):
        raise ValueError(name)

    return json.loads(line.decode("utf-8"), parse_constant=refuse)


def test_lone_surrogate_in_input_is_replaced_counted_and_shards_are_strict_utf8(tmp_path):
    crawl = _crawl(
        tmp_path, [b'{"url": "https://e.example/1", "text": "bad \\ud800 here and more words", "tag": "\\udfff"}']
    )
    result = build([str(crawl)], tmp_path / "out", local_config())
    [line] = _shard_lines(tmp_path / "out")
    record = _strict(line)
    assert record["text"] == "bad \ufffd here and more words" and record["metadata"]["tag"] == "\ufffd"
    assert result.stats.counters["event/lone_surrogate"] == 1 and result.stats.reconciles()


def test_valid_surrogate_pair_escape_is_kept(tmp_path):
    crawl = _crawl(tmp_path, [b'{"url": "https://e.example/1", "text": "smile \\ud83d\\ude00"}'])
    result = build([str(crawl)], tmp_path / "out", local_config())
    assert _strict(_shard_lines(tmp_path / "out")[0])["text"] == "smile \U0001f600"
    assert result.stats.counters["event/lone_surrogate"] == 0


def test_nan_and_infinity_are_written_as_null_and_counted(tmp_path):
    crawl = _crawl(
        tmp_path, [b'{"url": "https://e.example/1", "text": "t", "score": NaN, "w": [Infinity, -Infinity, 1.5]}']
    )
    result = build([str(crawl)], tmp_path / "out", local_config())
    record = _strict(_shard_lines(tmp_path / "out")[0])
    assert record["metadata"] == {"score": None, "w": [None, None, 1.5]}
    assert result.stats.counters["event/non_finite_number"] == 1


def test_nan_refused_makes_the_record_malformed(tmp_path):
    crawl = _crawl(
        tmp_path,
        [b'{"url": "https://e.example/1", "text": "t", "score": NaN}', b'{"url": "https://e.example/2", "text": "u"}'],
    )
    result = build([str(crawl)], tmp_path / "out", local_config(input={"non_finite": "refuse"}))
    counters = result.stats.counters
    assert counters["malformed/non_finite_number"] == 1 and counters["kept"] == 1 and result.stats.reconciles()


def test_output_line_writer_never_emits_nan_or_invalid_utf8():
    from thresher.write.atomic import dumps_line

    line = dumps_line({"a": float("nan"), "b": "x\ud800", "c": "\ud83d\ude00", "d": [float("inf")]})
    assert _strict(line) == {"a": None, "b": "x\ufffd", "c": "\U0001f600", "d": [None]}


@pytest.fixture()
def dataset(tmp_path):
    lines = [json.dumps({"url": f"https://e.example/{i}", "text": f"document number {i}"}).encode() for i in range(6)]
    out = tmp_path / "out"
    build([str(_crawl(tmp_path, lines))], out, local_config(output={"shard_max_records": 2}))
    return out


def test_verify_refuses_a_manifest_path_outside_the_dataset(dataset, capsys):
    manifest = json.loads((dataset / "manifest.json").read_text())
    manifest["shards"][0]["path"] = "../../etc/hostname"
    (dataset / "manifest.json").write_text(json.dumps(manifest))
    assert main(["verify", str(dataset)]) == 1
    err = capsys.readouterr().err
    assert "../../etc/hostname: refused: the manifest names a path outside the dataset" in err


def test_verify_finds_a_deleted_manifest_entry_and_the_unlisted_shard(dataset, capsys):
    manifest = json.loads((dataset / "manifest.json").read_text())
    del manifest["shards"][1]
    (dataset / "manifest.json").write_text(json.dumps(manifest))
    assert main(["verify", str(dataset)]) == 1
    err = capsys.readouterr().err
    assert "shard-00001.jsonl.gz: a shard file the manifest does not list" in err
    assert "shard records add up to 4, the manifest says 6: an entry is missing" in err


def test_verify_records_refuses_a_shard_with_nan(dataset, capsys):
    import hashlib

    shard = dataset / "shard-00000.jsonl.gz"
    shard.write_bytes(gzip.compress(b'{"id":"a","text":NaN}\n{"id":"b","text":"x"}\n', mtime=0))
    manifest = json.loads((dataset / "manifest.json").read_text())
    manifest["shards"][0].update(bytes=shard.stat().st_size, sha256=hashlib.sha256(shard.read_bytes()).hexdigest())
    manifest["bytes"] = sum(s["bytes"] for s in manifest["shards"])
    (dataset / "manifest.json").write_text(json.dumps(manifest))
    assert main(["verify", str(dataset)]) == 0  # digests match the tampered manifest
    assert main(["verify", "--records", str(dataset)]) == 1
    assert (
        "shard-00000.jsonl.gz: record 1 is not strict UTF-8 JSON: NaN is not a JSON number" in capsys.readouterr().err
    )
