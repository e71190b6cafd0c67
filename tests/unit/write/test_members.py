"""Shards of gzip members (`thresher.write.members`): members are fixed runs of records counted from
the shard's start, so the bytes do not depend on where partitions cut them or who compressed them;
the shard reads as one stream."""

import gzip
import io
import json
import shutil
import subprocess
import zlib
from pathlib import Path

import pytest
from tests.conftest import article_html, local_config, write_jsonl

from thresher.core.errors import TaskError
from thresher.read.sources import plan_partitions
from thresher.run.build import build
from thresher.run.phases import DEFAULT_TASKS
from thresher.write.jsonl import MEMBER_RECORDS, JsonlGzFormat
from thresher.write.members import MemberWriter, gzip_member, join_members, owns


def members_of(data: bytes) -> list[bytes]:
    """The decompressed payload of each gzip member of `data`, in order."""
    out = []
    while data:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        out.append(d.decompress(data))
        assert d.eof, "a truncated member"
        data = d.unused_data
    return out


@pytest.mark.parametrize("level", [1, 3, 6, 9])
def test_a_member_is_the_bytes_gzipfile_writes_for_the_same_data(level):
    data = b"".join(b'{"id":"%d","text":"some words and more words"}\n' % i for i in range(3000))
    expected = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=expected, compresslevel=level, mtime=0) as gz:
        for i in range(0, len(data), 4096):
            gz.write(data[i:i + 4096])
    assert gzip_member(data, level) == expected.getvalue()
    assert gzip.decompress(gzip_member(b"", level)) == b""


def lines(n: int) -> list[bytes]:
    return [b'{"id":"doc-%05d","text":"%s"}\n' % (i, b"x" * (i % 13)) for i in range(n)]


def write_pieces(tmp: Path, shard_lines: list[bytes], cuts: list[int], per_member: int,
                 compress) -> list[tuple[Path, int, int, int]]:
    """The shard's records split at `cuts` (indices in the shard) into partitions, each written as
    its write task writes it: the records of a member begun earlier skipped, an open member completed
    from the next partitions' records. Returns (path, first member, members, records) per piece."""
    bounds = [0, *cuts, len(shard_lines)]
    pieces = []
    for k, (a, b) in enumerate(zip(bounds, bounds[1:], strict=False)):
        owned = [i for i in range(a, b) if owns(i, a, per_member)]
        if not owned:
            continue
        path = tmp / f"piece-{k}"
        with open(path, "wb") as out:
            writer = MemberWriter(out, per_member, len(shard_lines), compress)
            for i in owned:
                writer.add(shard_lines[i], i)
            i = b
            while writer.open and i < len(shard_lines):  # read ahead into the next partitions
                writer.add(shard_lines[i], i)
                i += 1
            if writer.open:
                writer.finish()
        pieces.append((path, writer.first_member, writer.members, writer.records))
    return pieces


@pytest.mark.parametrize("cuts", [
    [],  # one task wrote the shard
    [4, 8],  # cuts on member boundaries
    [3],  # a member cut in two
    [1, 2, 3, 5, 6, 7],  # partitions inside one member, several in a row
    [5, 17, 18, 29],  # a mix, and a partition ending the shard mid-member
])
def test_joined_pieces_are_the_shard_written_in_one_pass_wherever_partitions_cut(tmp_path, cuts):
    fmt = JsonlGzFormat(6)
    per_member = 4
    shard_lines = lines(30)  # 7 whole members and one of 2
    plain = tmp_path / "plain.jsonl"
    plain.write_bytes(b"".join(shard_lines))
    expected = io.BytesIO()
    fmt.member_records = per_member  # the instance's own: the class keeps MEMBER_RECORDS
    assert fmt.write_shard([plain], expected) == 30
    pieces = write_pieces(tmp_path, shard_lines, cuts, per_member, fmt.compress_member)
    assert sum(records for *_, records in pieces) == 30
    joined = io.BytesIO()
    join_members([(path, first, members) for path, first, members, _ in pieces], joined)
    assert joined.getvalue() == expected.getvalue()
    assert members_of(joined.getvalue()) == [b"".join(shard_lines[i:i + 4]) for i in range(0, 30, 4)]
    assert gzip.decompress(joined.getvalue()) == b"".join(shard_lines)


def test_a_write_task_compresses_the_members_it_begins_and_skips_the_one_begun_before(tmp_path):
    fmt = JsonlGzFormat(6)
    shard_lines = lines(20)
    pieces = write_pieces(tmp_path, shard_lines, [10, 11, 13], 4, fmt.compress_member)
    # partitions 0-9: members 0, 1, 2 (10-11 read ahead); 10: none; 11-12: member 3 (13-15 read
    # ahead); 13-19: member 4 (16-19)
    assert [(first, members, records) for _, first, members, records in pieces] == [(0, 3, 12), (3, 1, 4),
                                                                                     (4, 1, 4)]
    assert [owns(i, 10, 4) for i in (10, 11, 12)] == [False, False, True]


def test_a_member_writer_refuses_a_start_inside_a_member_or_a_gap(tmp_path):
    writer = MemberWriter(io.BytesIO(), 4, 100, JsonlGzFormat(6).compress_member)
    with pytest.raises(ValueError, match="inside a member"):
        writer.add(b"{}\n", 2)
    writer.add(b"{}\n", 4)
    with pytest.raises(ValueError, match="record 6 where record 5 comes next"):
        writer.add(b"{}\n", 6)


def test_join_refuses_pieces_that_do_not_follow_each_other(tmp_path):
    fmt = JsonlGzFormat(6)
    pieces = write_pieces(tmp_path, lines(12), [4, 8], 4, fmt.compress_member)
    assert [(first, members) for _, first, members, _ in pieces] == [(0, 1), (1, 1), (2, 1)]
    with pytest.raises(ValueError, match="holds members from 1 on where member 0 comes next"):
        join_members([(path, first, members) for path, first, members, _ in pieces[1:]], io.BytesIO())


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    """Enough kept documents for several members of the default size, in several partitions."""
    n = MEMBER_RECORDS * 2 + 100
    records = [{"url": f"https://m.example/{i}", "html": article_html(i, words=60)} for i in range(n)]
    return write_jsonl(tmp_path_factory.mktemp("members") / "crawl.jsonl", records)


def shard_bytes(out: Path) -> list[bytes]:
    manifest = json.loads((out / "manifest.json").read_text())
    return [(out / s["path"]).read_bytes() for s in manifest["shards"]]


def test_shard_bytes_do_not_depend_on_partitioning_or_workers(tmp_path, crawl):
    size = crawl.stat().st_size
    configs = {
        "one partition": local_config(input={"partition_bytes": size + 1}),
        "7 partitions": local_config(input={"partition_bytes": size // 7 + 1}),
        "3 partitions, pool of 2": local_config(input={"partition_bytes": size // 3 + 1},
                                                exec={"engine": "pool", "workers": 2}),
    }
    assert [len(plan_partitions([str(crawl)], c.input)) for c in configs.values()] == [1, 7, 3]
    outs = dict(zip(configs, "abc", strict=True))
    built = {name: build([str(crawl)], tmp_path / outs[name], c) for name, c in configs.items()}
    assert built["one partition"].manifest["shards"][0]["records"] == MEMBER_RECORDS * 2 + 100
    assert shard_bytes(tmp_path / "a") == shard_bytes(tmp_path / "b") == shard_bytes(tmp_path / "c")
    assert built["one partition"].manifest["shards"] == built["7 partitions"].manifest["shards"]
    assert built["one partition"].manifest["shards"] == built["3 partitions, pool of 2"].manifest["shards"]
    (data,) = shard_bytes(tmp_path / "b")
    assert [m.count(b"\n") for m in members_of(data)] == [MEMBER_RECORDS, MEMBER_RECORDS, 100]


@pytest.fixture(scope="module")
def several_members(crawl, tmp_path_factory):
    out = tmp_path_factory.mktemp("several") / "out"
    result = build([str(crawl)], out, local_config(input={"partition_bytes": crawl.stat().st_size // 5}))
    path = out / result.manifest["shards"][0]["path"]
    assert len(members_of(path.read_bytes())) == 3
    return path


EXPECTED_URLS = [f"https://m.example/{i}" for i in range(MEMBER_RECORDS * 2 + 100)]


def test_a_shard_of_several_members_reads_as_one_stream_with_gzip(several_members):
    with gzip.open(several_members, "rt", encoding="utf-8") as f:
        assert [json.loads(line)["url"] for line in f] == EXPECTED_URLS


def test_a_shard_of_several_members_reads_as_one_stream_with_zcat(several_members):
    if shutil.which("zcat") is None:
        pytest.skip("no zcat on this machine")
    text = subprocess.run(["zcat", str(several_members)], check=True, capture_output=True).stdout
    assert [json.loads(line)["url"] for line in text.splitlines()] == EXPECTED_URLS


def test_a_shard_of_several_members_reads_as_one_stream_with_datasets(several_members, tmp_path):
    datasets = pytest.importorskip("datasets")
    loaded = datasets.load_dataset("json", data_files=str(several_members), split="train",
                                   cache_dir=str(tmp_path / "hf"))
    assert loaded["url"] == EXPECTED_URLS


def test_a_shard_of_several_members_reads_as_one_stream_with_pandas_and_duckdb(several_members):
    pd = pytest.importorskip("pandas")
    assert pd.read_json(several_members, lines=True)["url"].tolist() == EXPECTED_URLS
    duckdb = pytest.importorskip("duckdb")
    rows = duckdb.sql(f"SELECT url FROM read_json_auto('{several_members}')").fetchall()
    assert [url for (url,) in rows] == EXPECTED_URLS


def test_a_build_resumed_after_a_crash_in_assemble_gives_the_same_shards(tmp_path, crawl):
    config = local_config(input={"partition_bytes": crawl.stat().st_size // 4}, exec={"retries": 0},
                          output={"shard_max_records": MEMBER_RECORDS + 50})
    reference = build([str(crawl)], tmp_path / "ref", config)
    real_assemble = DEFAULT_TASKS.assemble

    def crashing_assemble(ctx, shard, total, pieces):
        if shard == 1:
            raise RuntimeError("simulated crash")
        return real_assemble(ctx, shard, total, pieces)

    out = tmp_path / "out"
    with pytest.raises(TaskError, match="simulated crash"):
        build([str(crawl)], out, config, tasks=DEFAULT_TASKS.replace(assemble=crashing_assemble))
    resumed = build([str(crawl)], out, config)
    assert resumed.manifest["shards"] == reference.manifest["shards"]
    assert [s["records"] for s in resumed.manifest["shards"]] == [MEMBER_RECORDS + 50] * 2
    assert shard_bytes(out) == shard_bytes(tmp_path / "ref")
    assert [len(members_of(data)) for data in shard_bytes(out)] == [2, 2]


def test_the_assemble_task_only_copies_members_the_write_tasks_compressed(tmp_path, crawl, monkeypatch):
    config = local_config(input={"partition_bytes": crawl.stat().st_size // 5})
    reference = build([str(crawl)], tmp_path / "ref", config)
    real_assemble = DEFAULT_TASKS.assemble

    def copying_only(ctx, shard, total, pieces):
        with monkeypatch.context() as patched:
            patched.setattr(JsonlGzFormat, "compress_member",
                            lambda self, data: pytest.fail("the assemble task compressed a member"))
            return real_assemble(ctx, shard, total, pieces)

    result = build([str(crawl)], tmp_path / "out", config, tasks=DEFAULT_TASKS.replace(assemble=copying_only))
    assert result.manifest["shards"] == reference.manifest["shards"]
    assert shard_bytes(tmp_path / "out") == shard_bytes(tmp_path / "ref")
